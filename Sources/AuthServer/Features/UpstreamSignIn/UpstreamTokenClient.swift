import Foundation
import OIDC

/// The code exchange at an upstream provider's token endpoint (RFC 6749 §4.1.3, with the PKCE
/// `code_verifier` of RFC 7636 §4.5) over `OutgoingFetch.post`.
///
/// Client authentication: a generic provider's configured secret with `client_secret_basic`,
/// or none (a public client, PKCE only); Apple's client secret, an ES256 JWT signed with the
/// developer key (Sign in with Apple REST API, "Creating a client secret").
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
            } else {
                form.append(("client_id", settings.clientID))
            }
        case .apple(let settings):
            guard let servicesID = settings.servicesID else { throw .clientSecret }
            form.append(("client_id", servicesID))
            form.append(
                ("client_secret", try Self.appleClientSecret(settings, clientID: servicesID, now: now)))
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

    private struct AppleSecretClaims: Encodable {
        var iss: String
        var iat: Int
        var exp: Int
        var aud: String
        var sub: String
    }

    /// Apple's client secret: header `alg` ES256 and `kid` the key id; `iss` the team id,
    /// `sub` the client id, `aud` https://appleid.apple.com, a short lifetime (Apple allows up
    /// to six months; a fresh one per exchange costs one signature).
    static func appleClientSecret(
        _ settings: UpstreamProvider.AppleSettings, clientID: String, now: Date
    ) throws(Failure) -> String {
        let issuedAt = Int(now.timeIntervalSince1970)
        do {
            let signer = try JWSSigner(
                privateKey: .p256(settings.privateKey.key), algorithm: .ES256, keyID: settings.keyID)
            return try signer.sign(
                claims: AppleSecretClaims(
                    iss: settings.teamID, iat: issuedAt, exp: issuedAt + 300,
                    aud: UpstreamProvider.appleIssuer,
                    sub: clientID), type: nil)
        } catch {
            throw .clientSecret
        }
    }
}
