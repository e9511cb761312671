import Foundation
import Testing
@testable import Crypto

@Suite struct P256Tests {
    let message = Array("a message to sign".utf8)

    @Test func signAndVerifyRawAndDER() throws {
        let key = try P256.Signing.PrivateKey()
        let signature = try key.signature(for: message)
        #expect(signature.rawRepresentation.count == 64)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        let fromDER = try P256.Signing.ECDSASignature(derRepresentation: signature.derRepresentation)
        #expect(fromDER == signature)
        let fromRaw = try P256.Signing.ECDSASignature(rawRepresentation: signature.rawRepresentation)
        #expect(key.publicKey.isValidSignature(fromRaw, for: message))
    }

    @Test func tamperedSignatureAndWrongKeyFail() throws {
        let key = try P256.Signing.PrivateKey()
        var raw = try key.signature(for: message).rawRepresentation
        raw[10] ^= 0x01
        #expect(!key.publicKey.isValidSignature(try .init(rawRepresentation: raw), for: message))
        let other = try P256.Signing.PrivateKey()
        #expect(!other.publicKey.isValidSignature(try key.signature(for: message), for: message))
        #expect(!key.publicKey.isValidSignature(try key.signature(for: message), for: message + [0]))
    }

    // RFC 7515 Appendix A.3: verify the published ES256 signature.
    @Test func rfc7515AppendixA3Verifies() throws {
        let key = try P256.Signing.PublicKey(rawCoordinates: b64(RFC7515.ecX), y: b64(RFC7515.ecY))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: b64(RFC7515.es256Signature))
        #expect(key.isValidSignature(signature, for: Array(RFC7515.es256SigningInput.utf8)))
        let priv = try P256.Signing.PrivateKey(rawRepresentation: b64(RFC7515.ecD))
        #expect(try priv.publicKey.rawCoordinates.x == b64(RFC7515.ecX))
        #expect(try priv.publicKey.rawCoordinates.y == b64(RFC7515.ecY))
        let again = try P256.Signing.PrivateKey(rawRepresentation: b64(RFC7515.ecD), x: b64(RFC7515.ecX), y: b64(RFC7515.ecY))
        #expect(try again.rawRepresentation == b64(RFC7515.ecD))
    }

    @Test func keyFormatsRoundTrip() throws {
        let key = try P256.Signing.PrivateKey()
        let fromDER = try P256.Signing.PrivateKey(derRepresentation: key.derRepresentation)
        let fromPEM = try P256.Signing.PrivateKey(pemRepresentation: key.pemRepresentation)
        let fromRaw = try P256.Signing.PrivateKey(rawRepresentation: key.rawRepresentation)
        #expect(try key.pemRepresentation.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        for copy in [fromDER, fromPEM, fromRaw] {
            #expect(try copy.publicKey.x963Representation == key.publicKey.x963Representation)
        }
        let pub = key.publicKey
        let x963 = try pub.x963Representation
        #expect(x963.count == 65 && x963[0] == 4)
        let copies = [
            try P256.Signing.PublicKey(x963Representation: x963),
            try P256.Signing.PublicKey(derRepresentation: pub.derRepresentation),
            try P256.Signing.PublicKey(pemRepresentation: pub.pemRepresentation),
            try P256.Signing.PublicKey(rawCoordinates: pub.rawCoordinates.x, y: pub.rawCoordinates.y),
        ]
        let signature = try key.signature(for: message)
        for copy in copies { #expect(copy.isValidSignature(signature, for: message)) }
    }

    @Test func sec1PrivateKeyAccepted() throws {
        let key = try P256.Signing.PrivateKey(pemRepresentation: Fixtures.p256SEC1PEM)
        #expect(try key.publicKey.pemRepresentation == Fixtures.p256PublicPEM + "\n")
        let fromPKCS8 = try P256.Signing.PrivateKey(derRepresentation: key.derRepresentation)
        #expect(try fromPKCS8.rawRepresentation == key.rawRepresentation)
    }

    @Test func ecParametersBlockSkipped() throws {
        // `openssl ecparam -genkey` without -noout writes an EC PARAMETERS block first.
        let withParameters = "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n" + Fixtures.p256SEC1PEM
        #expect(try P256.Signing.PrivateKey(pemRepresentation: withParameters).publicKey.pemRepresentation == Fixtures.p256PublicPEM + "\n")
    }

    @Test func wrongCurveRefused() {
        #expect(throws: CryptoError.wrongCurve) { try P256.Signing.PrivateKey(pemRepresentation: Fixtures.p384PrivatePEM) }
        #expect(throws: CryptoError.wrongCurve) { try P256.Signing.PublicKey(pemRepresentation: Fixtures.p384PublicPEM) }
    }

    @Test func otherKeyTypeRefused() throws {
        let ed = try Curve25519.Signing.PrivateKey()
        #expect(throws: CryptoError.unsupportedKeyType) { try P256.Signing.PublicKey(derRepresentation: ed.publicKey.derRepresentation) }
    }

    @Test func malformedInputsRefused() throws {
        #expect(throws: CryptoError.invalidKeyEncoding) { try P256.Signing.PublicKey(derRepresentation: [0x30, 0x03, 0x02, 0x01, 0x01]) }
        #expect(throws: CryptoError.invalidKeyEncoding) { try P256.Signing.PrivateKey(derRepresentation: [UInt8](repeating: 7, count: 40)) }
        #expect(throws: CryptoError.invalidPEM) { try P256.Signing.PublicKey(pemRepresentation: "not a pem") }
        #expect(throws: CryptoError.invalidPEM) { try P256.Signing.PrivateKey(pemRepresentation: Fixtures.p384PublicPEM) }
        // A point that is not on the curve.
        var point = try P256.Signing.PrivateKey().publicKey.x963Representation
        point[64] ^= 1
        #expect(throws: CryptoError.invalidKeyEncoding) { try P256.Signing.PublicKey(x963Representation: point) }
        #expect(throws: CryptoError.invalidKeyEncoding) { try P256.Signing.PublicKey(x963Representation: point.dropLast()) }
        #expect(throws: CryptoError.invalidKeyEncoding) { try P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 0, count: 32)) }
        // Trailing bytes after a valid SPKI.
        let der = try P256.Signing.PrivateKey().publicKey.derRepresentation
        #expect(throws: CryptoError.invalidKeyEncoding) { try P256.Signing.PublicKey(derRepresentation: der + [0]) }
    }

    @Test func malformedSignaturesRefused() throws {
        #expect(throws: CryptoError.invalidSignatureEncoding) { try P256.Signing.ECDSASignature(rawRepresentation: [UInt8](repeating: 1, count: 63)) }
        #expect(throws: CryptoError.invalidSignatureEncoding) { try P256.Signing.ECDSASignature(derRepresentation: [0x30, 0x00, 0x01]) }
        let der = try P256.Signing.PrivateKey().signature(for: message).derRepresentation
        #expect(throws: CryptoError.invalidSignatureEncoding) { try P256.Signing.ECDSASignature(derRepresentation: der + [0]) }
        // Non-minimal INTEGER (extra leading zero) is not strict DER.
        let sloppy: [UInt8] = [0x30, 0x07, 0x02, 0x02, 0x00, 0x01, 0x02, 0x01, 0x01]
        #expect(throws: CryptoError.invalidSignatureEncoding) { try P256.Signing.ECDSASignature(derRepresentation: sloppy) }
    }
}

