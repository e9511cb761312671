import Foundation
import OIDC
import Synchronization

/// This server as a client of Sign in with Apple's REST API: redeeming an authorization code
/// (`/auth/token`) and revoking a token (`/auth/revoke`), each authenticated with an
/// `AppleClientSecret` for the client id the code or token was issued to (the Services ID for
/// the web flow, the app's bundle id for a code an app received). Secrets are kept per client
/// id and made again five minutes before they expire, so Apple sees one signature per hour,
/// not one per request.
/// - SeeAlso: Apple, "Generate and validate tokens", "Revoke tokens".
final class AppleClient: Sendable {
    static let shared = AppleClient()

    private let secrets = Mutex<[String: AppleClientSecret]>([:])

    /// What Apple answered for a code.
    struct Tokens: Sendable {
        var accessToken: String?
        /// Kept (sealed) only to revoke it when the link or the account ends.
        var refreshToken: String?
        var idToken: String
    }

    enum Failure: Error, Equatable {
        /// Apple refused (`invalid_grant`: the code is used, expired or another app's;
        /// `invalid_client`: the secret is not accepted). The value is Apple's error code.
        case refused(String)
        /// Apple could not be reached or answered something else; the detail is for the log.
        case unavailable(String)
    }

    /// A client secret for `clientID` that stays valid for at least five more minutes.
    func clientSecret(for clientID: String, apple: UpstreamProvider.AppleSettings, now: Date) throws
        -> String
    {
        let cacheKey = apple.teamID + " " + apple.keyID + " " + clientID
        if let cached = secrets.withLock({ $0[cacheKey] }), cached.isUsable(at: now) { return cached.value }
        let secret = try AppleClientSecret(
            teamID: apple.teamID, keyID: apple.keyID, clientID: clientID, privateKey: apple.privateKey.key,
            issuedAt: now)
        secrets.withLock { $0[cacheKey] = secret }
        return secret.value
    }

    /// Redeems `code` at Apple's token endpoint (`grant_type=authorization_code`). A code of
    /// the web flow needs the `redirectURI` it was issued for; an app's code has none.
    func exchange(
        code: String, clientID: String, redirectURI: String?, provider: UpstreamProvider, now: Date
    ) throws(Failure) -> Tokens {
        guard let apple = provider.apple else { throw .unavailable("not an apple provider") }
        let secret: String
        do {
            secret = try clientSecret(for: clientID, apple: apple, now: now)
        } catch {
            throw .unavailable("client secret: \(error)")
        }
        var form = [
            ("grant_type", "authorization_code"), ("code", code), ("client_id", clientID),
            ("client_secret", secret),
        ]
        if let redirectURI { form.append(("redirect_uri", redirectURI)) }
        let answer: (status: Int, body: [UInt8])
        do {
            answer = try provider.fetch.post(apple.endpoints.token, form: form)
        } catch {
            throw .unavailable("token endpoint: \(error)")
        }
        let object = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
        guard answer.status == 200 else {
            if let error = object?["error"] as? String, answer.status == 400 || answer.status == 401 {
                throw .refused(error)
            }
            throw .unavailable("token endpoint status \(answer.status)")
        }
        guard let object, let idToken = object["id_token"] as? String else {
            throw .unavailable("token endpoint answer without id_token")
        }
        return Tokens(
            accessToken: object["access_token"] as? String, refreshToken: object["refresh_token"] as? String,
            idToken: idToken)
    }

    /// Revokes one token at Apple (`token_type_hint` `refresh_token` or `access_token`).
    func revoke(
        token: String, tokenTypeHint: String = "refresh_token", clientID: String, provider: UpstreamProvider,
        now: Date
    ) throws(Failure) {
        guard let apple = provider.apple else { throw .unavailable("not an apple provider") }
        let secret: String
        do {
            secret = try clientSecret(for: clientID, apple: apple, now: now)
        } catch {
            throw .unavailable("client secret: \(error)")
        }
        let answer: (status: Int, body: [UInt8])
        do {
            answer = try provider.fetch.post(
                apple.endpoints.revoke,
                form: [
                    ("client_id", clientID), ("client_secret", secret), ("token", token),
                    ("token_type_hint", tokenTypeHint),
                ])
        } catch {
            throw .unavailable("revoke endpoint: \(error)")
        }
        guard answer.status == 200 else {
            let object = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
            if let error = object?["error"] as? String { throw .refused(error) }
            throw .unavailable("revoke endpoint status \(answer.status)")
        }
    }
}
