import Foundation

/// A JWT access token per RFC 9068 (header `typ: at+jwt`), so resource servers can
/// validate it without introspection.
public struct AccessTokenClaims: Sendable, Equatable {
    public var issuer: String
    /// The resource (`aud`); this server's userinfo endpoint uses the issuer.
    public var audience: String
    /// The user, or the client id for client credentials (RFC 9068 §2.2).
    public var subject: String
    public var clientID: String
    public var expiresAt: Date
    public var issuedAt: Date
    public var jwtID: String
    public var scope: [String]
    public var authTime: Date?
    public var acr: String?
    public var amr: [String]
    /// Claims an API's configuration adds (`roles`, `groups`); never one of the above.
    public var extraClaims: [String: JSONValue] = [:]
    /// The DPoP key the token is bound to: `cnf: {"jkt": …}` (RFC 9449 §6.1).
    public var confirmationJKT: String? = nil
    /// `gty`: `client_credentials` on a client's own token. Such a token concerns no account,
    /// session or refresh-token family, so it is issued without a record; the claim, signed
    /// with the rest, is what tells a reader not to look for one.
    public var grantType: String? = nil

    public static let clientCredentials = "client_credentials"

    /// A client's own token (client_credentials), as its signed `gty` says.
    public var isClientCredentials: Bool { grantType == Self.clientCredentials }

    /// The claims an API may receive besides the registered ones.
    public static let extraClaimNames: [String] = ProtectedResource.TokenClaim.allCases.map(\.rawValue)

    public init(
        issuer: String, audience: String, subject: String, clientID: String, expiresAt: Date, issuedAt: Date,
        jwtID: String, scope: [String], authTime: Date?, acr: String? = nil, amr: [String] = []
    ) {
        self.issuer = issuer
        self.audience = audience
        self.subject = subject
        self.clientID = clientID
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        self.jwtID = jwtID
        self.scope = scope
        self.authTime = authTime
        self.acr = acr
        self.amr = amr
    }

    public var json: [String: JSONValue] {
        var claims: [String: JSONValue] = extraClaims
        claims.merge([
            "iss": .string(issuer), "aud": .string(audience), "sub": .string(subject),
            "client_id": .string(clientID),
            "exp": .int(Int(expiresAt.timeIntervalSince1970)),
            "iat": .int(Int(issuedAt.timeIntervalSince1970)),
            "jti": .string(jwtID),
        ]) { _, registered in registered }
        if !scope.isEmpty { claims["scope"] = .string(scope.joined(separator: " ")) }
        if let authTime { claims["auth_time"] = .int(Int(authTime.timeIntervalSince1970)) }
        if let acr { claims["acr"] = .string(acr) }
        if !amr.isEmpty { claims["amr"] = .array(amr.map(JSONValue.string)) }
        if let confirmationJKT { claims["cnf"] = .object(["jkt": .string(confirmationJKT)]) }
        // Only `grantType` writes `gty`: an extra claim of that name never reaches a token.
        claims["gty"] = grantType.map(JSONValue.string)
        return claims
    }

    /// The `typ` of an access token (RFC 9068 §2.1).
    public static let type = "at+jwt"

    /// The signed access token (`typ: at+jwt`, RFC 9068 §2.1).
    public func sign(with signer: JWSSigner) throws(JOSEError) -> String {
        try signer.sign(payload: JSONBody.encode(json), type: Self.type)
    }

    /// Verifies an access token presented to a resource (e.g. userinfo): signature with
    /// this server's keys, `typ` `at+jwt`, `iss`, `aud`, `exp` (RFC 9068 §4). Revocation
    /// is the caller's concern (look up `jti`).
    public static func verify(
        _ token: String, verifier: JWSVerifier, issuer: String, audience: String, now: Date,
        leeway: TimeInterval = 60
    ) throws(JOSEError) -> AccessTokenClaims {
        try verify(token, verifier: verifier, issuer: issuer, audiences: [audience], now: now, leeway: leeway)
    }

    /// Like `verify(_:verifier:issuer:audience:now:leeway:)`, accepting any one of
    /// `audiences` (this server's and the configured APIs' identifiers, for a client that
    /// introspects its own tokens). `audience` of the result is the token's.
    public static func verify(
        _ token: String, verifier: JWSVerifier, issuer: String, audiences: [String], now: Date,
        leeway: TimeInterval = 60
    ) throws(JOSEError) -> AccessTokenClaims {
        try validate(
            verifier.verify(token, expectedType: type), issuer: issuer, audiences: audiences, now: now,
            leeway: leeway)
    }

    /// The checks of `verify(_:verifier:issuer:audiences:now:leeway:)` after the signature's,
    /// for a caller that verified the JWS already (and read other claims from it first).
    public static func validate(
        _ verified: VerifiedJWS, issuer: String, audiences: [String], now: Date, leeway: TimeInterval = 60
    ) throws(JOSEError) -> AccessTokenClaims {
        guard verified.hasType(type) else { throw .typeMismatch }
        let registered = try JWTClaimsValidator(issuer: issuer, audience: nil, leeway: leeway)
            .validate(verified.payload, now: now)
        guard !registered.audience.isEmpty else { throw .missingClaim("aud") }
        guard let audience = registered.audience.first(where: audiences.contains) else {
            throw .audienceMismatch
        }
        let raw = try verified.decodePayload(as: [String: JSONValue].self)
        guard let subject = registered.subject, let expiresAt = registered.expiresAt,
            let issuedAt = registered.issuedAt, let jwtID = registered.jwtID,
            let clientID = raw["client_id"]?.stringValue
        else { throw .missingClaim("sub/client_id/iat/jti") }
        var claims = AccessTokenClaims(
            issuer: issuer, audience: audience, subject: subject, clientID: clientID, expiresAt: expiresAt,
            issuedAt: issuedAt, jwtID: jwtID, scope: SpaceList.split(raw["scope"]?.stringValue),
            authTime: raw["auth_time"]?.intValue.map { Date(timeIntervalSince1970: Double($0)) },
            acr: raw["acr"]?.stringValue, amr: raw["amr"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        for name in extraClaimNames { claims.extraClaims[name] = raw[name] }
        claims.grantType = raw["gty"]?.stringValue
        if let cnf = raw["cnf"] {
            guard case .object(let members) = cnf, let jkt = members["jkt"]?.stringValue else {
                throw .invalidClaim("cnf")
            }
            claims.confirmationJKT = jkt
        }
        return claims
    }
}
