import Crypto
import Foundation
import Testing
@testable import OIDC

@Suite struct JWSVectorTests {
    // RFC 7515 Appendix A.2: verifies, and signing reproduces the exact JWS (PKCS#1 v1.5
    // is deterministic, and the header `{"alg":"RS256"}` encodes identically).
    @Test func rfc7515AppendixA2() throws {
        let verifier = JWSVerifier(keys: JWKS(keys: [Vectors.rsaJWK.publicJWK]), allowedAlgorithms: [.RS256])
        let verified = try verifier.verify(Vectors.rs256JWS)
        #expect(verified.payload == Vectors.payload)
        #expect(verified.header == JWSHeader(algorithm: .RS256, keyID: nil, type: nil, contentType: nil))
        let signer = try JWSSigner(privateKey: Vectors.rsaJWK.privateKey(), algorithm: .RS256, keyID: nil)
        #expect(try signer.sign(payload: Vectors.payload, type: nil) == Vectors.rs256JWS)
    }

    // RFC 7515 Appendix A.3: the ES256 example verifies.
    @Test func rfc7515AppendixA3() throws {
        let verifier = JWSVerifier(keys: JWKS(keys: [Vectors.ecJWK.publicJWK]), allowedAlgorithms: [.ES256])
        #expect(try verifier.verify(Vectors.es256JWS).payload == Vectors.payload)
    }

    // RFC 8037 Appendix A.4 (signature reproduced exactly) and A.5 (verification).
    @Test func rfc8037AppendixA4() throws {
        let signer = try JWSSigner(privateKey: Vectors.okpJWK.privateKey(), algorithm: .EdDSA, keyID: nil)
        #expect(try signer.sign(payload: Vectors.okpPayload, type: nil) == Vectors.edDSAJWS)
        let verifier = JWSVerifier(keys: JWKS(keys: [Vectors.okpJWK.publicJWK]), allowedAlgorithms: [.EdDSA])
        #expect(try verifier.verify(Vectors.edDSAJWS).payload == Vectors.okpPayload)
    }

    // RFC 8037 Appendix A.3 and RFC 7638 §3.1.
    @Test func thumbprints() throws {
        #expect(try Vectors.okpJWK.publicJWK.thumbprint() == Vectors.okpThumbprint)
        #expect(try Vectors.okpJWK.thumbprint() == Vectors.okpThumbprint)
        #expect(try Vectors.rfc7638JWK.thumbprint() == Vectors.rfc7638Thumbprint)
        #expect(try Vectors.ecJWK.thumbprint().count == 43)
        #expect(throws: JOSEError.unsupportedKeyType("oct")) { try JWK(kty: "oct").thumbprint() }
        #expect(throws: JOSEError.invalidKey) { try JWK(kty: "RSA", n: "AQAB").thumbprint() }
        #expect(throws: JOSEError.invalidKey) { try JWK(kty: "RSA", n: "a\"b", e: "AQAB").thumbprint() }
    }
}

@Suite struct JWSRoundTripTests {
    static func keys() throws -> [(SigningPrivateKey, JWSAlgorithm)] {
        let rsa = try Vectors.rsaJWK.privateKey()
        return [
            (rsa, .RS256), (rsa, .PS256),
            (.p256(try P256.Signing.PrivateKey()), .ES256),
            (.ed25519(try Curve25519.Signing.PrivateKey()), .EdDSA),
        ]
    }

    @Test func signVerifyEveryAlgorithm() throws {
        for (key, algorithm) in try Self.keys() {
            let jwk = try JWK(publicKey: key.publicKey, keyID: "k-\(algorithm)", algorithm: algorithm)
            #expect(jwk.use == "sig" && !jwk.isPrivate)
            let signer = try JWSSigner(privateKey: key, algorithm: algorithm, keyID: jwk.kid)
            let token = try signer.sign(payload: Array("{\"sub\":\"42\"}".utf8), type: "at+jwt", extraHeader: ["x-test": "1"])
            let decoy = try JWK(publicKey: .p256(try P256.Signing.PrivateKey().publicKey), keyID: "decoy")
            let verifier = JWSVerifier(keys: JWKS(keys: [decoy, jwk]), allowedAlgorithms: Set(JWSAlgorithm.allCases))
            let verified = try verifier.verify(token)
            #expect(verified.header == JWSHeader(algorithm: algorithm, keyID: jwk.kid, type: "at+jwt", contentType: nil))
            #expect(verified.key == jwk)
            struct Sub: Decodable { var sub: String }
            #expect(try verified.decodePayload(as: Sub.self).sub == "42")
        }
    }

