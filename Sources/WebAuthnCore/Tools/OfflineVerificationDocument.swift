import Foundation

/// The input of the offline verification tool: one browser response plus everything the
/// relying party would have known when it arrived. Keys are snake_case JSON:
///
/// ```json
/// { "ceremony": "registration",
///   "response": { …RegistrationResponseJSON or AuthenticationResponseJSON… },
///   "expected_challenge": "<base64url>", "origins": ["https://login.example.com"],
///   "rp_id": "example.com", "require_user_verification": false, "require_user_presence": true,
///   "allowed_algorithms": [-7, -257, -8],
///   "credential_public_key": "<base64url COSE key>", "sign_count": 0,
///   "now": "2025-01-08T00:00:00Z", "trust_anchors": ["-----BEGIN CERTIFICATE-----…"] }
/// ```
public struct OfflineVerificationDocument: Codable, Sendable {
    public enum Ceremony: String, Codable, Sendable {
        case registration, authentication
    }

    /// The response, typed by `ceremony`.
    public enum Response: Sendable {
        case registration(RegistrationResponseJSON)
        case authentication(AuthenticationResponseJSON)
    }

    public var ceremony: Ceremony
    public var response: Response
    public var expectedChallenge: String
    public var origins: [String]
    public var rpID: String
    public var requireUserVerification: Bool
    /// Registration only: false for a conditional registration after a password sign-in.
    public var requireUserPresence: Bool
    /// Registration only; defaults to ES256, RS256, EdDSA and PS256.
    public var allowedAlgorithms: [Int]?
    /// Authentication only: the stored COSE key, base64url.
    public var credentialPublicKey: String?
    /// Authentication only: the stored sign count (default 0).
    public var signCount: UInt32?
    /// Authentication only: the stored BE and BS flags. When absent, BE is taken from the
    /// assertion itself (an offline check cannot know the stored value) and BS as unchanged.
    public var backupEligible: Bool?
    public var backedUp: Bool?
    /// Authentication only: the account's user handle, base64url.
    public var userHandle: String?
    /// RFC 3339 time for certificate validity (registration).
    public var now: String?
    /// PEM roots trusted for every attestation format (registration).
    public var trustAnchors: [String]?

    enum CodingKeys: String, CodingKey {
        case ceremony, response, origins, now
        case expectedChallenge = "expected_challenge"
        case rpID = "rp_id"
        case requireUserVerification = "require_user_verification"
        case requireUserPresence = "require_user_presence"
        case allowedAlgorithms = "allowed_algorithms"
        case credentialPublicKey = "credential_public_key"
        case signCount = "sign_count"
        case backupEligible = "backup_eligible"
        case backedUp = "backed_up"
        case userHandle = "user_handle"
        case trustAnchors = "trust_anchors"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        ceremony = try container.decode(Ceremony.self, forKey: .ceremony)
        switch ceremony {
        case .registration: response = .registration(try container.decode(RegistrationResponseJSON.self, forKey: .response))
        case .authentication:
            response = .authentication(try container.decode(AuthenticationResponseJSON.self, forKey: .response))
        }
        expectedChallenge = try container.decode(String.self, forKey: .expectedChallenge)
        origins = try container.decode([String].self, forKey: .origins)
        rpID = try container.decode(String.self, forKey: .rpID)
        requireUserVerification = try container.decodeIfPresent(Bool.self, forKey: .requireUserVerification) ?? false
        requireUserPresence = try container.decodeIfPresent(Bool.self, forKey: .requireUserPresence) ?? true
        allowedAlgorithms = try container.decodeIfPresent([Int].self, forKey: .allowedAlgorithms)
        credentialPublicKey = try container.decodeIfPresent(String.self, forKey: .credentialPublicKey)
        signCount = try container.decodeIfPresent(UInt32.self, forKey: .signCount)
        backupEligible = try container.decodeIfPresent(Bool.self, forKey: .backupEligible)
        backedUp = try container.decodeIfPresent(Bool.self, forKey: .backedUp)
        userHandle = try container.decodeIfPresent(String.self, forKey: .userHandle)
        now = try container.decodeIfPresent(String.self, forKey: .now)
        trustAnchors = try container.decodeIfPresent([String].self, forKey: .trustAnchors)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(ceremony, forKey: .ceremony)
        switch response {
        case .registration(let value): try container.encode(value, forKey: .response)
        case .authentication(let value): try container.encode(value, forKey: .response)
        }
        try container.encode(expectedChallenge, forKey: .expectedChallenge)
        try container.encode(origins, forKey: .origins)
        try container.encode(rpID, forKey: .rpID)
        try container.encode(requireUserVerification, forKey: .requireUserVerification)
        try container.encode(requireUserPresence, forKey: .requireUserPresence)
        try container.encodeIfPresent(allowedAlgorithms, forKey: .allowedAlgorithms)
        try container.encodeIfPresent(credentialPublicKey, forKey: .credentialPublicKey)
        try container.encodeIfPresent(signCount, forKey: .signCount)
        try container.encodeIfPresent(backupEligible, forKey: .backupEligible)
        try container.encodeIfPresent(backedUp, forKey: .backedUp)
        try container.encodeIfPresent(userHandle, forKey: .userHandle)
        try container.encodeIfPresent(now, forKey: .now)
        try container.encodeIfPresent(trustAnchors, forKey: .trustAnchors)
    }
}
