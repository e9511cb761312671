import Foundation
import OIDC

/// The code exchange at an upstream provider's token endpoint (RFC 6749 §4.1.3, with the PKCE
/// `code_verifier` of RFC 7636 §4.5) over `OutgoingFetch.post`.
///
/// Client authentication: a generic provider's configured secret with `client_secret_basic`,
/// its key with `private_key_jwt`, or none (a public client, PKCE only); for Apple, `AppleClient` with its client secret (an
/// ES256 JWT signed with the developer key).
struct UpstreamTokenClient: Sendable {
    enum Failure: Error, Equatable {
        case fetch(OutgoingFetchError)
        /// The provider refused the code (its `error`, e.g. `invalid_grant`).
        case refused(status: Int, error: String)
        case malformed
        case clientSecret
    }

    struct Tokens: Sendable {
        var idToken: String
        var refreshToken: String?
    }

    private struct Answer: Decodable {
        var idToken: String?
        var refreshToken: String?
        var error: String?

        enum CodingKeys: String, CodingKey {
            case idToken = "id_token"
            case refreshToken = "refresh_token"
            case error
        }
    }

    let provider: UpstreamProvider
    let now: Date
    /// The `jti` of a `private_key_jwt` assertion: random, one per request.
    var assertionID = ""

    func exchange(code: String, codeVerifier: String, redirectURI: String, tokenEndpoint: String)
        throws(Failure) -> Tokens
    {
        var form: [(String, String)] = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
            ("code_verifier", codeVerifier),
        ]
        var basic: (String, String)?
        switch provider.kind {
        case .oidc(let settings):
            if let secret = settings.clientSecret {
                basic = (settings.clientID, secret)
            } else if let key = settings.clientKey {
                form.append(("client_id", settings.clientID))
                form.append(
                    ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"))
                form.append(
                    ("client_assertion", try assertion(settings.clientID, key: key, audience: tokenEndpoint)))
            } else {
                form.append(("client_id", settings.clientID))
            }
        case .apple(let settings):
            // Apple's own client (one client secret per hour, shared with token exchange). Apple
            // documents no PKCE at its token endpoint; the nonce binds its ID token to the request.
            guard let servicesID = settings.servicesID else { throw .clientSecret }
            do {
                let tokens = try AppleClient.shared.exchange(
                    code: code, clientID: servicesID, redirectURI: redirectURI, provider: provider, now: now)
                return Tokens(idToken: tokens.idToken, refreshToken: tokens.refreshToken)
            } catch .refused(let error) {
                throw .refused(status: 400, error: String(error.prefix(64)))
            } catch {
                throw .malformed
            }
        }
        let answer: (status: Int, body: [UInt8])
        do {
            answer = try provider.fetch.post(tokenEndpoint, form: form, basicAuth: basic)
        } catch {
            throw .fetch(error)
        }
        guard let decoded = try? JSONDecoder().decode(Answer.self, from: Data(answer.body)) else {
            throw answer.status == 200 ? .malformed : .refused(status: answer.status, error: "malformed")
        }
        guard answer.status == 200 else {
            throw .refused(status: answer.status, error: String((decoded.error ?? "unknown").prefix(64)))
        }
        guard let idToken = decoded.idToken else { throw .malformed }
        return Tokens(idToken: idToken, refreshToken: decoded.refreshToken)
    }

    /// The `private_key_jwt` assertion (OpenID Connect Core §9, RFC 7523 §3): `iss` and `sub` the
    /// client id, `aud` the token endpoint, a one-time `jti`, valid for a minute.
    private func assertion(_ clientID: String, key: UpstreamProvider.ClientKey, audience: String)
        throws(Failure)
        -> String
    {
        struct Claims: Encodable {
            var iss: String
            var sub: String
            var aud: String
            var jti: String
            var iat: Int
            var exp: Int
        }
        let issued = Int(now.timeIntervalSince1970)
        do {
            return try JWSSigner(privateKey: key.key, algorithm: key.algorithm, keyID: key.keyID).sign(
                claims: Claims(
                    iss: clientID, sub: clientID, aud: audience, jti: assertionID, iat: issued,
                    exp: issued + 60))
        } catch {
            throw .clientSecret
        }
    }
}
