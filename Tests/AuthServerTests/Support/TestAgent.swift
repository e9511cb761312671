import Crypto
import Foundation
import WebAuthnCore

@testable import AuthServer
@testable import WebAuthnTestSupport

/// A browser-like client for integration tests: keeps cookies, sends the CSRF token and the
/// page origin, speaks JSON. Each agent is one browser profile.
final class TestAgent {
    let client: TestHTTPClient
    var cookies: [String: String] = [:]
    var csrfToken: String?
    var origin: String
    var userAgent = "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 Safari/605.1.15"

    init(_ app: TestApplication, origin: String? = nil) {
        client = app.client
        self.origin = origin ?? app.configuration.issuer
    }

    struct Reply {
        var response: TestHTTPClient.Response
        var status: Int { response.status }
        var text: String { response.text }
        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        }
        var error: String? { json["error"] as? String }
        func header(_ name: String) -> String? { response.header(name) }
        var setCookies: [String] { response.headers.filter { $0.0.lowercased() == "set-cookie" }.map(\.1) }

        func decode<T: Decodable>(_ type: T.Type, at key: String? = nil) throws -> T {
            var value: Any = try JSONSerialization.jsonObject(with: Data(response.body))
            if let key, let object = value as? [String: Any], let inner = object[key] { value = inner }
            return try JSONDecoder().decode(T.self, from: JSONSerialization.data(withJSONObject: value))
        }
    }

    /// Fetches a CSRF token (as a page load would) unless one is already held.
    @discardableResult
    func prepareCSRF() throws -> String {
        if let csrfToken { return csrfToken }
        let reply = try send("GET", "/api/csrf")
        let token = reply.json["csrf_token"] as? String ?? ""
        csrfToken = token
        return token
    }

    func send(
        _ method: String, _ path: String, json: Any? = nil, csrf: Bool = true,
        headers extra: [(String, String)] = []
    ) throws -> Reply {
        var headers: [(String, String)] = [("User-Agent", userAgent)]
        if !cookies.isEmpty {
            headers.append(("Cookie", cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")))
        }
        if method != "GET" {
            headers.append(("Origin", origin))
            if csrf, let csrfToken { headers.append(("X-CSRF-Token", csrfToken)) }
        }
        var body: [UInt8] = []
        if let json {
            headers.append(("Content-Type", "application/json"))
            body = Array(try JSONSerialization.data(withJSONObject: json))
        }
        let response = try client.send(method: method, target: path, headers: headers + extra, body: body)
        absorbCookies(response)
        return Reply(response: response)
    }

    func post(_ path: String, _ json: Any = [String: Any](), csrf: Bool = true) throws -> Reply {
        if csrf { try prepareCSRF() }
        return try send("POST", path, json: json, csrf: csrf)
    }

    func postEncodable<T: Encodable>(_ path: String, _ value: T) throws -> Reply {
        try prepareCSRF()
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(value))
        return try send("POST", path, json: object)
    }

    func postForm(_ path: String, _ form: [(String, String)], withCSRF: Bool = true) throws -> Reply {
        var fields = form
        if withCSRF { fields.append(("csrf_token", try prepareCSRF())) }
        let body = fields.map { "\(TestHTTPClient.encode($0.0))=\(TestHTTPClient.encode($0.1))" }.joined(
            separator: "&")
        var headers: [(String, String)] = [
            ("User-Agent", userAgent), ("Origin", origin),
            ("Content-Type", "application/x-www-form-urlencoded"),
        ]
        if !cookies.isEmpty {
            headers.append(("Cookie", cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")))
        }
        let response = try client.send(method: "POST", target: path, headers: headers, body: Array(body.utf8))
        absorbCookies(response)
        return Reply(response: response)
    }

    private func absorbCookies(_ response: TestHTTPClient.Response) {
        for (name, value) in response.headers where name.lowercased() == "set-cookie" {
            let pair = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
            guard let eq = pair.firstIndex(of: "=") else { continue }
            let cookieName = String(pair[..<eq])
            let cookieValue = String(pair[pair.index(after: eq)...])
            if value.contains("Max-Age=0") || cookieValue.isEmpty {
                cookies[cookieName] = nil
            } else {
                cookies[cookieName] = cookieValue
            }
        }
    }

    // MARK: - Flows

    static func uniqueEmail(_ label: String = "user") -> String {
        "\(label)-\(UUID().uuidString.prefix(8).lowercased())@example.com"
    }

    /// Creates an account with a password through the JSON API; the agent is then signed in.
    @discardableResult
    func signUp(email: String, password: String = "correct horse battery", name: String = "Test User") throws
        -> Reply
    {
        try post("/api/signup/password", ["email": email, "display_name": name, "password": password])
    }

    func signIn(email: String, password: String) throws -> Reply {
        try post("/api/signin/password", ["email": email, "password": password])
    }

    /// Registers a passkey for the signed-in account (modal ceremony) and returns the reply.
    func registerPasskey(_ authenticator: SoftwareAuthenticator, up: Bool = true, uv: Bool = true) throws
        -> Reply
    {
        try postEncodable(
            "/api/passkeys/registration/finish", try passkeyRegistration(authenticator, up: up, uv: uv))
    }

    /// A registration started for the signed-in account and answered by `authenticator`: the
    /// body of its finish, not yet sent.
    func passkeyRegistration(_ authenticator: SoftwareAuthenticator, up: Bool = true, uv: Bool = true) throws
        -> RegistrationFinish
    {
        let start = try post("/api/passkeys/registration/start")
        let challengeID = start.json["challenge_id"] as? String ?? ""
        let options = try start.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
        let credential = try authenticator.serverRegistration(
            challenge: try Base64URLTest.decode(options.challenge)
        )
        .flags(up: up, uv: uv).json()
        return RegistrationFinish(challengeID: challengeID, credential: credential)
    }

    /// Signs in with a passkey whose account has `userHandle`.
    func signInWithPasskey(
        _ authenticator: SoftwareAuthenticator, userHandle: [UInt8], up: Bool = true, synced: Bool = false,
        signCount: UInt32 = 1
    )
        throws -> Reply
    {
        let start = try post("/api/passkeys/authentication/start")
        let challengeID = start.json["challenge_id"] as? String ?? ""
        let options = try start.decode(PublicKeyCredentialRequestOptionsJSON.self, at: "options")
        let assertion = try authenticator.serverAssertion(
            challenge: try Base64URLTest.decode(options.challenge)
        )
        .userHandle(userHandle).flags(up: up, be: synced, bs: synced).signCount(signCount).json()
        return try postEncodable(
            "/api/passkeys/authentication/finish",
            AuthenticationFinish(challengeID: challengeID, credential: assertion))
    }
}

struct RegistrationFinish: Encodable {
    var challengeID: String
    var credential: RegistrationResponseJSON

    enum CodingKeys: String, CodingKey {
        case challengeID = "challenge_id"
        case credential
    }
}

struct AuthenticationFinish: Encodable {
    var challengeID: String
    var credential: AuthenticationResponseJSON

    enum CodingKeys: String, CodingKey {
        case challengeID = "challenge_id"
        case credential
    }
}

struct SignUpFinish: Encodable {
    var registrationID: String
    var email: String
    var displayName: String
    var credential: RegistrationResponseJSON

    enum CodingKeys: String, CodingKey {
        case registrationID = "registration_id"
        case email
        case displayName = "display_name"
        case credential
    }
}

enum Base64URLTest {
    static func decode(_ text: String) throws -> [UInt8] { try Base64URL.decode(text) }
}