@Suite struct RSATests {
    let message = Array("a message to sign".utf8)

    static func rfcPrivateKey() throws -> RSA.Signing.PrivateKey {
        try RSA.Signing.PrivateKey(components: .init(
            n: b64(RFC7515.rsaN), e: b64(RFC7515.rsaE), d: b64(RFC7515.rsaD), p: b64(RFC7515.rsaP),
            q: b64(RFC7515.rsaQ), dp: b64(RFC7515.rsaDP), dq: b64(RFC7515.rsaDQ), qi: b64(RFC7515.rsaQI)))
    }

    // RFC 7515 Appendix A.2: verify the published RS256 signature, and reproduce it
    // exactly (PKCS#1 v1.5 is deterministic).
    @Test func rfc7515AppendixA2() throws {
        let pub = try RSA.Signing.PublicKey(n: b64(RFC7515.rsaN), e: b64(RFC7515.rsaE))
        #expect(pub.keySizeInBits == 2048)
        let input = Array(RFC7515.rs256SigningInput.utf8)
        #expect(pub.isValidSignature(.init(rawRepresentation: b64(RFC7515.rs256Signature)), for: input))
        let key = try Self.rfcPrivateKey()
        #expect(Base64URL.encode(try key.signature(for: input).rawRepresentation) == RFC7515.rs256Signature)
        #expect(try key.publicKey.modulus == b64(RFC7515.rsaN))
        #expect(try key.publicKey.exponent == [1, 0, 1])
        #expect(try key.components.d == b64(RFC7515.rsaD))
    }

