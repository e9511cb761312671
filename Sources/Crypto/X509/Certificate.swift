import COpenSSL
import Foundation

/// Owns one `X509`. Nothing mutates it after parsing (the fields are read eagerly in
/// `Certificate.init`), and OpenSSL 3 allows concurrent read access, hence `@unchecked Sendable`.
final class X509Handle: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { X509_free(pointer) }
}

/// An X.509 v1-v3 certificate (RFC 5280), parsed with OpenSSL (`d2i_X509`).
///
/// WebAuthn attestation needs a handful of fields (subject components, validity, basic
/// constraints, the subject public key, a few extensions by OID); they are read once at
/// parsing time so every accessor is cheap and cannot fail.
public struct Certificate: Sendable, Equatable, CustomStringConvertible {
    let handle: X509Handle

    /// The DER bytes the certificate was parsed from.
    public let derRepresentation: [UInt8]
    /// 1, 2 or 3 (the encoded value plus one).
    public let version: Int
    /// The serial number's magnitude, big-endian.
    public let serialNumber: [UInt8]
    public let subject: DistinguishedName
    public let issuer: DistinguishedName
    public let notValidBefore: Date
    public let notValidAfter: Date
    /// Every extension in encoded order; OIDs are unique (duplicates are refused at parsing).
    public let extensions: [Extension]

    /// One certificate extension: its OID, criticality and raw `extnValue` (the DER inside
    /// the OCTET STRING).
    public struct Extension: Sendable, Equatable {
        public var oid: String
        public var isCritical: Bool
        public var value: [UInt8]

        public init(oid: String, isCritical: Bool, value: [UInt8]) {
            self.oid = oid
            self.isCritical = isCritical
            self.value = value
        }
    }

