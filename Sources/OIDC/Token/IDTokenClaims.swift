import Crypto
import Foundation

/// The claims of an ID token (OpenID Connect Core §2, §3.1.3.6), serialised with
/// `JWSSigner` using the client's `id_token_signed_response_alg`.
public struct IDTokenClaims: Sendable, Equatable {
    public var issuer: String
    public var subject: String
    public var audience: String
    public var expiresAt: Date
    public var issuedAt: Date
    /// Always included: clients using `max_age` need it and it costs nothing.
    public var authTime: Date
    public var nonce: String?
    public var acr: String?
    public var amr: [String]
    public var sessionID: String?
    public var accessTokenHash: String?
    /// Profile/email claims, only those requested via `claims` (see `IDTokenClaims.selecting`).
    public var userClaims: [String: JSONValue]

    public init(
        issuer: String, subject: String, audience: String, expiresAt: Date, issuedAt: Date, authTime: Date,
        nonce: String?, acr: String? = nil, amr: [String], sessionID: String?, accessTokenHash: String?,
        userClaims: [String: JSONValue] = [:]
    ) {
        self.issuer = issuer
        self.subject = subject
        self.audience = audience
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.authTime = authTime
        self.nonce = nonce
        self.acr = acr
        self.amr = amr
        self.sessionID = sessionID
        self.accessTokenHash = accessTokenHash
        self.userClaims = userClaims
    }

    /// The JSON members. `azp` equals `aud` (a single audience), which Core §2 allows and
    /// some client libraries expect. Registered claims override any user claim of the
    /// same name.
    public var json: [String: JSONValue] {
        var claims = userClaims
        claims["iss"] = .string(issuer)
        claims["sub"] = .string(subject)
        claims["aud"] = .string(audience)
        claims["azp"] = .string(audience)
        claims["exp"] = .int(Int(expiresAt.timeIntervalSince1970))
        claims["iat"] = .int(Int(issuedAt.timeIntervalSince1970))
        claims["auth_time"] = .int(Int(authTime.timeIntervalSince1970))
        if let nonce { claims["nonce"] = .string(nonce) }
        if let acr { claims["acr"] = .string(acr) }
        if !amr.isEmpty { claims["amr"] = .array(amr.map(JSONValue.string)) }
        if let sessionID { claims["sid"] = .string(sessionID) }
        if let accessTokenHash { claims["at_hash"] = .string(accessTokenHash) }
        return claims
    }

    /// The signed ID token (`typ: JWT`).
    public func sign(with signer: JWSSigner) throws(JOSEError) -> String {
        try signer.sign(payload: JSONBody.encode(json), type: "JWT")
    }

    /// From `available` user claims, those requested and released (profile/email only).
    public static func selecting(_ requested: Set<String>, from available: [String: JSONValue]) -> [String:
        JSONValue]
    {
        available.filter { requested.contains($0.key) && Scopes.scope(releasing: $0.key) != nil }
    }

    /// `at_hash` (Core §3.1.3.6): base64url of the left half of the hash of the access
    /// token's ASCII bytes, the hash being the one of the ID token's `alg`: SHA-256 for
    /// RS256, PS256 and ES256. `EdDSA` names no hash of its own; for Ed25519 (the only
    /// EdDSA curve here) the hash is SHA-512, the one Ed25519 uses internally (RFC 8032
    /// §5.1), so its left 32 bytes are used. This is the OpenID Connect working group's
    /// resolution (openid/connect issue 1125), not yet in a published errata text, and what
    /// zitadel/oidc and openidconnect-rs implement; clients that cannot compute it should
    /// not choose EdDSA for ID tokens.
    public static func accessTokenHash(_ accessToken: String, algorithm: JWSAlgorithm) -> String {
        let bytes = Array(accessToken.utf8)
        switch algorithm {
        case .RS256, .PS256, .ES256:
            return Base64URL.encode(SHA256.hash(data: bytes).bytes.prefix(16))
        case .EdDSA:
            return Base64URL.encode(SHA512.hash(data: bytes).bytes.prefix(32))
        }
    }
}
