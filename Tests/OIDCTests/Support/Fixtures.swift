import Crypto
import Foundation
@testable import OIDC

enum Fixture {
    static let issuer = "https://id.example.com"
    static let tokenEndpoint = "https://id.example.com/token"
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    /// RFC 7636 Appendix B.
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let secret = "s3cr3t"
    static let secretHash = ClientSecret.hash(secret, salt: Array(0..<16))

    static let web = OAuthClient(
        clientID: "web-app", applicationType: .web,
        redirectURIs: ["https://app.example.com/callback", "https://app.example.com/cb?tenant=a"],
        postLogoutRedirectURIs: ["https://app.example.com/bye", "https://app.example.com/bye?x=1"],
        tokenEndpointAuthMethod: .clientSecretBasic, clientSecretHash: secretHash,
        grantTypes: [.authorizationCode, .refreshToken, .clientCredentials],
        scopes: ["openid", "profile", "email", "offline_access", "api"])

    static let native = OAuthClient(
        clientID: "native-app", applicationType: .native,
        redirectURIs: [
            "com.example.app:/oauth2redirect", "https://app.example.com/native-callback",
            "http://127.0.0.1/callback", "http://[::1]:8080/cb?x=1",
        ],
        tokenEndpointAuthMethod: .none)

    /// A confidential web client exempted from PKCE (it uses `nonce` instead).
    static let exempt: OAuthClient = {
        var client = web
        client.clientID = "legacy-web"
        client.requirePKCE = false
        client.tokenEndpointAuthMethod = .clientSecretPost
        return client
    }()

    static func clients(_ id: String) -> OAuthClient? {
        [web, native, exempt].first { $0.clientID == id }
    }

    static func params(_ items: [(String, String)]) -> Parameters {
        Parameters(items.map { (name: $0.0, value: $0.1) })
    }

    /// A valid authorization request for `client`, with overrides (`nil` removes).
    static func authorize(
        _ client: OAuthClient = native, _ overrides: [String: String?] = [:], extra: [(String, String)] = []
    )
        -> Parameters
    {
        var items: [(String, String)] = [
            ("response_type", "code"), ("client_id", client.clientID),
            ("redirect_uri", client.redirectURIs[0]),
            ("scope", "openid profile"), ("state", "af0ifjsldkj"), ("nonce", "n-0S6_WzA2Mj"),
            ("code_challenge", challenge), ("code_challenge_method", "S256"),
        ]
        for (name, value) in overrides {
            if let index = items.firstIndex(where: { $0.0 == name }) {
                if let value { items[index].1 = value } else { items.remove(at: index) }
            } else if let value {
                items.append((name, value))
            }
        }
        return params(items + extra)
    }

    static func validate(_ parameters: Parameters) throws(AuthorizationFailure) -> AuthorizationRequest {
        let id = (try? parameters.value("client_id")) ?? nil
        return try AuthorizationRequest.validate(parameters, client: id.flatMap(clients), issuer: issuer)
    }

    static func signingKey() throws -> SigningPrivateKey { try Vectors.ecJWK.privateKey() }
}
