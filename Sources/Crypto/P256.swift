import COpenSSL
import Foundation

/// NIST P-256 (secp256r1) with ECDSA over SHA-256: ES256 in JOSE, COSE alg -7 in WebAuthn.
public enum P256 {
    public enum Signing {}
}

extension P256.Signing {
    /// A P-256 private key.
    public struct PrivateKey: Sendable {
        let key: PKey

        /// Generates a fresh key.
        public init() throws(CryptoError) {
            key = try PKey.generate("EC") { ctx in EVP_PKEY_CTX_set_group_name(ctx, "P-256") }
        }

        /// Parses PKCS#8 or SEC1 (`EC PRIVATE KEY`) DER.
        public init(derRepresentation der: some DataProtocol) throws(CryptoError) {
            let key = try PKey.privateFromDER(Array(der))
            try P256.requireP256(key)
            self.key = key
        }

        /// Parses `PRIVATE KEY` (PKCS#8) or `EC PRIVATE KEY` (SEC1) PEM.
        public init(pemRepresentation pem: String) throws(CryptoError) {
            let document = try PEMDocument(parsing: pem)
            guard document.label == "PRIVATE KEY" || document.label == "EC PRIVATE KEY" else { throw .invalidPEM }
            try self.init(derRepresentation: document.der)
        }

        /// The private scalar `d` as 32 big-endian bytes (JWK `d`).
        public init(rawRepresentation raw: some DataProtocol) throws(CryptoError) {
            let d = Array(raw)
            guard d.count == 32 else { throw .invalidKeyEncoding }
            let pub = try P256.publicPoint(forPrivateScalar: d)
            key = try P256.build(publicPoint: pub, privateScalar: d)
        }

        /// Builds the key from its JWK parts (`d`, `x`, `y`), refusing parts that do not belong together.
        public init(rawRepresentation raw: some DataProtocol, x: some DataProtocol, y: some DataProtocol) throws(CryptoError) {
            let d = Array(raw)
            let x = Array(x), y = Array(y)
            guard d.count == 32, x.count == 32, y.count == 32 else { throw .invalidKeyEncoding }
            let key = try P256.build(publicPoint: [0x04] + x + y, privateScalar: d)
            guard key.checkPair() else { throw .invalidKeyEncoding }
            self.key = key
        }

        public var publicKey: PublicKey {
            // Taking the public half of a valid key cannot fail unless OpenSSL is broken.
            guard let pub = try? key.publicOnly() else { preconditionFailure("P-256 public key export failed") }
            return PublicKey(key: pub)
        }

        /// The private scalar `d`, 32 bytes.
        public var rawRepresentation: [UInt8] {
            get throws(CryptoError) { try key.bigNumberParameter("priv", padTo: 32) }
        }

        /// PKCS#8 DER.
        public var derRepresentation: [UInt8] { get throws(CryptoError) { try key.pkcs8DER() } }

        /// PKCS#8 PEM (`PRIVATE KEY`).
        public var pemRepresentation: String {
            get throws(CryptoError) { PEMDocument(label: "PRIVATE KEY", der: try key.pkcs8DER()).text }
        }

        /// Signs `SHA-256(data)`. ECDSA signatures are randomised, so two calls differ.
        public func signature(for data: some DataProtocol) throws(CryptoError) -> ECDSASignature {
            let der = try key.sign(Array(data), digest: "SHA256")
            return try ECDSASignature(derRepresentation: der)
        }
    }

    /// A P-256 public key.
    public struct PublicKey: Sendable {
        let key: PKey

        init(key: PKey) { self.key = key }

        /// The uncompressed SEC1 point `04 || x || y` (65 bytes), as in WebAuthn/X9.63.
        /// The point must lie on the curve.
        public init(x963Representation bytes: some DataProtocol) throws(CryptoError) {
            let point = Array(bytes)
            guard point.count == 65, point[0] == 0x04 else { throw .invalidKeyEncoding }
            key = try P256.build(publicPoint: point, privateScalar: nil)
        }