    /// Parses one DER certificate; trailing bytes are refused.
    public init(derRepresentation der: some DataProtocol) throws(CertificateError) {
        let bytes = Array(der)
        let parsed: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, buffer.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let certificate = d2i_X509(nil, &cursor, buffer.count) else { return nil }
            if cursor != base + buffer.count {
                X509_free(certificate)
                return nil
            }
            return certificate
        }
        guard let parsed else {
            ERR_clear_error()
            throw .malformed("not a DER certificate")
        }
        let handle = X509Handle(taking: parsed)
        self.handle = handle
        derRepresentation = bytes
        version = Int(X509_get_version(parsed)) + 1
        serialNumber = try Self.serial(of: parsed)
        subject = try DistinguishedName(X509_get_subject_name(parsed))
        issuer = try DistinguishedName(X509_get_issuer_name(parsed))
        guard let notBefore = Self.date(X509_get0_notBefore(parsed)),
            let notAfter = Self.date(X509_get0_notAfter(parsed))
        else { throw .malformed("validity") }
        notValidBefore = notBefore
        notValidAfter = notAfter
        extensions = try Self.readExtensions(of: parsed)
    }

    /// Parses a `CERTIFICATE` PEM block.
    public init(pemRepresentation pem: String) throws(CertificateError) {
        let document: PEMDocument
        do { document = try PEMDocument(parsing: pem) } catch { throw .invalidPEM }
        guard document.label == "CERTIFICATE" else { throw .invalidPEM }
        try self.init(derRepresentation: document.der)
    }

    /// The `CERTIFICATE` PEM form.
    public var pemRepresentation: String { PEMDocument(label: "CERTIFICATE", der: derRepresentation).text }

    public static func == (lhs: Certificate, rhs: Certificate) -> Bool {
        lhs.derRepresentation == rhs.derRepresentation
    }

    public var description: String { "Certificate(subject: \(subject), issuer: \(issuer))" }

    // MARK: Extensions

    /// The extension with this dotted OID, if present.
    public func `extension`(oid: String) -> Extension? {
        extensions.first { $0.oid == oid }
    }

    /// basicConstraints (2.5.29.19): whether the subject is a CA, and its path length
    /// limit. nil when the extension is absent; throws when it is malformed.
    public var basicConstraints: (isCertificateAuthority: Bool, pathLength: Int?)? {
        get throws(CertificateError) {
            guard let ext = self.extension(oid: "2.5.29.19") else { return nil }
            do {
                var outer = try DERReader(ext.value)
                var sequence = try outer.readSequence()
                try outer.finish()
                var isCA = false
                if let tag = try sequence.peekTag(), tag.tagClass == .universal, tag.tagNumber == 0x01 {
                    isCA = try sequence.readBoolean()
                }
                var pathLength: Int?
                if !sequence.isAtEnd { pathLength = try sequence.readInteger() }
                try sequence.finish()
                return (isCA, pathLength)
            } catch {
                throw .malformed("basicConstraints")
            }
        }
    }

    // MARK: Public key and signatures

    /// The subject public key, typed. Throws `unsupportedKeyType`, `wrongCurve` or
    /// `keyTooSmall` for keys outside P-256, P-384, RSA ≥ 2048 and Ed25519.
    public var publicKey: CertificatePublicKey {
        get throws(CryptoError) {
            let key = try subjectKey()
            if key.isA("EC") {
                switch key.utf8Parameter("group") {
                case "prime256v1": return .p256(P256.Signing.PublicKey(key: key))
                case "secp384r1": return .p384(try P384.Signing.PublicKey(key: key))
                default: throw .wrongCurve
                }
            }
            if key.isA("RSA") { return .rsa(RSA.Signing.PublicKey(key: try RSA.requireRSA(key))) }
            if key.isA("ED25519") {
                return .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: Curve25519.rawPublic(key)))
            }
            throw .unsupportedKeyType
        }
    }

    /// Whether `signature` over `data` verifies with this certificate's subject key under
    /// `algorithm`. The key must be of the algorithm's type (and curve); anything else,
    /// including a malformed signature, is `false`.
    public func isValidSignature(
        _ signature: [UInt8], for data: [UInt8], algorithm: CertificateSignatureAlgorithm
    ) -> Bool {
        guard let key = try? subjectKey() else { return false }
        switch algorithm {
        case .ecdsaP256SHA256, .ecdsaP384SHA384, .ecdsaP521SHA512:
            let group: String
            let digest: String
            switch algorithm {
            case .ecdsaP256SHA256: (group, digest) = ("prime256v1", "SHA256")
            case .ecdsaP384SHA384: (group, digest) = ("secp384r1", "SHA384")
            default: (group, digest) = ("secp521r1", "SHA512")
            }
            guard key.isA("EC"), key.utf8Parameter("group") == group else { return false }
            return key.verifyOneShot(signature, for: data, digest: digest)
        case .rsaPKCS1v15(let hash), .rsaPSS(let hash):
            guard key.isA("RSA"), key.bits >= RSA.minimumKeySize else { return false }
            let pss: Bool
            if case .rsaPSS = algorithm { pss = true } else { pss = false }
            return key.verifyOneShot(signature, for: data, digest: hash.rawValue) { ctx in
                guard pss else { return EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) }
                guard EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PSS_PADDING) == 1 else { return 0 }
                return EVP_PKEY_CTX_set_rsa_pss_saltlen(ctx, RSA_PSS_SALTLEN_DIGEST)
            }
        case .ed25519:
            guard key.isA("ED25519"), signature.count == 64 else { return false }
            return key.verifyOneShot(signature, for: data, digest: nil)
        }
    }

    func subjectKey() throws(CryptoError) -> PKey {
        guard let key = X509_get_pubkey(handle.pointer) else {
            ERR_clear_error()
            throw .invalidKeyEncoding
        }
        return PKey(taking: key)
    }

    // MARK: Parsing helpers

    private static func serial(of certificate: OpaquePointer) throws(CertificateError) -> [UInt8] {
        guard let serial = X509_get0_serialNumber(certificate) else { throw .malformed("serial number") }
        let length = Int(ASN1_STRING_length(serial))
        guard length >= 0, let data = copenssl_asn1_string_data(serial) else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: length))
    }

    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time else { return nil }
        var seconds: Int64 = 0
        guard copenssl_asn1_time_to_epoch(time, &seconds) == 1 else {
            ERR_clear_error()
            return nil
        }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static func readExtensions(of certificate: OpaquePointer) throws(CertificateError) -> [Extension] {
        var result: [Extension] = []
        let count = X509_get_ext_count(certificate)
        guard count >= 0 else { return [] }
        for index in 0..<count {
            guard let ext = X509_get_ext(certificate, index), let object = X509_EXTENSION_get_object(ext),
                let data = X509_EXTENSION_get_data(ext)
            else { throw .malformed("extension") }
            let oid = try objectIdentifier(object)
            guard !result.contains(where: { $0.oid == oid }) else {
                throw .malformed("duplicate extension \(oid)")
            }
            let length = Int(ASN1_STRING_length(data))
            var value: [UInt8] = []
            if length > 0, let bytes = copenssl_asn1_string_data(data) {
                value = Array(UnsafeBufferPointer(start: bytes, count: length))
            }
            result.append(Extension(oid: oid, isCritical: X509_EXTENSION_get_critical(ext) == 1, value: value))
        }
        return result
    }

    static func objectIdentifier(_ object: OpaquePointer) throws(CertificateError) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        guard length > 0, Int(length) < buffer.count else { throw .malformed("object identifier") }
        return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Why certificate bytes were refused.
