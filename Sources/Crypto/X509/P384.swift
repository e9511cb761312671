import COpenSSL
import Foundation

/// NIST P-384 (secp384r1) with ECDSA over SHA-384: ES384 in JOSE, COSE alg -35. Only the
/// public half is needed: attestation roots and intermediates (Apple's) use P-384 keys.
public enum P384 {
    public enum Signing {}
}

extension P384.Signing {
    /// A P-384 public key.
    public struct PublicKey: Sendable {
        let key: PKey

        init(key: PKey) throws(CryptoError) {
            guard key.isA("EC") else { throw .unsupportedKeyType }
            guard key.utf8Parameter("group") == "secp384r1" else { throw .wrongCurve }
            self.key = key
        }

        /// SubjectPublicKeyInfo DER.
        public init(derRepresentation der: some DataProtocol) throws(CryptoError) {
            try self.init(key: PKey.publicFromSPKI(Array(der)))
        }

        /// The uncompressed SEC1 point `04 || x || y` (97 bytes).
        public var x963Representation: [UInt8] {
            get throws(CryptoError) { try key.octetParameter("encoded-pub-key") }
        }

        /// SubjectPublicKeyInfo DER.
        public var derRepresentation: [UInt8] { get throws(CryptoError) { try key.spkiDER() } }

        /// Whether `signature` is a valid ECDSA signature over `SHA-384(data)`.
        public func isValidSignature(_ signature: ECDSASignature, for data: some DataProtocol) -> Bool {
            key.verifyOneShot(signature.derRepresentation, for: Array(data), digest: "SHA384")
        }
    }

    /// An ECDSA P-384 signature `(r, s)`.
    public struct ECDSASignature: Sendable, Equatable {
        /// `r || s`, 48 bytes each.
        public let rawRepresentation: [UInt8]

        /// Raw `r || s` (RFC 7518 §3.4).
        public init(rawRepresentation raw: some DataProtocol) throws(CryptoError) {
            let bytes = Array(raw)
            guard bytes.count == 96 else { throw .invalidSignatureEncoding }
            rawRepresentation = bytes
        }

        /// DER `ECDSA-Sig-Value`, strictly encoded.
        public init(derRepresentation der: some DataProtocol) throws(CryptoError) {
            rawRepresentation = try ECDSASignatureCoding.derToRaw(Array(der), coordinateSize: 48)
        }

        public var derRepresentation: [UInt8] { ECDSASignatureCoding.rawToDER(rawRepresentation) }
    }
}

/// Digests kept only for interoperability with old devices, named as in swift-crypto.
public enum Insecure {
    /// SHA-1: some TPMs sign attestations with RSASSA-PKCS1-v1_5 over SHA-1 (COSE -65535)
    /// and name keys with it. Never use it for anything new.
    public enum SHA1 {
        public static let byteCount = 20
        public static func hash<D: DataProtocol>(data: D) -> [UInt8] {
            evpDigest(Array(data), name: "SHA1", size: byteCount)
        }
    }
}