        /// The affine coordinates, 32 bytes each (JWK `x`/`y`, COSE -2/-3).
        public init(rawCoordinates x: some DataProtocol, y: some DataProtocol) throws(CryptoError) {
            let x = Array(x), y = Array(y)
            guard x.count == 32, y.count == 32 else { throw .invalidKeyEncoding }
            try self.init(x963Representation: [0x04] + x + y)
        }

        /// SubjectPublicKeyInfo DER.
        public init(derRepresentation der: some DataProtocol) throws(CryptoError) {
            let key = try PKey.publicFromSPKI(Array(der))
            try P256.requireP256(key)
            self.key = key
        }

        /// `PUBLIC KEY` PEM.
        public init(pemRepresentation pem: String) throws(CryptoError) {
            let document = try PEMDocument(parsing: pem)
            guard document.label == "PUBLIC KEY" else { throw .invalidPEM }
            try self.init(derRepresentation: document.der)
        }

        /// `04 || x || y`, 65 bytes.
        public var x963Representation: [UInt8] {
            get throws(CryptoError) { try key.octetParameter("encoded-pub-key") }
        }

        /// The affine coordinates, 32 bytes each.
        public var rawCoordinates: (x: [UInt8], y: [UInt8]) {
            get throws(CryptoError) {
                let point = try x963Representation
                guard point.count == 65 else { throw .invalidKeyEncoding }
                return (Array(point[1..<33]), Array(point[33..<65]))
            }
        }

        /// SubjectPublicKeyInfo DER.
        public var derRepresentation: [UInt8] { get throws(CryptoError) { try key.spkiDER() } }

        /// `PUBLIC KEY` PEM.
        public var pemRepresentation: String {
            get throws(CryptoError) { PEMDocument(label: "PUBLIC KEY", der: try key.spkiDER()).text }
        }

        /// Whether `signature` is a valid ECDSA signature over `SHA-256(data)`.
        public func isValidSignature(_ signature: ECDSASignature, for data: some DataProtocol) -> Bool {
            key.verify(signature.derRepresentation, for: Array(data), digest: "SHA256")
        }
    }

    /// An ECDSA signature `(r, s)`. JOSE carries it raw (`r || s`, 64 bytes), WebAuthn and
    /// OpenSSL as DER; the two are kept apart so neither is mistaken for the other.
    public struct ECDSASignature: Sendable, Equatable {
        /// `r || s`, 32 bytes each.
        public let rawRepresentation: [UInt8]

        /// Raw `r || s` (RFC 7518 §3.4).
        public init(rawRepresentation raw: some DataProtocol) throws(CryptoError) {
            let bytes = Array(raw)
            guard bytes.count == 64 else { throw .invalidSignatureEncoding }
            rawRepresentation = bytes
        }

        /// DER `ECDSA-Sig-Value` (SEQUENCE of two INTEGERs), strictly encoded.
        public init(derRepresentation der: some DataProtocol) throws(CryptoError) {
            rawRepresentation = try ECDSASignatureCoding.derToRaw(Array(der), coordinateSize: 32)
        }

        /// DER `ECDSA-Sig-Value`.
        public var derRepresentation: [UInt8] {
            // r and s are 32-byte values by construction; encoding them cannot fail.
            ECDSASignatureCoding.rawToDER(rawRepresentation)
        }
    }
}

extension P256 {
    static func requireP256(_ key: PKey) throws(CryptoError) {
        guard key.isA("EC") else { throw .unsupportedKeyType }
        guard key.utf8Parameter("group") == "prime256v1" else { throw .wrongCurve }
    }

    /// Builds an EC key from parts. `EVP_PKEY_fromdata` decodes the point with
    /// `EC_POINT_oct2point`, which rejects points that are not on the curve.
    static func build(publicPoint: [UInt8], privateScalar: [UInt8]?) throws(CryptoError) -> PKey {
        var scalar: OpaquePointer?
        if let privateScalar {
            scalar = privateScalar.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
            guard scalar != nil else { throw openSSLFailure("BN_bin2bn") }
        }
        defer { if let scalar { BN_clear_free(scalar) } }
        let selection = privateScalar == nil ? copenssl_selection_public_key() : copenssl_selection_keypair()
        let key = try PKey.fromData("EC", selection: selection) { builder in
            guard builder.push("group", utf8: "prime256v1"), builder.push("pub", octets: publicPoint) else {
                return false
            }
            if let scalar { return builder.push("priv", bigNumber: scalar) }
            return true
        }
        guard key.checkPublic() else { throw .invalidKeyEncoding }
        return key
    }

