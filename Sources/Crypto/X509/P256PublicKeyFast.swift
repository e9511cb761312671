import COpenSSL
import Foundation

extension P256.Signing.PublicKey {
    /// The uncompressed point `04 || x || y`, for verifying many signatures from stored keys.
    ///
    /// Decoding the point (`EC_POINT_oct2point`, inside `EVP_PKEY_fromdata`) already
    /// refuses points that are not on the curve, and P-256 has cofactor 1, so every point
    /// on it has the group's prime order: the additional full public-key check that
    /// `init(x963Representation:)` runs (a scalar multiplication by the order) cannot
    /// refuse anything here, yet costs about as much as a signature verification.
    public init(verifyingKeyPoint bytes: some DataProtocol) throws(CryptoError) {
        let point = Array(bytes)
        guard point.count == 65, point[0] == 0x04 else { throw .invalidKeyEncoding }
        guard let template = P256.parametersTemplate, let copy = EVP_PKEY_dup(template.pointer) else {
            ERR_clear_error()
            throw .openSSLFailure("EVP_PKEY_dup")
        }
        let key = PKey(taking: copy)
        let ok = point.withUnsafeBufferPointer { EVP_PKEY_set1_encoded_public_key(copy, $0.baseAddress, $0.count) }
        guard ok == 1 else {
            ERR_clear_error()
            throw .invalidKeyEncoding
        }
        self.init(key: key)
    }
}

extension P256 {
    /// A key holding only the P-256 domain parameters, duplicated for each public key
    /// built from a point: copying the group is cheaper than building it by name. It is
    /// never modified after creation.
    static let parametersTemplate: PKey? = try? PKey.fromData("EC", selection: copenssl_selection_key_parameters()) {
        $0.push("group", utf8: "prime256v1")
    }
}

extension P256.Signing.PublicKey {
    /// Whether `signature`, a DER `ECDSA-Sig-Value` as WebAuthn carries it, is valid over
    /// `SHA-256(data)`. OpenSSL itself refuses signatures that are not strict DER (it
    /// re-encodes and compares), so the bytes go to it without a separate parse.
    public func isValidSignature(derRepresentation signature: [UInt8], for data: [UInt8]) -> Bool {
        guard !signature.isEmpty, signature.count <= 72 else { return false }
        return key.verify(signature, for: data, scheme: .ecdsaSHA256)
    }
}