    @Test(arguments: [RSA.Signing.Padding.pkcs1v1_5, .pss], [RSA.Signing.Digest.sha256, .sha384, .sha512])
    func signAndVerify(padding: RSA.Signing.Padding, digest: RSA.Signing.Digest) throws {
        let key = try Self.rfcPrivateKey()
        let signature = try key.signature(for: message, padding: padding, digest: digest)
        #expect(key.publicKey.isValidSignature(signature, for: message, padding: padding, digest: digest))
        let otherPadding: RSA.Signing.Padding = padding == .pss ? .pkcs1v1_5 : .pss
        #expect(!key.publicKey.isValidSignature(signature, for: message, padding: otherPadding, digest: digest))
        var tampered = signature.rawRepresentation
        tampered[5] ^= 0x80
        #expect(!key.publicKey.isValidSignature(.init(rawRepresentation: tampered), for: message, padding: padding, digest: digest))
    }

    @Test func pssIsRandomisedAndWrongKeyFails() throws {
        let key = try Self.rfcPrivateKey()
        let a = try key.signature(for: message, padding: .pss)
        let b = try key.signature(for: message, padding: .pss)
        #expect(a != b)
        let other = try RSA.Signing.PrivateKey(keySize: 2048)
        #expect(!other.publicKey.isValidSignature(a, for: message, padding: .pss))
    }

