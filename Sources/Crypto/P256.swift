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
            let der = try key.sign(Array(data), scheme: .ecdsaSHA256)
            return try ECDSASignature(signerOutput: der)
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
            key.verify(signature.derRepresentation, for: Array(data), scheme: .ecdsaSHA256)
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

        /// OpenSSL's own signature output: parsed without the canonical re-encoding check.
        init(signerOutput der: [UInt8]) throws(CryptoError) {
            rawRepresentation = try ECDSASignatureCoding.derToRaw(der, coordinateSize: 32, requireCanonical: false)
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

/// Conversion between raw `r || s` and DER `ECDSA-Sig-Value`, by hand: going through
/// OpenSSL's `ECDSA_SIG` costs several allocations and big-number conversions per signature.
enum ECDSASignatureCoding {
    /// Strict DER only: the input must be exactly the canonical encoding of two non-negative
    /// integers of at most `coordinateSize` bytes, with nothing after them.
    static func derToRaw(
        _ der: [UInt8], coordinateSize: Int, requireCanonical: Bool = true
    ) throws(CryptoError) -> [UInt8] {
        var raw = [UInt8](repeating: 0, count: coordinateSize * 2)
        var reader = SignatureDERCursor(bytes: der)
        guard reader.readByte() == 0x30, let bodyLength = reader.readLength(), bodyLength == reader.remaining,
            reader.readInteger(into: &raw, at: 0, size: coordinateSize),
            reader.readInteger(into: &raw, at: coordinateSize, size: coordinateSize),
            reader.remaining == 0
        else { throw .invalidSignatureEncoding }
        // Strict DER: the canonical re-encoding must give back exactly the input bytes
        // (rejects long-form lengths and superfluous leading zeros).
        guard !requireCanonical || rawToDER(raw) == der else { throw .invalidSignatureEncoding }
        return raw
    }

    /// DER-encodes `r || s` (two positive INTEGERs); never fails.
    static func rawToDER(_ raw: [UInt8]) -> [UInt8] {
        let half = raw.count / 2
        return raw.withUnsafeBufferPointer { bytes -> [UInt8] in
            let r = UnsafeBufferPointer(rebasing: bytes[0..<half])
            let s = UnsafeBufferPointer(rebasing: bytes[half...])
            let body = integerLength(r) + integerLength(s)
            var out = [UInt8]()
            out.reserveCapacity(body + 4)
            out.append(0x30)
            appendLength(body, to: &out)
            appendInteger(r, to: &out)
            appendInteger(s, to: &out)
            return out
        }
    }

    /// Tag, length and content bytes of one minimal non-negative INTEGER.
    private static func integerLength(_ magnitude: UnsafeBufferPointer<UInt8>) -> Int {
        let content = contentLength(magnitude)
        return 1 + (content < 0x80 ? 1 : content < 0x100 ? 2 : 3) + content
    }

    private static func contentLength(_ magnitude: UnsafeBufferPointer<UInt8>) -> Int {
        let zeros = magnitude.prefix { $0 == 0 }.count
        guard zeros < magnitude.count else { return 1 }
        return magnitude.count - zeros + (magnitude[zeros] & 0x80 != 0 ? 1 : 0)
    }

    private static func appendInteger(_ magnitude: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(0x02)
        let zeros = magnitude.prefix { $0 == 0 }.count
        guard zeros < magnitude.count else {
            out.append(contentsOf: [1, 0])
            return
        }
        let needsPad = magnitude[zeros] & 0x80 != 0
        appendLength(magnitude.count - zeros + (needsPad ? 1 : 0), to: &out)
        if needsPad { out.append(0) }
        out.append(contentsOf: magnitude[zeros...])
    }

    private static func appendLength(_ length: Int, to out: inout [UInt8]) {
        if length < 0x80 {
            out.append(UInt8(length))
        } else if length < 0x100 {
            out.append(0x81)
            out.append(UInt8(length))
        } else {
            out.append(0x82)
            out.append(UInt8(length >> 8))
            out.append(UInt8(length & 0xff))
        }
    }
}

/// A bounds-checked cursor over the bytes of one DER signature; every read returns nil (or false) past the end.
private struct SignatureDERCursor {
    let bytes: [UInt8]
    var offset = 0

    var remaining: Int { bytes.count - offset }

    mutating func readByte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// Short form, or long form with one or two length bytes (enough for any signature).
    mutating func readLength() -> Int? {
        guard let first = readByte() else { return nil }
        if first < 0x80 { return Int(first) }
        guard first == 0x81 || first == 0x82, let a = readByte() else { return nil }
        if first == 0x81 { return Int(a) }
        guard let b = readByte() else { return nil }
        return Int(a) << 8 | Int(b)
    }

    /// Reads an INTEGER and right-aligns its magnitude in `out[at..<at+size]`. Refuses
    /// negative values, empty contents and magnitudes longer than `size`.
    mutating func readInteger(into out: inout [UInt8], at start: Int, size: Int) -> Bool {
        guard readByte() == 0x02, let length = readLength(), length > 0, length <= remaining else { return false }
        let content = bytes[offset..<offset + length]
        offset += length
        guard let first = content.first, first & 0x80 == 0 else { return false }
        let magnitude = content.drop { $0 == 0 }
        guard magnitude.count <= size else { return false }
        var index = start + size - magnitude.count
        for byte in magnitude {
            out[index] = byte
            index += 1
        }
        return true
    }
}
