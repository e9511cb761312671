import COpenSSL
import Foundation

extension P256.Signing {
    /// Whether `signature`, a DER `ECDSA-Sig-Value` as WebAuthn carries it, is valid over
    /// `SHA-256(data)` for the uncompressed point `04 || x || y`.
    ///
    /// This is for a key used once, such as a stored passkey's public key at sign-in: it
    /// skips building an `EVP_PKEY` and its contexts, which costs about a fifth of the
    /// verification. The point is decoded with its on-curve check (P-256 has cofactor 1, so
    /// every point on it has the group's order and no further key check can refuse
    /// anything), and OpenSSL refuses signatures that are not strict DER.
    public static func isValidSignature(
        derRepresentation signature: [UInt8], for data: [UInt8], publicKeyPoint point: [UInt8]
    ) -> Bool {
        defer { ERR_clear_error() }
        guard point.count == 65, point[0] == 0x04, !signature.isEmpty, signature.count <= 72,
            let group = P256.curveGroup
        else { return false }
        let digest = Array(SHA256.hash(data: data))
        let result = point.withUnsafeBufferPointer { point in
            digest.withUnsafeBufferPointer { digest in
                signature.withUnsafeBufferPointer { signature in
                    copenssl_p256_verify_point(
                        group.pointer, point.baseAddress, point.count, digest.baseAddress, digest.count,
                        signature.baseAddress, signature.count)
                }
            }
        }
        return result == 1
    }
}

extension P256 {
    /// The P-256 group, built once: building it by name costs more than a verification.
    /// It is only read after creation (`EC_KEY_set_group` copies it), so threads share it.
    static let curveGroup: CurveGroup? = CurveGroup(curveName: NID_X9_62_prime256v1)

    final class CurveGroup: @unchecked Sendable {
        let pointer: OpaquePointer

        init?(curveName: Int32) {
            guard let group = EC_GROUP_new_by_curve_name(curveName) else {
                ERR_clear_error()
                return nil
            }
            pointer = group
        }

        deinit { EC_GROUP_free(pointer) }
    }
}