    @Test func keyFormatsRoundTrip() throws {
        let key = try Self.rfcPrivateKey()
        let copies = [
            try RSA.Signing.PrivateKey(derRepresentation: key.derRepresentation),
            try RSA.Signing.PrivateKey(pemRepresentation: key.pemRepresentation),
            try RSA.Signing.PrivateKey(components: key.components),
        ]
        let signature = try key.signature(for: message)
        for copy in copies { #expect(try copy.signature(for: message) == signature) }
        let pub = key.publicKey
        let pubs = [
            try RSA.Signing.PublicKey(derRepresentation: pub.derRepresentation),
            try RSA.Signing.PublicKey(pemRepresentation: pub.pemRepresentation),
            try RSA.Signing.PublicKey(n: pub.modulus, e: pub.exponent),
        ]
        for copy in pubs { #expect(copy.isValidSignature(signature, for: message)) }
    }

    @Test func pkcs1FormsAccepted() throws {
        let key = try RSA.Signing.PrivateKey(pemRepresentation: Fixtures.rsaPKCS1PrivatePEM)
        let fromPKCS1 = try RSA.Signing.PublicKey(pemRepresentation: Fixtures.rsaPKCS1PublicPEM)
        let fromSPKI = try RSA.Signing.PublicKey(pemRepresentation: Fixtures.rsaSPKIPublicPEM)
        #expect(try fromPKCS1.modulus == fromSPKI.modulus && key.publicKey.modulus == fromSPKI.modulus)
        #expect(try key.publicKey.pemRepresentation == Fixtures.rsaSPKIPublicPEM + "\n")
        let signature = try key.signature(for: message, padding: .pss)
        #expect(fromPKCS1.isValidSignature(signature, for: message, padding: .pss))
        // The PKCS#1 public key as bare DER is accepted by the DER initialiser too.
        let der = try PEMDocument(parsing: Fixtures.rsaPKCS1PublicPEM).der
        #expect(try RSA.Signing.PublicKey(derRepresentation: der).modulus == fromSPKI.modulus)
        #expect(throws: CryptoError.invalidPEM) { try RSA.Signing.PublicKey(pemRepresentation: Fixtures.rsaPKCS1PrivatePEM) }
    }

    @Test func smallKeysRefused() throws {
        #expect(throws: CryptoError.keyTooSmall) { try RSA.Signing.PublicKey(pemRepresentation: Fixtures.rsa1024PublicPEM) }
        #expect(throws: CryptoError.keyTooSmall) { try RSA.Signing.PrivateKey(keySize: 1024) }
        let n = b64(RFC7515.rsaN)
        #expect(throws: CryptoError.keyTooSmall) { try RSA.Signing.PublicKey(n: n.prefix(128), e: [1, 0, 1]) }
    }

    /// With e = 1 a "signature" is the padded digest itself, which anyone can write: a key like
    /// that (a passkey's, a client's, a DPoP proof's) would let anyone sign for it. Even
    /// exponents are not RSA keys either (RFC 8017 §3.1), whichever encoding brings them.
    @Test(arguments: [[UInt8]([1]), [2], [0, 1], [1, 0, 0], [1, 0, 0, 0, 0, 0, 0, 0]])
    func exponentsThatAreNotOddAndAtLeastThreeAreRefused(e: [UInt8]) throws {
        let n = b64(RFC7515.rsaN)
        #expect(throws: CryptoError.invalidKeyEncoding) { try RSA.Signing.PublicKey(n: n, e: e) }
        // The same key as PKCS#1 DER: SEQUENCE { INTEGER n, INTEGER e }.
        let modulus = [0] + n.drop { $0 == 0 }
        let exponent = Array(e.drop { $0 == 0 })
        let body = [0x02, 0x82, UInt8(modulus.count >> 8), UInt8(modulus.count & 0xFF)] + modulus
            + [0x02, UInt8(exponent.count)] + exponent
        let der = [0x30, 0x82, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
        #expect(throws: CryptoError.invalidKeyEncoding) { try RSA.Signing.PublicKey(derRepresentation: der) }
        // The DER is well formed: with e = 65537 it is the RFC's key.
        let good = [0x02, 0x82, UInt8(modulus.count >> 8), UInt8(modulus.count & 0xFF)] + modulus + [0x02, 3, 1, 0, 1]
        let goodDER = [0x30, 0x82, UInt8(good.count >> 8), UInt8(good.count & 0xFF)] + good
        #expect(try RSA.Signing.PublicKey(derRepresentation: goodDER).modulus == Array(n.drop { $0 == 0 }))
    }

    @Test func wrongTypesAndMalformedRefused() throws {
        #expect(throws: CryptoError.unsupportedKeyType) { try RSA.Signing.PublicKey(pemRepresentation: Fixtures.p384PublicPEM) }
        #expect(throws: CryptoError.unsupportedKeyType) { try RSA.Signing.PrivateKey(pemRepresentation: Fixtures.p384PrivatePEM) }
        #expect(throws: CryptoError.invalidKeyEncoding) { try RSA.Signing.PublicKey(derRepresentation: [1, 2, 3]) }
        #expect(throws: CryptoError.invalidKeyEncoding) { try RSA.Signing.PublicKey(n: [UInt8](), e: [1, 0, 1]) }
        var components = try Self.rfcPrivateKey().components
        components.d[3] ^= 1
        #expect(throws: CryptoError.invalidKeyEncoding) { try RSA.Signing.PrivateKey(components: components) }
    }
}

@Suite struct Ed25519Tests {
    // RFC 8037 Appendix A.4: the signature is reproduced exactly (Ed25519 is deterministic)
    // and verifies with the public key of Appendix A.2.
    @Test func rfc8037AppendixA4() throws {
        let key = try Curve25519.Signing.PrivateKey(rawRepresentation: b64(RFC8037.d))
        #expect(try key.publicKey.rawRepresentation == b64(RFC8037.x))
        let input = Array(RFC8037.signingInput.utf8)
        #expect(Base64URL.encode(try key.signature(for: input)) == RFC8037.signature)
        let pub = try Curve25519.Signing.PublicKey(rawRepresentation: b64(RFC8037.x))
        #expect(pub.isValidSignature(b64(RFC8037.signature), for: input))
        var tampered = b64(RFC8037.signature)
        tampered[0] ^= 1
        #expect(!pub.isValidSignature(tampered, for: input))
        #expect(!pub.isValidSignature(tampered.dropLast(), for: input))
    }

    @Test func keyFormatsRoundTrip() throws {
        let key = try Curve25519.Signing.PrivateKey()
        let message = Array("hello".utf8)
        let signature = try key.signature(for: message)
        let copies = [
            try Curve25519.Signing.PrivateKey(rawRepresentation: key.rawRepresentation),
            try Curve25519.Signing.PrivateKey(derRepresentation: key.derRepresentation),
            try Curve25519.Signing.PrivateKey(pemRepresentation: key.pemRepresentation),
        ]
        for copy in copies { #expect(try copy.signature(for: message) == signature) }
        let pub = key.publicKey
        let pubs = [
            try Curve25519.Signing.PublicKey(rawRepresentation: pub.rawRepresentation),
            try Curve25519.Signing.PublicKey(derRepresentation: pub.derRepresentation),
            try Curve25519.Signing.PublicKey(pemRepresentation: pub.pemRepresentation),
        ]
        for copy in pubs { #expect(copy.isValidSignature(signature, for: message)) }
        #expect(!(try Curve25519.Signing.PrivateKey()).publicKey.isValidSignature(signature, for: message))
    }

    @Test func malformedRefused() throws {
        #expect(throws: CryptoError.invalidKeyEncoding) { try Curve25519.Signing.PublicKey(rawRepresentation: [UInt8](repeating: 1, count: 31)) }
        #expect(throws: CryptoError.invalidKeyEncoding) { try Curve25519.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 1, count: 33)) }
        #expect(throws: CryptoError.unsupportedKeyType) { try Curve25519.Signing.PublicKey(pemRepresentation: Fixtures.p384PublicPEM) }
    }
}
