import Foundation

/// A logout token (OpenID Connect Back-Channel Logout 1.0 §2.4), POSTed as
/// `logout_token` to each client's `backchannel_logout_uri`. Header `typ: logout+jwt`
/// (RFC 8725 §3.11) so it can never pass as an ID token; it has no `nonce` for the same
/// reason.
public struct LogoutToken: Sendable, Equatable {
    public static let event = "http://schemas.openid.net/event/backchannel-logout"

    public var issuer: String
    public var audience: String
    public var issuedAt: Date
    /// Short (two minutes is suggested, §4) so a captured token cannot be replayed later.
    public var expiresAt: Date
    public var jwtID: String
    public var subject: String?
    public var sessionID: String?

    public init(
        issuer: String, audience: String, issuedAt: Date, expiresAt: Date, jwtID: String, subject: String?,
        sessionID: String?
    ) {
        self.issuer = issuer
        self.audience = audience
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.jwtID = jwtID
        self.subject = subject
        self.sessionID = sessionID
    }

    public var json: [String: JSONValue] {
        var claims: [String: JSONValue] = [
            "iss": .string(issuer), "aud": .string(audience),
            "iat": .int(Int(issuedAt.timeIntervalSince1970)),
            "exp": .int(Int(expiresAt.timeIntervalSince1970)), "jti": .string(jwtID),
            "events": .object([Self.event: .object([:])]),
        ]
        if let subject { claims["sub"] = .string(subject) }
        if let sessionID { claims["sid"] = .string(sessionID) }
        return claims
    }

    /// Signs the token. A token with neither `sub` nor `sid` is invalid (§2.4) and refused.
    public func sign(with signer: JWSSigner) throws(JOSEError) -> String {
        guard subject != nil || sessionID != nil else { throw .missingClaim("sub or sid") }
        return try signer.sign(payload: JSONBody.encode(json), type: "logout+jwt")
    }
}