    /// `Q = d·G`, as an uncompressed point. Uses the EC_GROUP/EC_POINT arithmetic API,
    /// which (unlike EC_KEY) is not deprecated in OpenSSL 3.
    static func publicPoint(forPrivateScalar d: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else {
            throw openSSLFailure("EC_GROUP_new_by_curve_name")
        }
        defer { EC_GROUP_free(group) }
        guard let scalar = d.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), nil) }) else {
            throw openSSLFailure("BN_bin2bn")
        }
        defer { BN_clear_free(scalar) }
        guard let order = EC_GROUP_get0_order(group) else { throw openSSLFailure("EC_GROUP_get0_order") }
        guard BN_is_zero(scalar) == 0, BN_cmp(scalar, order) < 0 else { throw .invalidKeyEncoding }
        guard let point = EC_POINT_new(group) else { throw openSSLFailure("EC_POINT_new") }
        defer { EC_POINT_free(point) }
        guard EC_POINT_mul(group, point, scalar, nil, nil, nil) == 1 else { throw openSSLFailure("EC_POINT_mul") }
        var out = [UInt8](repeating: 0, count: 65)
        let written = EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &out, out.count, nil)
        guard written == 65 else { throw openSSLFailure("EC_POINT_point2oct") }
        return out
    }
}

/// Conversion between raw `r || s` and DER `ECDSA-Sig-Value` through OpenSSL's `ECDSA_SIG`.
enum ECDSASignatureCoding {
    static func derToRaw(_ der: [UInt8], coordinateSize: Int) throws(CryptoError) -> [UInt8] {
        let sig: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let sig = d2i_ECDSA_SIG(nil, &cursor, buffer.count) else { return nil }
            if cursor != base + buffer.count {
                ECDSA_SIG_free(sig)
                return nil
            }
            return sig
        }
        guard let sig else {
            ERR_clear_error()
            throw .invalidSignatureEncoding
        }
        defer { ECDSA_SIG_free(sig) }
        guard let r = ECDSA_SIG_get0_r(sig), let s = ECDSA_SIG_get0_s(sig),
            BN_is_negative(r) == 0, BN_is_negative(s) == 0,
            Int(BN_num_bits(r)) <= coordinateSize * 8, Int(BN_num_bits(s)) <= coordinateSize * 8
        else { throw .invalidSignatureEncoding }
        var out = [UInt8](repeating: 0, count: coordinateSize * 2)
        let okR = out.withUnsafeMutableBufferPointer { BN_bn2binpad(r, $0.baseAddress, Int32(coordinateSize)) }
        let okS = out.withUnsafeMutableBufferPointer {
            BN_bn2binpad(s, $0.baseAddress.map { $0 + coordinateSize }, Int32(coordinateSize))
        }
        guard okR == Int32(coordinateSize), okS == Int32(coordinateSize) else { throw .invalidSignatureEncoding }
        // Strict DER: the re-encoding must give back exactly the input bytes.
        guard rawToDER(out) == der else { throw .invalidSignatureEncoding }
        return out
    }

    /// DER-encodes `r || s` by hand (two positive INTEGERs), so the conversion never fails.
    static func rawToDER(_ raw: [UInt8]) -> [UInt8] {
        let half = raw.count / 2
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02] + derLength(value.count) + value
        }
        let body = integer(raw.prefix(half)) + integer(raw.suffix(raw.count - half))
        return [0x30] + derLength(body.count) + body
    }

    static func derLength(_ length: Int) -> [UInt8] {
        if length < 0x80 { return [UInt8(length)] }
        if length < 0x100 { return [0x81, UInt8(length)] }
        return [0x82, UInt8(length >> 8), UInt8(length & 0xff)]
    }
}
