import Crypto
import Foundation
import HTTPServer
import OIDC
import Synchronization
import Testing

@testable import AuthServer

/// Clients every OAuth test can use, and helpers that drive the browser side of the code
/// flow through a `TestAgent` and the token side through plain HTTP.
enum OAuthFixtures {
    static let webSecret = "web-client-secret-with-plenty-of-entropy-0123456789"
    static let webRedirect = "https://rp.example/callback"
    static let nativeRedirect = "https://localhost/app/callback"

    static func clients(backchannelURI: String? = nil, privateKeyJWKS: String? = nil) -> [ClientMetadata] {
        var web = ClientMetadata(
            clientID: "web-app", clientName: "Web App", redirectURIs: [webRedirect],
            postLogoutRedirectURIs: ["https://rp.example/signed-out"],
            tokenEndpointAuthMethod: .clientSecretBasic,
            clientSecretHash: ClientSecret.hash(webSecret),
            grantTypes: ["authorization_code", "refresh_token", "client_credentials"],
            scope: ["openid", "profile", "email", "offline_access", "api.read"])
        web.backchannelLogoutURI = backchannelURI
        var native = ClientMetadata(
            clientID: "native-app", clientName: "Native App", applicationType: .native,
            redirectURIs: [nativeRedirect, "com.example.app:/callback", "http://127.0.0.1/callback"],
            tokenEndpointAuthMethod: .none, grantTypes: ["authorization_code", "refresh_token"],
            scope: ["openid", "profile", "email", "offline_access"])
        native.firstParty = true
        native.appleAppIDs = ["ABCDE12345.com.example.app"]
        native.androidApps = [
            .init(
                packageName: "com.example.app",
                sha256CertFingerprints: [String(repeating: "AB:", count: 31) + "CD"])
        ]
        var post = ClientMetadata(
            clientID: "post-app", clientName: "Post App", redirectURIs: ["https://post.example/cb"],
            tokenEndpointAuthMethod: .clientSecretPost, clientSecretHash: ClientSecret.hash(webSecret),
            grantTypes: ["authorization_code"])
        post.requirePKCE = false
        post.firstParty = true
        var clients = [web, native, post]
        if let privateKeyJWKS {
            var jwt = ClientMetadata(
                clientID: "jwt-app", redirectURIs: ["https://jwt.example/cb"],
                tokenEndpointAuthMethod: .privateKeyJWT,
                grantTypes: ["client_credentials"], scope: ["api.read"])
            jwt.jwks = privateKeyJWKS
            clients.append(jwt)
        }
        return clients
    }

    static func app(
        backchannelURI: String? = nil, privateKeyJWKS: String? = nil, system: TimeAndRandomness = .live,
        configure: (inout Configuration) -> Void = { _ in }
    )
        throws -> TestApplication
    {
        try TestApplication(system: system) { configuration in
            configuration.clients = clients(backchannelURI: backchannelURI, privateKeyJWKS: privateKeyJWKS)
            configuration.oauth.backchannelRetryBaseSeconds = 1
            // Poll often only where a test waits for a delivery.
            configuration.oauth.backchannelPollMilliseconds = backchannelURI == nil ? 2_000 : 100
            configure(&configuration)
        }
    }

    static func basic(_ id: String = "web-app", _ secret: String = webSecret) -> (String, String) {
        (
            "Authorization",
            "Basic "
                + Data("\(FormEncoding.encode(id)):\(FormEncoding.encode(secret))".utf8).base64EncodedString()
        )
    }
}

/// One authorization request's secrets, as a client keeps them.
struct AuthorizationAttempt {
    var clientID = "web-app"
    var redirectURI = OAuthFixtures.webRedirect
    var scope = "openid profile email offline_access"
    var state = "st-" + UUID().uuidString
    var nonce = "n-" + UUID().uuidString
    var verifier = Base64URL.encode(SecureRandom.bytes(count: 32))
    var extra: [(String, String)] = []

    var query: String {
        var items: [(name: String, value: String)] = [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI),
            ("scope", scope),
            ("state", state), ("nonce", nonce), ("code_challenge", PKCE.challenge(for: verifier)),
            ("code_challenge_method", "S256"),
        ]
        items += extra.map { (name: $0.0, value: $0.1) }
        return FormEncoding.encode(items)
    }
}

struct TokenSet {
    var json: [String: Any]
    var accessToken: String { json["access_token"] as? String ?? "" }
    var refreshToken: String? { json["refresh_token"] as? String }
    var idToken: String? { json["id_token"] as? String }
}

extension TestAgent {
    /// Follows `/authorize` through sign-in (already signed in) and consent (allowed when
    /// asked) to the client's redirect; returns the callback's query items.
    func authorize(_ attempt: AuthorizationAttempt, allowConsent: Bool = true) throws -> [String: String] {
        var reply = try send("GET", "/authorize?" + attempt.query)
        if reply.status == 200, reply.text.contains(#"action="/authorize/consent""#) {
            let fields = Self.hiddenFields(reply.text)
            let form =
                fields.filter { $0.0 != "csrf_token" } + [("decision", allowConsent ? "allow" : "deny")]
            reply = try postForm("/authorize/consent", form)
        }
        guard reply.status == 303, let location = reply.header("Location") else {
            throw OAuthTestError.unexpected("status \(reply.status): \(reply.text.prefix(300))")
        }
        return Self.queryItems(location)
    }

