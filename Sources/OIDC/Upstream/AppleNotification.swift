import Crypto
import Foundation

/// One server-to-server notification from Sign in with Apple: Apple POSTs
/// `{"payload": "<JWS>"}`, a JWS signed with the keys it publishes for identity tokens, whose
/// claims are `iss`, `aud` (the services id or bundle id the user signed in to), `iat`, `jti`
/// and `events`, a JSON string holding `type`, `sub`, `email`, `is_private_email` and
/// `event_time`.
/// - SeeAlso: Apple, "Processing changes for Sign in with Apple accounts".
public struct AppleNotification: Sendable, Equatable {
    public enum EventType: String, Sendable, CaseIterable {
        /// The user stopped using Sign in with Apple with this app: the link is gone.
        case consentRevoked = "consent-revoked"
        /// The user deleted their Apple Account.
        case accountDelete = "account-delete"
        /// The user stopped mail forwarding to their private relay address.
        case emailDisabled = "email-disabled"
        /// The user turned mail forwarding to their private relay address back on.
        case emailEnabled = "email-enabled"
    }

    /// The `aud` that matched one of this server's client ids.
    public var audience: String
    public var issuedAt: Date
    public var jwtID: String
    /// The event's `type` as sent; `type` is nil for one this server does not know.
    public var typeName: String
    public var type: EventType? { EventType(rawValue: typeName) }
    /// The Apple user id (`sub` of that user's identity tokens).
    public var subject: String
    public var email: String?
    public var isPrivateEmail: Bool?
}

/// Why a notification was refused; nothing is done for any of them.
public enum AppleNotificationError: Error, Equatable, Sendable {
    case malformed
    case unknownKey
    case signature
    case issuer
    case audience
    /// `iat` older than the verifier's window: a replay of an event whose `jti` may be forgotten.
    case stale
    case issuedInFuture
    /// No `jti`: a replay could not be told apart.
    case missingJWTID
    /// `events` is not the JSON the notification must carry.
    case events

    /// The reason for logs and the JSON error.
    public var reason: String {
        switch self {
        case .malformed: return "malformed"
        case .unknownKey: return "unknown_key"
        case .signature: return "signature"
        case .issuer: return "issuer"
        case .audience: return "audience"
        case .stale: return "stale"
        case .issuedInFuture: return "issued_in_future"
        case .missingJWTID: return "missing_jti"
        case .events: return "events"
        }
    }
}

/// Verifies a notification: signature with Apple's keys (RS256 only), then `iss`, `aud` (one of
/// `audiences`), `iat` within `maximumAge`, `jti` present, then the `events` member.
/// Whether the `jti` was seen before is the caller's question (it needs storage).
public struct AppleNotificationVerifier: Sendable {
    public static let issuer = "https://appleid.apple.com"
    public var audiences: [String]
    public var keys: JWKS
    /// How old an `iat` may be; the caller keeps each `jti` at least this long.
    public var maximumAge: TimeInterval
    public var leeway: TimeInterval

    public init(audiences: [String], keys: JWKS, maximumAge: TimeInterval = 3600, leeway: TimeInterval = 300)
    {
        self.audiences = audiences
        self.keys = keys
        self.maximumAge = maximumAge
        self.leeway = leeway
    }

    /// The `kid` of a compact JWS's header, to pick (or fetch) the key set before verifying;
    /// nil when the header is unreadable or has none.
    public static func keyID(of compact: String) -> String? {
        guard let first = compact.split(separator: ".", omittingEmptySubsequences: false).first,
            let bytes = try? Base64URL.decode(String(first)),
            let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else { return nil }
        return object["kid"] as? String
    }

    public func verify(_ compact: String, now: Date) throws(AppleNotificationError) -> AppleNotification {
        // Step 1. The signature, with one of Apple's keys.
        let verified: VerifiedJWS
        do {
            verified = try JWSVerifier(keys: keys, allowedAlgorithms: [.RS256]).verify(compact)
        } catch {
            switch error {
            case .unknownKeyID: throw .unknownKey
            case .signatureInvalid, .algorithmKeyMismatch, .unsupportedAlgorithm: throw .signature
            default: throw .malformed
            }
        }
        // Step 2. `iss`, `iat` (the payload has no `exp`).
        let claims: JWTRegisteredClaims
        do {
            claims = try JWTClaimsValidator(
                issuer: Self.issuer, audience: nil, leeway: leeway, requireExpiration: false
            ).validate(verified.payload, now: now)
        } catch {
            switch error {
            case .issuerMismatch, .missingClaim("iss"): throw .issuer
            case .issuedInFuture: throw .issuedInFuture
            default: throw .malformed
            }
        }
        // Step 3. `aud`: one of this server's services id and bundle ids.
        guard let audience = claims.audience.first(where: audiences.contains) else { throw .audience }
        // Step 4. `iat` recent enough that its `jti` is still remembered.
        guard let issuedAt = claims.issuedAt else { throw .malformed }
        guard now.timeIntervalSince(issuedAt) <= maximumAge else { throw .stale }
        guard let jwtID = claims.jwtID, !jwtID.isEmpty else { throw .missingJWTID }
        // Step 5. `events`: a JSON string (an object is accepted too) with `type` and `sub`.
        guard let payload = try? JSONSerialization.jsonObject(with: Data(verified.payload)) as? [String: Any]
        else { throw .malformed }
        let event: [String: Any]
        if let text = payload["events"] as? String,
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        {
            event = object
        } else if let object = payload["events"] as? [String: Any] {
            event = object
        } else {
            throw .events
        }
        guard let type = event["type"] as? String, let subject = event["sub"] as? String, !subject.isEmpty
        else {
            throw .events
        }
        return AppleNotification(
            audience: audience, issuedAt: issuedAt, jwtID: jwtID, typeName: type, subject: subject,
            email: event["email"] as? String, isPrivateEmail: Self.flag(event["is_private_email"]))
    }

    /// Apple sends flags as JSON booleans or as the strings "true"/"false".
    static func flag(_ value: Any?) -> Bool? {
        if let text = value as? String { return text == "true" ? true : text == "false" ? false : nil }
        if let number = value as? NSNumber { return number.boolValue }
        return nil
    }
}