public enum CertificateError: Error, Equatable, Sendable {
    /// The text is not PEM, or its label is not `CERTIFICATE`.
    case invalidPEM
    /// The DER is not a certificate, or a field is malformed; the text names the field.
    case malformed(String)
}

/// A certificate's subject public key, by type.
public enum CertificatePublicKey: Sendable {
    case p256(P256.Signing.PublicKey)
    case p384(P384.Signing.PublicKey)
    case rsa(RSA.Signing.PublicKey)
    case ed25519(Curve25519.Signing.PublicKey)
}

/// Signature algorithms a certificate's key can verify, named by key type and digest.
public enum CertificateSignatureAlgorithm: Sendable, Equatable {
    /// The digests RSA signatures are made over. SHA-1 exists for old TPMs only.
    public enum Hash: String, Sendable, Equatable {
        case sha1 = "SHA1", sha256 = "SHA256", sha384 = "SHA384", sha512 = "SHA512"
    }

    /// ES256: ECDSA on P-256 with SHA-256, DER signature.
    case ecdsaP256SHA256
    /// ES384: ECDSA on P-384 with SHA-384, DER signature.
    case ecdsaP384SHA384
    /// ES512: ECDSA on P-521 with SHA-512, DER signature.
    case ecdsaP521SHA512
    /// RS256/RS384/RS512 and RS1: RSASSA-PKCS1-v1_5.
    case rsaPKCS1v15(Hash)
    /// PS256/PS384/PS512: RSASSA-PSS, MGF1 with the same digest, salt as long as the digest.
    case rsaPSS(Hash)
    /// EdDSA with Ed25519 (PureEdDSA).
    case ed25519
}

/// The attributes of an X.509 distinguished name (subject or issuer), in encoded order.
public struct DistinguishedName: Sendable, Equatable, CustomStringConvertible {
    /// One attribute: dotted OID and its value as UTF-8 text.
    public struct Attribute: Sendable, Equatable {
        public var oid: String
        public var value: String
    }

    public var attributes: [Attribute]

    public init(attributes: [Attribute]) { self.attributes = attributes }

    init(_ name: OpaquePointer?) throws(CertificateError) {
        guard let name else { throw .malformed("name") }
        var attributes: [Attribute] = []
        let count = X509_NAME_entry_count(name)
        if count > 0 {
            for index in 0..<count {
                guard let entry = X509_NAME_get_entry(name, index), let object = X509_NAME_ENTRY_get_object(entry),
                    let data = X509_NAME_ENTRY_get_data(entry)
                else { throw .malformed("name attribute") }
                let oid = try Certificate.objectIdentifier(object)
                var utf8: UnsafeMutablePointer<UInt8>?
                let length = ASN1_STRING_to_UTF8(&utf8, data)
                guard length >= 0, let utf8 else {
                    ERR_clear_error()
                    throw .malformed("name attribute value")
                }
                let value = String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
                CRYPTO_free(utf8, #fileID, #line)
                attributes.append(Attribute(oid: oid, value: value))
            }
        }
        self.attributes = attributes
    }

    /// True when the name has no attributes (TPM attestation certificates have an empty subject).
    public var isEmpty: Bool { attributes.isEmpty }

    /// Every value of the attribute with this OID.
    public func values(of oid: String) -> [String] { attributes.filter { $0.oid == oid }.map(\.value) }

    /// C (2.5.4.6).
    public var countryName: String? { values(of: "2.5.4.6").first }
    /// O (2.5.4.10).
    public var organizationName: String? { values(of: "2.5.4.10").first }
    /// OU (2.5.4.11).
    public var organizationalUnitName: String? { values(of: "2.5.4.11").first }
    /// CN (2.5.4.3).
    public var commonName: String? { values(of: "2.5.4.3").first }

    public var description: String {
        let short = ["2.5.4.6": "C", "2.5.4.10": "O", "2.5.4.11": "OU", "2.5.4.3": "CN", "2.5.4.8": "ST", "2.5.4.7": "L"]
        return attributes.map { "\(short[$0.oid] ?? $0.oid)=\($0.value)" }.joined(separator: ", ")
    }
}
