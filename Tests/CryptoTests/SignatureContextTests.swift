import COpenSSL
import Foundation
import Testing
@testable import Crypto

/// The signing and verifying contexts are cached per key and reused: these tests check that
/// reuse changes nothing observable (results agree with OpenSSL's one-shot API, a failure
/// does not poison later calls, concurrent callers never share a context).
@Suite struct SignatureContextTests {
    let message = Array("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0".utf8)

    /// OpenSSL's one-shot `EVP_DigestVerify`, configured from scratch, as the reference.
    static func oneShotVerify(
        _ key: PKey, _ signature: [UInt8], _ data: [UInt8], digest: String?, padding: Int32? = nil
    ) -> Bool {
        defer { ERR_clear_error() }
        guard let md = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(md) }
        var pctx: OpaquePointer?
        guard EVP_DigestVerifyInit_ex(md, &pctx, digest, nil, nil, key.pointer, nil) == 1, let pctx else { return false }
        if let padding {
            guard EVP_PKEY_CTX_set_rsa_padding(pctx, padding) == 1 else { return false }
            if padding == RSA_PKCS1_PSS_PADDING {
                guard EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) == 1 else { return false }
            }
        }
        return signature.withUnsafeBufferPointer { sig in
            data.withUnsafeBufferPointer { EVP_DigestVerify(md, sig.baseAddress, sig.count, $0.baseAddress, $0.count) }
        } == 1
    }

    @Test(arguments: [RSA.Signing.Padding.pkcs1v1_5, .pss], [RSA.Signing.Digest.sha256, .sha384, .sha512])
    func rsaAgreesWithOneShotAPI(padding: RSA.Signing.Padding, digest: RSA.Signing.Digest) throws {
        let key = try RSATests.rfcPrivateKey()
        let opensslPadding = padding == .pss ? RSA_PKCS1_PSS_PADDING : RSA_PKCS1_PADDING
        for _ in 0..<3 {
            let signature = try key.signature(for: message, padding: padding, digest: digest)
            #expect(Self.oneShotVerify(
                key.publicKey.key, signature.rawRepresentation, message, digest: digest.rawValue, padding: opensslPadding))
            #expect(!Self.oneShotVerify(
                key.publicKey.key, signature.rawRepresentation, message + [0], digest: digest.rawValue,
                padding: opensslPadding))
            #expect(key.publicKey.isValidSignature(signature, for: message, padding: padding, digest: digest))
        }
    }

    @Test func ecdsaAndEd25519AgreeWithOneShotAPI() throws {
        let p256 = try P256.Signing.PrivateKey()
        let ed = try Curve25519.Signing.PrivateKey()
        for _ in 0..<3 {
            let ecdsa = try p256.signature(for: message)
            #expect(Self.oneShotVerify(p256.publicKey.key, ecdsa.derRepresentation, message, digest: "SHA256"))
            #expect(!Self.oneShotVerify(p256.publicKey.key, ecdsa.derRepresentation, message, digest: "SHA384"))
            let eddsa = try ed.signature(for: message)
            #expect(Self.oneShotVerify(ed.publicKey.key, eddsa, message, digest: nil))
            #expect(!Self.oneShotVerify(ed.publicKey.key, eddsa, message + [1], digest: nil))
        }
    }

    @Test func failedVerificationDoesNotAffectLaterOnes() throws {
        let p256 = try P256.Signing.PrivateKey()
        let ed = try Curve25519.Signing.PrivateKey()
        let rsa = try RSATests.rfcPrivateKey()
        let ecdsa = try p256.signature(for: message)
        let eddsa = try ed.signature(for: message)
        let rsaSignature = try rsa.signature(for: message)
        var badRSA = rsaSignature.rawRepresentation
        badRSA[0] ^= 1
        var badEd = eddsa
        badEd[0] ^= 1
        for _ in 0..<3 {
            #expect(!p256.publicKey.isValidSignature(ecdsa, for: message + [0]))
            #expect(p256.publicKey.isValidSignature(ecdsa, for: message))
            #expect(!ed.publicKey.isValidSignature(badEd, for: message))
            #expect(ed.publicKey.isValidSignature(eddsa, for: message))
            #expect(!rsa.publicKey.isValidSignature(.init(rawRepresentation: badRSA), for: message))
            #expect(!rsa.publicKey.isValidSignature(.init(rawRepresentation: [1, 2, 3]), for: message))
            #expect(rsa.publicKey.isValidSignature(rsaSignature, for: message))
        }
        // Ed25519 signs deterministically: a reused context gives the same bytes.
        #expect(try ed.signature(for: message) == eddsa)
        #expect(try rsa.signature(for: message) == rsaSignature)
    }

    @Test func concurrentUseOfOneKey() throws {
        let p256 = try P256.Signing.PrivateKey()
        let ed = try Curve25519.Signing.PrivateKey()
        let p256Public = p256.publicKey
        let edPublic = ed.publicKey
        let message = self.message
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            let data = message + [UInt8(index)]
            for _ in 0..<20 {
                guard let ecdsa = try? p256.signature(for: data), let eddsa = try? ed.signature(for: data),
                    p256Public.isValidSignature(ecdsa, for: data), edPublic.isValidSignature(eddsa, for: data),
                    !p256Public.isValidSignature(ecdsa, for: message + [UInt8(index), 0])
                else {
                    failures.withLock { $0 += 1 }
                    continue
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
    }

    @Test func fetchedDigestsMatchOneShotHashing() throws {
        for (name, size) in [(FetchedDigest.Name.sha256, 32), (.sha384, 48), (.sha512, 64)] {
            let digest = try #require(name.fetched)
            #expect(digest.size == size)
            let ours = try #require(message.withUnsafeBytes { digest.hash($0) })
            var reference = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
            var length = 0
            #expect(EVP_Q_digest(nil, name.rawValue, nil, message, message.count, &reference, &length) == 1)
            #expect(ours == Array(reference.prefix(length)))
        }
    }
}

/// Strict DER for ECDSA signatures, checked against OpenSSL's own encoder.
@Suite struct ECDSASignatureCodingTests {
    /// OpenSSL's DER encoding of `(r, s)`.
    static func opensslDER(_ raw: [UInt8]) throws -> [UInt8] {
        let half = raw.count / 2
        let sig = try #require(ECDSA_SIG_new())
        defer { ECDSA_SIG_free(sig) }
        let r = try #require(BN_bin2bn(raw, Int32(half), nil))
        let s = try #require(Array(raw[half...]).withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32(half), nil) })
        #expect(ECDSA_SIG_set0(sig, r, s) == 1)
        let length = i2d_ECDSA_SIG(sig, nil)
        var out = [UInt8](repeating: 0, count: Int(length))
        _ = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_ECDSA_SIG(sig, &cursor)
        }
        return out
    }

    @Test func encodingMatchesOpenSSL() throws {
        var samples: [[UInt8]] = [
            [UInt8](repeating: 0xff, count: 64), [UInt8](repeating: 0x01, count: 64),
            [UInt8](repeating: 0, count: 31) + [1] + [UInt8](repeating: 0, count: 31) + [0x80],
            [0x7f] + [UInt8](repeating: 0xaa, count: 63),
        ]
        for _ in 0..<50 { samples.append(SecureRandom.bytes(count: 64)) }
        for raw in samples {
            let der = ECDSASignatureCoding.rawToDER(raw)
            #expect(der == (try Self.opensslDER(raw)))
            #expect(try ECDSASignatureCoding.derToRaw(der, coordinateSize: 32) == raw)
        }
    }

    @Test func nonCanonicalEncodingsRefused() throws {
        let cases: [[UInt8]] = [
            [],
            [0x30],
            [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01],  // truncated
            [0x31, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01],  // SET, not SEQUENCE
            [0x30, 0x81, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01],  // long-form length
            [0x30, 0x06, 0x02, 0x01, 0x81, 0x02, 0x01, 0x01],  // negative r
            [0x30, 0x05, 0x02, 0x00, 0x02, 0x01, 0x01],  // empty INTEGER
            [0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x00],  // length mismatch
            [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x00],  // trailing byte
            [0x30, 0x06, 0x02, 0x01, 0x01, 0x04, 0x01, 0x01],  // OCTET STRING for s
            [0x30, 0x25, 0x02, 0x21, 0x01] + [UInt8](repeating: 0, count: 32) + [0x02, 0x01, 0x01],  // r too long
        ]
        for der in cases {
            #expect(throws: CryptoError.invalidSignatureEncoding) { try ECDSASignatureCoding.derToRaw(der, coordinateSize: 32) }
        }
        let small = try ECDSASignatureCoding.derToRaw([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02], coordinateSize: 32)
        #expect(small == [UInt8](repeating: 0, count: 31) + [1] + [UInt8](repeating: 0, count: 31) + [2])
    }
}

/// A value guarded by a lock, for counting across test threads.
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