    @Test func jwkPrivateExportRoundTrip() throws {
        for (key, algorithm) in try Self.keys() {
            let privateJWK = try JWK(privateKey: key, keyID: "k", algorithm: algorithm)
            #expect(privateJWK.isPrivate && !privateJWK.publicJWK.isPrivate)
            let data = try JSONEncoder().encode(privateJWK)
            let decoded = try JSONDecoder().decode(JWK.self, from: data)
            #expect(decoded == privateJWK)
            let imported = try decoded.privateKey()
            #expect(try JWK(publicKey: imported.publicKey, keyID: "k", algorithm: algorithm) == privateJWK.publicJWK)
            // A token signed with the imported key verifies with the original public key.
            let token = try JWSSigner(privateKey: imported, algorithm: algorithm, keyID: "k").sign(payload: [1, 2, 3])
            let verifier = JWSVerifier(keys: JWKS(keys: [privateJWK.publicJWK]), allowedAlgorithms: [algorithm])
            #expect(try verifier.verify(token).payload == [1, 2, 3])
        }
    }

    @Test func signClaimsUsesNumericDates() throws {
        struct Claims: Encodable { var iss: String; var exp: Date }
        let signer = try JWSSigner(privateKey: Vectors.okpJWK.privateKey(), algorithm: .EdDSA, keyID: "k")
        let token = try signer.sign(claims: Claims(iss: "https://id.example.com/a", exp: Date(timeIntervalSince1970: 1_700_000_000)))
        var jwk = Vectors.okpJWK.publicJWK
        jwk.kid = "k"
        let verified = try JWSVerifier(keys: JWKS(keys: [jwk]), allowedAlgorithms: [.EdDSA]).verify(token)
        #expect(String(decoding: verified.payload, as: UTF8.self) == #"{"exp":1700000000,"iss":"https://id.example.com/a"}"#)
        #expect(String(decoding: try Base64URL.decode(String(token.split(separator: ".")[0])), as: UTF8.self) == #"{"alg":"EdDSA","kid":"k","typ":"JWT"}"#)
    }

    @Test func jwksLookupAndPublicKeys() throws {
        let set = JWKS(keys: [Vectors.rsaJWK, Vectors.okpJWK])
        #expect(set.key(withID: "nope") == nil)
        #expect(set.publicKeys.keys.allSatisfy { !$0.isPrivate })
        let json = try JSONEncoder().encode(JWKS(keys: [Vectors.rfc7638JWK]))
        #expect(try JSONDecoder().decode(JWKS.self, from: json).key(withID: "2011-04-29") == Vectors.rfc7638JWK)
        // Unknown members (e.g. x5c) are ignored on decode.
        let foreign = Data(#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","kid":"a","key_ops":["verify"]}]}"#.utf8)
        #expect(try JSONDecoder().decode(JWKS.self, from: foreign).key(withID: "a")?.crv == "Ed25519")
    }
}

@Suite struct JWSNegativeTests {
    let all = Set(JWSAlgorithm.allCases)

    func token(_ header: String, payload: [UInt8] = Array("{}".utf8), key: SigningPrivateKey, algorithm: JWSAlgorithm) throws -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(payload)
        let signature: [UInt8]
        switch key {
        case .rsa(let k): signature = try k.signature(for: Array(input.utf8)).rawRepresentation
        case .p256(let k): signature = try k.signature(for: Array(input.utf8)).rawRepresentation
        case .ed25519(let k): signature = try k.signature(for: Array(input.utf8))
        }
        _ = algorithm
        return input + "." + Base64URL.encode(signature)
    }

    @Test func algNoneAndHMACRefused() {
        let verifier = JWSVerifier(keys: JWKS(keys: [Vectors.rsaJWK.publicJWK]), allowedAlgorithms: all)
        #expect(throws: JOSEError.unsupportedAlgorithm("none")) { try verifier.verify(Vectors.noneJWS) }
        #expect(throws: JOSEError.unsupportedAlgorithm("HS256")) { try verifier.verify(Vectors.hs256JWS) }
    }

    @Test func algorithmNotAllowedRefused() {
        let verifier = JWSVerifier(keys: JWKS(keys: [Vectors.rsaJWK.publicJWK]), allowedAlgorithms: [.ES256])
        #expect(throws: JOSEError.unsupportedAlgorithm("RS256")) { try verifier.verify(Vectors.rs256JWS) }
    }

