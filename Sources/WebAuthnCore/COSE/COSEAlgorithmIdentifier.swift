/// A COSE algorithm number as used in `pubKeyCredParams` and COSE keys.
///
/// A struct rather than an enum so that unknown numbers from clients survive
/// decoding and are refused by policy, not by the JSON layer.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#typedefdef-cosealgorithmidentifier
public struct COSEAlgorithmIdentifier: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    /// ECDSA with SHA-256 on P-256.
    public static let es256 = COSEAlgorithmIdentifier(rawValue: -7)
    /// EdDSA (Ed25519 in WebAuthn).
    public static let eddsa = COSEAlgorithmIdentifier(rawValue: -8)
    /// RSASSA-PSS with SHA-256.
    public static let ps256 = COSEAlgorithmIdentifier(rawValue: -37)
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    public static let rs256 = COSEAlgorithmIdentifier(rawValue: -257)

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String {
        switch self {
        case .es256: "ES256"
        case .eddsa: "EdDSA"
        case .ps256: "PS256"
        case .rs256: "RS256"
        default: "COSE(\(rawValue))"
        }
    }
}
