import Crypto
import Foundation

/// The client credentials found in a token, revocation or introspection request, before
/// they are checked.
public enum PresentedClientCredentials: Sendable, Equatable {
    /// HTTP Basic (`client_secret_basic`).
    case basic(clientID: String, secret: String)
    /// `client_id` and `client_secret` in the body (`client_secret_post`).
    case post(clientID: String, secret: String)
    /// `client_assertion` (`private_key_jwt`, RFC 7523 §2.2).
    case assertion(clientID: String, jwt: String)
    /// Only `client_id` (public clients).
    case none(clientID: String)

    /// The client to look up.
    public var clientID: String {
        switch self {
        case .basic(let id, _), .post(let id, _), .assertion(let id, _), .none(let id): return id
        }
    }

    public var method: OAuthClient.AuthMethod {
        switch self {
        case .basic: return .clientSecretBasic
        case .post: return .clientSecretPost
        case .assertion: return .privateKeyJWT
        case .none: return .none
        }
    }
}

/// A client whose credentials were verified.
public struct AuthenticatedClient: Sendable, Equatable {
    public var client: OAuthClient
    public var method: OAuthClient.AuthMethod
    /// For `private_key_jwt`: the assertion's `jti` and `exp`. The caller must record the
    /// `jti` until `exp` and refuse a second use (RFC 7523 §3 item 7), e.g. with a unique
    /// index; a repeat is `invalid_client`.
    public var assertionID: String?
    public var assertionExpiresAt: Date?
}

/// Client authentication at the token, revocation and introspection endpoints (RFC 6749
/// §2.3, RFC 7523 §2.2): first `extract` (no client needed), then look up the client by
/// `clientID`, then `authenticate`.
public enum ClientAuthentication {
    public static let jwtBearerAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// The `WWW-Authenticate` value for a 401 after a failed HTTP Basic attempt.
    public static let basicChallenge = "Basic realm=\"oauth\", charset=\"UTF-8\""

    /// Finds exactly one authentication method in the request.
    /// - Parameters:
    ///   - authorization: the `Authorization` header value, if any.
    ///   - parameters: the form body.
    public static func extract(
        authorization: String?, parameters: Parameters
    ) throws(OAuthError) -> PresentedClientCredentials {
        try parameters.rejectDuplicates(of: [
            "client_id", "client_secret", "client_assertion", "client_assertion_type",
        ])
        let bodyClientID = try parameters.value("client_id")
        let bodySecret = try parameters.value("client_secret")
        let assertion = try parameters.value("client_assertion")
        let assertionType = try parameters.value("client_assertion_type")
        let basic = try authorization.flatMap { header throws(OAuthError) in try parseBasic(header) }

        let methods = [basic != nil, bodySecret != nil, assertion != nil || assertionType != nil].filter {
            $0
        }.count
        guard methods <= 1 else {
            throw .invalidRequest("Use exactly one client authentication method.")
        }
        if let basic {
            if let bodyClientID, bodyClientID != basic.id {
                throw .invalidRequest("The 'client_id' parameter does not match the authenticated client.")
            }
            return .basic(clientID: basic.id, secret: basic.secret)
        }
        if let bodySecret {
            guard let bodyClientID else { throw .invalidRequest("The 'client_id' parameter is missing.") }
            return .post(clientID: bodyClientID, secret: bodySecret)
        }
        if assertion != nil || assertionType != nil {
            guard assertionType == jwtBearerAssertionType else {
                throw OAuthError(.invalidClient, hint: "The 'client_assertion_type' is not supported.")
            }
            guard let assertion else { throw .invalidRequest("The 'client_assertion' parameter is missing.") }
            guard let subject = unverifiedSubject(of: assertion) else {
                throw OAuthError(.invalidClient, hint: "The client assertion is malformed.")
            }
            if let bodyClientID, bodyClientID != subject {
                throw .invalidRequest("The 'client_id' parameter does not match the client assertion.")
            }
            return .assertion(clientID: subject, jwt: assertion)
        }
        guard let bodyClientID else {
            throw OAuthError(.invalidClient, hint: "The client did not identify itself.")
        }
        return .none(clientID: bodyClientID)
    }

    /// How long past its `exp` a client assertion is still accepted (clock skew).
    public static let assertionLeeway: TimeInterval = 60