    // Algorithm confusion: a token claiming ES256 but naming an RSA key, or RS256 naming an EC key.
    @Test func algorithmKeyMismatchRefused() throws {
        var rsa = Vectors.rsaJWK.publicJWK
        rsa.kid = "rsa"
        var ec = Vectors.ecJWK.publicJWK
        ec.kid = "ec"
        let verifier = JWSVerifier(keys: JWKS(keys: [rsa, ec]), allowedAlgorithms: all)
        let ecKey = try Vectors.ecJWK.privateKey()
        let confused = try token(#"{"alg":"ES256","kid":"rsa"}"#, key: ecKey, algorithm: .ES256)
        #expect(throws: JOSEError.algorithmKeyMismatch) { try verifier.verify(confused) }
        let confused2 = try token(#"{"alg":"RS256","kid":"ec"}"#, key: try Vectors.rsaJWK.privateKey(), algorithm: .RS256)
        #expect(throws: JOSEError.algorithmKeyMismatch) { try verifier.verify(confused2) }
        // A JWK pinned to another alg.
        var pinned = Vectors.rsaJWK.publicJWK
        pinned.alg = "PS256"
        pinned.kid = "pinned"
        let pinnedVerifier = JWSVerifier(keys: JWKS(keys: [pinned]), allowedAlgorithms: all)
        let rs = try token(#"{"alg":"RS256","kid":"pinned"}"#, key: try Vectors.rsaJWK.privateKey(), algorithm: .RS256)
        #expect(throws: JOSEError.algorithmKeyMismatch) { try pinnedVerifier.verify(rs) }
        #expect(throws: JOSEError.algorithmKeyMismatch) {
            try JWSSigner(privateKey: ecKey, algorithm: .RS256, keyID: nil)
        }
    }

    @Test func unknownKeyIDRefused() throws {
        var ec = Vectors.ecJWK.publicJWK
        ec.kid = "ec"
        let verifier = JWSVerifier(keys: JWKS(keys: [ec]), allowedAlgorithms: all)
        let other = try token(#"{"alg":"ES256","kid":"other"}"#, key: try Vectors.ecJWK.privateKey(), algorithm: .ES256)
        #expect(throws: JOSEError.unknownKeyID) { try verifier.verify(other) }
        // Without kid and with two candidate keys, no key is guessed.
        let second = try JWK(publicKey: .p256(try P256.Signing.PrivateKey().publicKey))
        let ambiguous = JWSVerifier(keys: JWKS(keys: [ec, second]), allowedAlgorithms: all)
        #expect(throws: JOSEError.unknownKeyID) { try ambiguous.verify(Vectors.es256JWS) }
        let empty = JWSVerifier(keys: JWKS(keys: []), allowedAlgorithms: all)
        #expect(throws: JOSEError.unknownKeyID) { try empty.verify(Vectors.es256JWS) }
    }

    @Test func tamperedSignatureAndWrongKeyRefused() throws {
        let verifier = JWSVerifier(keys: JWKS(keys: [Vectors.rsaJWK.publicJWK]), allowedAlgorithms: all)
        var parts = Vectors.rs256JWS.split(separator: ".").map(String.init)
        var signature = try Base64URL.decode(parts[2])
        signature[0] ^= 1
        parts[2] = Base64URL.encode(signature)
        #expect(throws: JOSEError.signatureInvalid) { try verifier.verify(parts.joined(separator: ".")) }
        // Payload swapped, signature kept.
        let swapped = parts[0] + "." + Base64URL.encode(Array("{\"iss\":\"eve\"}".utf8)) + "." + Vectors.rs256JWS.split(separator: ".")[2]
        #expect(throws: JOSEError.signatureInvalid) { try verifier.verify(swapped) }
        let wrongKey = JWSVerifier(keys: JWKS(keys: [Vectors.ecJWK.publicJWK]), allowedAlgorithms: all)
        let other = try JWK(publicKey: .p256(try P256.Signing.PrivateKey().publicKey))
        #expect(throws: JOSEError.signatureInvalid) {
            try JWSVerifier(keys: JWKS(keys: [other]), allowedAlgorithms: all).verify(Vectors.es256JWS)
        }
        _ = wrongKey
        // ES256 signature of the wrong length.
        let esParts = Vectors.es256JWS.split(separator: ".").map(String.init)
        let short = esParts[0] + "." + esParts[1] + "." + Base64URL.encode(try Base64URL.decode(esParts[2]).dropLast(3))
        #expect(throws: JOSEError.signatureInvalid) { try wrongKey.verify(short) }
    }

    @Test(arguments: [
        "", "a.b", "a.b.c.d", "eyJhbGciOiJFUzI1NiJ9.e30", "!!!.e30.AAAA", "eyJhbGciOiJFUzI1NiJ9.e3=.AAAA",
        "bm90IGpzb24.e30.AAAA", "WzFd.e30.AAAA", "eyJhbGciOjF9.e30.AAAA", "eyJhbGciOiJFUzI1NiIsImtpZCI6MX0.e30.AAAA",
    ])
    func malformedRefused(compact: String) {
        let verifier = JWSVerifier(keys: JWKS(keys: [Vectors.ecJWK.publicJWK]), allowedAlgorithms: all)
        #expect(throws: JOSEError.malformed) { try verifier.verify(compact) }
    }

    @Test func criticalHeaderRefused() throws {
        let verifier = JWSVerifier(keys: JWKS(keys: [Vectors.ecJWK.publicJWK]), allowedAlgorithms: all)
        let crit = try token(#"{"alg":"ES256","crit":["exp"],"exp":1}"#, key: try Vectors.ecJWK.privateKey(), algorithm: .ES256)
        #expect(throws: JOSEError.unsupportedCriticalHeader) { try verifier.verify(crit) }
    }

    @Test func malformedJWKsRefused() throws {
        #expect(throws: JOSEError.invalidKey) { try JWK(kty: "RSA", e: "AQAB").publicKey() }
        #expect(throws: JOSEError.invalidKey) { try JWK(kty: "EC", crv: "P-256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FE+").publicKey() }
        #expect(throws: JOSEError.invalidKey) { try JWK(kty: "EC", crv: "P-256", x: "AAAA", y: "AAAA").publicKey() }
        #expect(throws: JOSEError.unsupportedKeyType("EC/P-384")) { try JWK(kty: "EC", crv: "P-384", x: "AAAA", y: "AAAA").publicKey() }
        #expect(throws: JOSEError.unsupportedKeyType("oct")) { try JWK(kty: "oct").publicKey() }
        #expect(throws: JOSEError.unsupportedKeyType("OKP/X25519")) { try JWK(kty: "OKP", crv: "X25519", x: "AAAA").publicKey() }
        let n = try Base64URL.decode(Vectors.rsaJWK.n ?? "")
        #expect(throws: JOSEError.keyTooSmall) { try JWK(kty: "RSA", n: Base64URL.encode(n.prefix(128)), e: "AQAB").publicKey() }
        // Private members that do not belong to the public ones.
        var ec = Vectors.ecJWK
        ec.x = Vectors.okpJWK.x
        #expect(throws: JOSEError.invalidKey) { try ec.privateKey() }
        var okp = Vectors.okpJWK
        okp.x = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"
        #expect(throws: JOSEError.invalidKey) { try okp.privateKey() }
        var rsa = Vectors.rsaJWK
        rsa.qi = nil
        #expect(throws: JOSEError.invalidKey) { try rsa.privateKey() }
        #expect(throws: JOSEError.invalidKey) { try Vectors.rsaJWK.publicJWK.privateKey() }
        // A key set with a broken key named by the token.
        var broken = Vectors.ecJWK.publicJWK
        broken.y = "AAAA"
        #expect(throws: JOSEError.invalidKey) {
            try JWSVerifier(keys: JWKS(keys: [broken]), allowedAlgorithms: all).verify(Vectors.es256JWS)
        }
    }

    @Test func expectedTypeEnforced() throws {
        let signer = try JWSSigner(privateKey: Vectors.okpJWK.privateKey(), algorithm: .EdDSA, keyID: nil)
        let verifier = JWSVerifier(keys: JWKS(keys: [Vectors.okpJWK.publicJWK]), allowedAlgorithms: all)
        let logout = try signer.sign(payload: [1], type: "logout+jwt")
        #expect(try verifier.verify(logout, expectedType: "application/Logout+JWT").header.type == "logout+jwt")
        #expect(throws: JOSEError.typeMismatch) { try verifier.verify(logout, expectedType: "JWT") }
        #expect(throws: JOSEError.typeMismatch) { try verifier.verify(Vectors.edDSAJWS, expectedType: "JWT") }
    }

    @Test func reservedExtraHeaderRefused() throws {
        let signer = try JWSSigner(privateKey: Vectors.okpJWK.privateKey(), algorithm: .EdDSA, keyID: "k")
        #expect(throws: JOSEError.malformed) { try signer.sign(payload: [1], extraHeader: ["alg": "none"]) }
    }
}
