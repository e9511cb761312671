import Foundation

/// A token introspection request (RFC 7662 §2.1), from an authenticated client.
public struct IntrospectionRequest: Sendable, Equatable {
    public var token: String
    public var tokenTypeHint: RevocationRequest.TokenTypeHint?

    public static func parse(_ parameters: Parameters) throws(OAuthError) -> IntrospectionRequest {
        try parameters.rejectDuplicates(of: ["token", "token_type_hint"])
        return IntrospectionRequest(
            token: try parameters.required("token"),
            tokenTypeHint: try parameters.value("token_type_hint").flatMap(
                RevocationRequest.TokenTypeHint.init(rawValue:)))
    }

    /// The request of `client`, which must have authenticated: RFC 7662 §2.1 requires some
    /// authorization, and a public client could otherwise probe any token it came across.
    /// Checked before the parameters are read.
    public static func parse(_ parameters: Parameters, from client: AuthenticatedClient) throws(OAuthError)
        -> IntrospectionRequest
    {
        guard client.method != .none else {
            throw OAuthError(.invalidClient, hint: "Introspection is only for clients that authenticate.")
        }
        return try parse(parameters)
    }
}

/// The introspection response (RFC 7662 §2.2). Anything unknown, expired, revoked or not
/// meant for the asking client is `inactive`, with no further detail (§2.2, §4).
public enum IntrospectionResponse: Sendable, Equatable {
    case inactive
    case active(ActiveToken)

    public struct ActiveToken: Sendable, Equatable {
        public var scope: [String]
        public var clientID: String
        public var username: String?
        /// `Bearer` for access tokens, `refresh_token` for refresh tokens.
        public var tokenType: String
        public var expiresAt: Date?
        public var issuedAt: Date?
        public var subject: String?
        public var audience: [String]
        public var issuer: String
        public var jwtID: String?
        /// The API's configured account claims (`roles`, `groups`); never a registered one.
        public var extraClaims: [String: JSONValue] = [:]
        /// The DPoP key an access token is bound to: `cnf.jkt` (RFC 9449 §6.2).
        public var confirmationJKT: String? = nil

        public init(
            scope: [String], clientID: String, username: String? = nil, tokenType: String, expiresAt: Date?,
            issuedAt: Date?, subject: String?, audience: [String], issuer: String, jwtID: String? = nil
        ) {
            self.scope = scope
            self.clientID = clientID
            self.username = username
            self.tokenType = tokenType
            self.expiresAt = expiresAt
            self.issuedAt = issuedAt
            self.subject = subject
            self.audience = audience
            self.issuer = issuer
            self.jwtID = jwtID
        }
    }

    public var json: [String: JSONValue] {
        guard case .active(let token) = self else { return ["active": .bool(false)] }
        var body: [String: JSONValue] = [
            "active": .bool(true), "client_id": .string(token.clientID),
            "token_type": .string(token.tokenType),
            "iss": .string(token.issuer),
        ]
        if !token.scope.isEmpty { body["scope"] = .string(token.scope.joined(separator: " ")) }
        if let username = token.username { body["username"] = .string(username) }
        if let exp = token.expiresAt { body["exp"] = .int(Int(exp.timeIntervalSince1970)) }
        if let iat = token.issuedAt { body["iat"] = .int(Int(iat.timeIntervalSince1970)) }
        if let sub = token.subject { body["sub"] = .string(sub) }
        if token.audience.count == 1, let only = token.audience.first {
            body["aud"] = .string(only)
        } else if !token.audience.isEmpty {
            body["aud"] = .array(token.audience.map(JSONValue.string))
        }
        if let jti = token.jwtID { body["jti"] = .string(jti) }
        if let jkt = token.confirmationJKT { body["cnf"] = .object(["jkt": .string(jkt)]) }
        body.merge(token.extraClaims) { registered, _ in registered }
        return body
    }

    public var jsonBody: [UInt8] { JSONBody.encode(json) }
}

extension IntrospectionResponse {
    /// The media type a caller sends in `Accept` to get the answer as a signed JWT (RFC 9701 §4).
    public static let jwtMediaType = "application/token-introspection+jwt"

    /// Whether an `Accept` header asks for the signed answer (RFC 9701 §4): one of its media
    /// ranges is exactly `application/token-introspection+jwt` (parameters ignored).
    public static func wantsJWT(accept: String?) -> Bool {
        guard let accept else { return false }
        return accept.split(separator: ",").contains { range in
            range.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
                == jwtMediaType
        }
    }

    /// RFC 9701 §5: the answer as a JWT signed by this server, `typ`
    /// `token-introspection+jwt`, with `iss`, `aud` (the caller's id), `iat`, and the RFC 7662
    /// answer as the `token_introspection` claim. The resource server can then rely on the
    /// answer even when it passed through other hands, and keep it as evidence.
    public func signed(issuer: String, audience: String, issuedAt: Date, signer: JWSSigner) throws(JOSEError)
        -> String
    {
        let claims: [String: JSONValue] = [
            "iss": .string(issuer), "aud": .string(audience),
            "iat": .int(Int(issuedAt.timeIntervalSince1970)),
            "token_introspection": .object(json),
        ]
        return try signer.sign(payload: JSONBody.encode(claims), type: "token-introspection+jwt")
    }
}