    /// Verifies `credentials` for `client` (nil when no client has that id).
    ///
    /// The method must be the client's registered one (a public client presenting a secret
    /// is refused, as is a confidential client presenting none).
    /// - Parameters:
    ///   - audiences: values a client assertion's `aud` may contain: the token endpoint
    ///     URL and the issuer identifier.
    ///   - maxAssertionLifetime: how far in the future an assertion's `exp` may lie.
    public static func authenticate(
        _ credentials: PresentedClientCredentials, client: OAuthClient?, audiences: [String], now: Date,
        maxAssertionLifetime: TimeInterval = 300, leeway: TimeInterval = assertionLeeway
    ) throws(OAuthError) -> AuthenticatedClient {
        let challenge = credentials.method == .clientSecretBasic ? basicChallenge : nil
        func refuse(_ hint: String, _ debug: String) -> OAuthError {
            OAuthError(.invalidClient, hint: hint, debug: debug, wwwAuthenticate: challenge)
        }
        guard let client, client.clientID == credentials.clientID else {
            throw refuse("The client is unknown or its credentials are wrong.", "unknown client")
        }
        guard client.tokenEndpointAuthMethod == credentials.method else {
            throw refuse(
                "The client must authenticate with its registered method.",
                "registered=\(client.tokenEndpointAuthMethod.rawValue) presented=\(credentials.method.rawValue)"
            )
        }
        switch credentials {
        case .basic(_, let secret), .post(_, let secret):
            guard let hash = client.clientSecretHash, ClientSecret.verify(secret, against: hash) else {
                throw refuse("The client is unknown or its credentials are wrong.", "secret mismatch")
            }
            return AuthenticatedClient(client: client, method: credentials.method)
        case .assertion(_, let jwt):
            return try verifyAssertion(
                jwt, client: client, audiences: audiences, now: now,
                maxLifetime: maxAssertionLifetime, leeway: leeway)
        case .none:
            return AuthenticatedClient(client: client, method: .none)
        }
    }

    /// The `typ` values of a client assertion, when it has one: RFC 7523 names none;
    /// `client-authentication+jwt` is the explicit type of its revision.
    static let assertionTypes = ["JWT", "client-authentication+jwt"]

    static func verifyAssertion(
        _ jwt: String, client: OAuthClient, audiences: [String], now: Date, maxLifetime: TimeInterval,
        leeway: TimeInterval
    ) throws(OAuthError) -> AuthenticatedClient {
        func refuse(_ hint: String, _ debug: String) -> OAuthError {
            OAuthError(.invalidClient, hint: hint, debug: debug)
        }
        guard let keys = client.jwks else { throw refuse("The client has no registered keys.", "no jwks") }
        let claims: JWTRegisteredClaims
        do {
            let verified = try JWSVerifier(keys: keys, allowedAlgorithms: client.signingAlgorithms).verify(jwt)
            // Explicit typing (RFC 8725 §3.11): a JWT the client signed for another purpose (a
            // request object, `oauth-authz-req+jwt`, seen by the browser) is no assertion.
            guard verified.header.type == nil || Self.assertionTypes.contains(where: verified.hasType) else {
                throw JOSEError.typeMismatch
            }
            claims = try JWTClaimsValidator(
                issuer: client.clientID, audience: nil, leeway: leeway, requireExpiration: true
            )
            .validate(verified.payload, now: now)
        } catch {
            throw refuse("The client assertion is invalid.", "assertion: \(error)")
        }
        guard claims.subject == client.clientID else {
            throw refuse("The client assertion is invalid.", "assertion: sub is not the client id")
        }
        guard claims.audience.contains(where: audiences.contains) else {
            throw refuse("The client assertion is invalid.", "assertion: audience mismatch")
        }
        guard let exp = claims.expiresAt, exp.timeIntervalSince(now) <= maxLifetime + leeway else {
            throw refuse("The client assertion is invalid.", "assertion: exp too far in the future")
        }
        guard let jti = claims.jwtID, !jti.isEmpty else {
            throw refuse("The client assertion is invalid.", "assertion: jti missing")
        }
        return AuthenticatedClient(
            client: client, method: .privateKeyJWT, assertionID: jti, assertionExpiresAt: exp)
    }

    /// `Basic base64(urlencode(id) ":" urlencode(secret))` (RFC 6749 §2.3.1). Other schemes
    /// are not client authentication and are ignored.
    static func parseBasic(_ header: String) throws(OAuthError) -> (id: String, secret: String)? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count >= 1, parts[0].lowercased() == "basic" else { return nil }
        func malformed() -> OAuthError {
            OAuthError(
                .invalidClient, hint: "The HTTP Basic credentials are malformed.",
                wwwAuthenticate: basicChallenge)
        }
        guard parts.count == 2,
            let data = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8),
            let colon = text.firstIndex(of: ":"),
            let id = FormEncoding.decode(text[..<colon]),
            let secret = FormEncoding.decode(text[text.index(after: colon)...]),
            !id.isEmpty
        else { throw malformed() }
        return (id, secret)
    }

    /// The `sub` (else `iss`) of an assertion, read before verification only to find the
    /// client whose keys verify it.
    static func unverifiedSubject(of jwt: String) -> String? {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let payload = try? Base64URL.decode(String(parts[1])),
            let claims = try? JWTClaimsValidator.parse(payload)
        else { return nil }
        return claims.subject ?? claims.issuer
    }
}