    static func queryItems(_ location: String) -> [String: String] {
        guard let components = URLComponents(string: location) else { return [:] }
        var items: [String: String] = [:]
        for item in components.queryItems ?? [] { items[item.name] = item.value ?? "" }
        items["_location"] = location
        return items
    }

    /// `<input type="hidden" name="…" value="…">` pairs of a page, unescaped.
    static func hiddenFields(_ html: String) -> [(String, String)] {
        var fields: [(String, String)] = []
        let pattern = #"<input type="hidden" name="([^"]*)" value="([^"]*)">"#
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        let range = NSRange(html.startIndex..., in: html)
        for match in regex.matches(in: html, range: range) {
            guard let name = Range(match.range(at: 1), in: html),
                let value = Range(match.range(at: 2), in: html)
            else { continue }
            fields.append((unescape(String(html[name])), unescape(String(html[value]))))
        }
        return fields
    }

    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}

enum OAuthTestError: Error { case unexpected(String) }

extension TestApplication {
    /// POST /token with a form; `auth` is an Authorization header.
    func token(_ form: [(String, String)], auth: (String, String)? = OAuthFixtures.basic()) throws
        -> TestAgent.Reply
    {
        try TestAgent.Reply(response: client.post("/token", form: form, headers: auth.map { [$0] } ?? []))
    }

    func redeem(
        _ code: String, _ attempt: AuthorizationAttempt, auth: (String, String)? = OAuthFixtures.basic()
    ) throws
        -> TestAgent.Reply
    {
        var form = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", attempt.redirectURI),
            ("code_verifier", attempt.verifier),
        ]
        if auth == nil { form.append(("client_id", attempt.clientID)) }
        return try token(form, auth: auth)
    }

    func verifier() throws -> JWSVerifier {
        JWSVerifier(keys: try signingKeys.publishedJWKS(), allowedAlgorithms: Set(JWSAlgorithm.allCases))
    }

    func claims(of jwt: String, type: String? = nil) throws -> [String: OIDC.JSONValue] {
        try verifier().verify(jwt, expectedType: type).decodePayload(as: [String: OIDC.JSONValue].self)
    }

    func userinfo(_ accessToken: String) throws -> TestAgent.Reply {
        try TestAgent.Reply(
            response: client.get("/userinfo", headers: [("Authorization", "Bearer \(accessToken)")]))
    }

    /// A signed-in agent and a finished code flow for `attempt`.
    func signedInFlow(
        _ attempt: AuthorizationAttempt = AuthorizationAttempt(), agent existing: TestAgent? = nil
    ) throws
        -> (TestAgent, TokenSet)
    {
        let agent = existing ?? TestAgent(self)
        if existing == nil { try agent.signUp(email: TestAgent.uniqueEmail()) }
        let callback = try agent.authorize(attempt)
        let code = try #require(callback["code"])
        let reply = try redeem(
            code, attempt, auth: attempt.clientID == "web-app" ? OAuthFixtures.basic() : nil)
        try #require(reply.status == 200, "token: \(reply.text)")
        return (agent, TokenSet(json: reply.json))
    }
}

/// A tiny HTTP receiver on 127.0.0.1 for back-channel logout: answers the first `failures`
/// requests with 503, then 200 (or, with `redirectTo`, a 307 to that URI), and records every
/// form body.
final class LogoutReceiver: Sendable {
    let server: HTTPServer
    private final class State: Sendable {
        let value = Mutex<(bodies: [String], failuresLeft: Int)>(([], 0))
        func withLock<T>(_ body: (inout (bodies: [String], failuresLeft: Int)) -> T) -> T {
            value.withLock { body(&$0) }
        }
    }
    private let state = State()

    init(failures: Int, redirectTo: String? = nil) throws {
        let router = Router()
        let state = state
        state.withLock { $0.failuresLeft = failures }
        router.post("/backchannel") { request, _ in
            let fail = state.withLock { state -> Bool in
                state.bodies.append(String(decoding: request.body, as: UTF8.self))
                if state.failuresLeft > 0 {
                    state.failuresLeft -= 1
                    return true
                }
                return false
            }
            if fail { return .text("busy", status: .serviceUnavailable) }
            if let redirectTo { return .redirect(to: redirectTo, status: .temporaryRedirect) }
            return .text("")
        }
        server = HTTPServer(
            configuration: .init(host: "127.0.0.1", port: 0, workerThreads: 2), responder: router,
            log: { _ in })
        try server.start()
    }

    var uri: String { "http://127.0.0.1:\(server.port)/backchannel" }
    var bodies: [String] { state.withLock { $0.bodies } }

    /// Waits (up to `seconds`) until `count` requests arrived.
    func waitFor(_ count: Int, seconds: Double = 30) -> [String] {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let bodies = self.bodies
            if bodies.count >= count { return bodies }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return bodies
    }

    deinit {
        server.shutdown(gracePeriod: .seconds(1))
        server.waitUntilStopped()
    }
}
