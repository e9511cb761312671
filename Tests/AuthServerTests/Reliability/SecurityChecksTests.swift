import Foundation
import OIDC
import Postgres
import Testing

@testable import AuthServer
@testable import WebAuthnTestSupport

/// Security properties checked across the whole application: headers on every page, cookie
/// flags, no open redirect, no account enumeration, no secret in the clear at rest or in logs.
@Suite("Security checks")
struct SecurityChecksTests {
    /// Every kind of page and response the server renders, for one signed-in browser.
    static func responses(_ app: TestApplication) throws -> [(String, TestAgent.Reply)] {
        let agent = TestAgent(app)
        var replies: [(String, TestAgent.Reply)] = []
        replies.append(("/signin", try agent.send("GET", "/signin")))
        replies.append(("/signup", try agent.send("GET", "/signup")))
        replies.append(
            (
                "sign-in failure page",
                try agent.postForm("/signin", [("email", "x@example.com"), ("password", "nope nope")])
            ))
        let (signedIn, tokens) = try app.signedInFlow(AuthorizationAttempt(), agent: nil)
        replies.append(("/account", try signedIn.send("GET", "/account")))
        replies.append(("/account/apps", try signedIn.send("GET", "/account/apps")))
        replies.append(
            (
                "consent page",
                try signedIn.send("GET", "/authorize?" + AuthorizationAttempt(scope: "openid api.read").query)
            ))
        replies.append(
            (
                "form_post page",
                try signedIn.send(
                    "GET", "/authorize?" + AuthorizationAttempt(extra: [("response_mode", "form_post")]).query
                )
            ))
        replies.append(("logout confirmation", try signedIn.send("GET", "/logout")))
        replies.append(("error page", try signedIn.send("GET", "/authorize?client_id=nobody")))
        replies.append(("/token", try app.token([("grant_type", "client_credentials")])))
        replies.append(("/userinfo", try app.userinfo(tokens.accessToken)))
        replies.append(("/jwks", try agent.send("GET", "/jwks")))
        replies.append(("/api/account", try signedIn.send("GET", "/api/account")))
        replies.append(("/static/", try agent.send("GET", "/static/css/app.css")))
        replies.append(("404", try agent.send("GET", "/nothing-here")))
        return replies
    }

    @Test(arguments: ["http://localhost:8080", "https://id.example.com"])
    func everyResponseCarriesTheSecurityHeaders(_ issuer: String) throws {
        let app = try OAuthFixtures.app { $0.issuer = issuer }
        for (name, reply) in try Self.responses(app) {
            #expect(reply.status < 500, "\(name): \(reply.status)")
            let policy = reply.header("Content-Security-Policy") ?? ""
            #expect(policy.contains("frame-ancestors 'none'"), "\(name): \(policy)")
            #expect(policy.contains("script-src 'self'"), "\(name): \(policy)")
            #expect(
                !policy.contains("unsafe-inline") && !policy.contains("unsafe-eval"), "\(name): \(policy)")
            #expect(reply.header("X-Content-Type-Options") == "nosniff", "\(name)")
            #expect(reply.header("Referrer-Policy") == "no-referrer", "\(name)")
            #expect(reply.header("X-Frame-Options") == "DENY", "\(name)")
            let hsts = reply.header("Strict-Transport-Security")
            if issuer.hasPrefix("https://") {
                #expect(hsts == "max-age=63072000", "\(name)")
            } else {
                #expect(hsts == nil, "\(name): no HSTS for a plain-http development issuer")
            }
            if reply.header("Content-Type")?.hasPrefix("text/html") == true {
                #expect(
                    !reply.text.contains("<script>") && !reply.text.contains(" style=\""),
                    "\(name): inline code")
            }
        }
    }

    @Test(arguments: ["http://localhost:8080", "https://id.example.com"])
    func cookiesAreHttpOnlyAndSameSiteAndSecureUnderHTTPS(_ issuer: String) throws {
        let app = try TestApplication { $0.issuer = issuer }
        let agent = TestAgent(app, origin: issuer)
        let page = try agent.send("GET", "/signin")
        let reply = try agent.signUp(email: TestAgent.uniqueEmail())
        #expect(reply.status == 201)
        let cookies = page.setCookies + reply.setCookies
        #expect(cookies.count >= 2)
        let https = issuer.hasPrefix("https://")
        for cookie in cookies {
            #expect(cookie.contains("HttpOnly"), "\(cookie)")
            #expect(cookie.contains("SameSite=Lax"), "\(cookie)")
            #expect(cookie.contains("Path=/"), "\(cookie)")
            #expect(!cookie.contains("Domain="), "\(cookie)")
            #expect(cookie.contains("; Secure") == https, "\(cookie)")
            #expect(cookie.hasPrefix("__Host-") == https, "\(cookie)")
        }
    }

    /// Every place that redirects on input: sign-in (form and JSON, password and passkey),
    /// sign-up, /authorize errors, logout. None goes anywhere but this site or a registered URI.
    @Test func noOpenRedirectAnywhere() throws {
        let app = try OAuthFixtures.app()
        let email = TestAgent.uniqueEmail("redir")
        try TestAgent(app).signUp(email: email, password: "a long passphrase")
        let targets = [
            "https://evil.example/", "//evil.example", "///evil.example", "/\\evil.example",
            "\\\\evil.example",
            "/%2F%2Fevil.example", "/%5Cevil.example", "javascript:alert(1)", "data:text/html,x",
            "http:evil.example",
            "/\t/evil.example", " //evil.example", "https:/\\evil.example",
            "/account\r\nLocation: https://evil.example",
            "%2F%2Fevil.example", "/.//evil.example",
        ]
        /// Same-site: a path that browsers cannot read as another host (they drop tabs and
        /// newlines and treat a backslash like a slash).
        func isLocal(_ location: String?) -> Bool {
            guard let location, location.hasPrefix("/") else { return false }
            let rest = location.dropFirst()
            return !rest.hasPrefix("/") && !rest.hasPrefix("\\") && !location.contains("://")
                && !location.unicodeScalars.contains { $0.value < 0x21 || $0.value == 0x7F }
        }
        for target in targets {
            let form = try TestAgent(app).postForm(
                "/signin", [("email", email), ("password", "a long passphrase"), ("return_to", target)])
            #expect(form.status == 303)
            #expect(
                isLocal(form.header("Location")), "sign-in form: \(target) → \(form.header("Location") ?? "")"
            )
            let json = try TestAgent(app).post(
                "/api/signin/password",
                ["email": email, "password": "a long passphrase", "return_to": target])
            #expect(json.status == 200)
            #expect(isLocal(json.json["redirect_to"] as? String), "sign-in JSON: \(target) → \(json.text)")
            let signUp = try TestAgent(app).postForm(
                "/signup",
                [
                    ("email", TestAgent.uniqueEmail()), ("display_name", "R"),
                    ("password", "a long passphrase"), ("return_to", target),
                ])
            #expect(signUp.status == 303)
            #expect(
                isLocal(signUp.header("Location")),
                "sign-up form: \(target) → \(signUp.header("Location") ?? "")")
            // /authorize with an unregistered redirect_uri: an error page, never a redirect.
            let authorize = try TestAgent(app).send(
                "GET", "/authorize?" + AuthorizationAttempt(redirectURI: target).query)
            #expect(authorize.status == 400)
            #expect(authorize.header("Location") == nil)
            // Logout: an unregistered post_logout_redirect_uri is never followed.
            let (agent, tokens) = try app.signedInFlow()
            let logout = try agent.send(
                "GET",
                "/logout?"
                    + FormEncoding.encode([
                        (name: "id_token_hint", value: tokens.idToken ?? ""),
                        (name: "post_logout_redirect_uri", value: target),
                    ]))
            #expect(logout.status == 400)
            #expect(logout.header("Location") == nil)
        }
    }

    // MARK: - Secrets at rest and in logs

    /// Every column of every table, as text (and bytea as bytes), searched for each secret.
    static func columnsContaining(_ secret: String, in app: TestApplication) throws -> [String] {
        let columns = try app.sql(
            """
            SELECT table_name::text AS t, column_name::text AS c, data_type::text AS d
            FROM information_schema.columns WHERE table_schema = 'public'
            """)
        var found: [String] = []
        for column in columns {
            let table = try column.decode("t", as: String.self)
            let name = try column.decode("c", as: String.self)
            let type = try column.decode("d", as: String.self)
            let quoted = "\"\(table)\".\"\(name)\""
            var query = PostgresQuery.StringInterpolation(literalCapacity: 200, interpolationCount: 2)
            query.appendLiteral("SELECT count(*)::int AS n FROM \"\(table)\" WHERE strpos(\(quoted)::text, ")
            query.appendInterpolation(secret)
            query.appendLiteral(") > 0")
            if type == "bytea" {
                query.appendLiteral(" OR position(convert_to(")
                query.appendInterpolation(secret)
                query.appendLiteral(", 'UTF8') IN \(quoted)) > 0")
            }
            let rows = try app.sql(PostgresQuery(stringInterpolation: query))
            if try rows.first?.decode("n", as: Int.self) ?? 0 > 0 { found.append("\(table).\(name)") }
        }
        return found
    }

    @Test func noSecretInTheClearInTheDatabaseOrTheLog() throws {
        let app = try OAuthFixtures.app()
        let password = "plaintext passphrase \(UUID().uuidString.prefix(8))"
        let email = TestAgent.uniqueEmail("secret")
        let agent = TestAgent(app)
        var secrets: [(String, String)] = [("password", password)]
        #expect(try agent.signUp(email: email, password: password).status == 201)
        let browser = TestAgent(app)
        #expect(try browser.signIn(email: email, password: password).status == 200)
        #expect(try browser.registerPasskey(try SoftwareAuthenticator()).status == 201)
        let newPassword = "another plaintext passphrase \(UUID().uuidString.prefix(8))"
        #expect(
            try browser.post("/api/password", ["current_password": password, "new_password": newPassword])
                .status < 300)
        secrets.append(("changed password", newPassword))
        let attempt = AuthorizationAttempt()
        let callback = try browser.authorize(attempt)
        let code = try #require(callback["code"])
        let first = try app.redeem(code, attempt)
        try #require(first.status == 200)
        let tokens = TokenSet(json: first.json)
        let refreshed = try app.token([
            ("grant_type", "refresh_token"), ("refresh_token", tokens.refreshToken ?? ""),
        ])
        try #require(refreshed.status == 200)
        let rotated = TokenSet(json: refreshed.json)
        #expect(try app.userinfo(rotated.accessToken).status == 200)
        let machine = try app.token([("grant_type", "client_credentials"), ("scope", "api.read")])
        secrets += [
            ("code", code), ("code verifier", attempt.verifier), ("access token", tokens.accessToken),
            ("refresh token", tokens.refreshToken ?? ""),
            ("rotated refresh token", rotated.refreshToken ?? ""),
            ("rotated access token", rotated.accessToken),
            ("client credentials token", machine.json["access_token"] as? String ?? ""),
            ("client secret", OAuthFixtures.webSecret),
        ]
        for (name, value) in agent.cookies.merging(browser.cookies, uniquingKeysWith: { a, _ in a }) {
            secrets.append(("cookie \(name)", value))
        }
        secrets.append(("csrf token", browser.csrfToken ?? ""))
        // Access tokens are signed JWTs; their signatures are what make them bearer secrets.
        for (name, token) in secrets where name.contains("access token") || name.contains("credentials token")
        {
            secrets.append(("\(name) signature", String(token.split(separator: ".").last ?? "")))
        }
        #expect(try browser.post("/api/signout").status < 300)
        let log = app.logBuffer.text
        #expect(log.contains("signin.password"), "the log was captured")
        for (name, secret) in secrets {
            #expect(secret.count >= 16, "\(name) was seen")
            #expect(try Self.columnsContaining(secret, in: app).isEmpty, "\(name) stored in the clear")
            #expect(!log.contains(secret), "\(name) in the log")
        }
        // The search itself works: a value known to be stored is found.
        #expect(try Self.columnsContaining(email, in: app).contains("account_emails.email"))
    }

    // MARK: - Enumeration

    @Test func passkeySignUpStartDoesNotTellWhetherAnEmailIsTaken() throws {
        let app = try TestApplication()
        let taken = TestAgent.uniqueEmail("taken")
        try TestAgent(app).signUp(email: taken)
        func shape(_ email: String) throws -> (Int, [String], [String]) {
            let reply = try TestAgent(app).post(
                "/api/passkeys/signup/start", ["email": email, "display_name": "N"])
            let options = reply.json["options"] as? [String: Any] ?? [:]
            let excluded = (options["excludeCredentials"] as? [Any])?.count ?? 0
            return (reply.status, reply.json.keys.sorted(), options.keys.sorted() + ["excluded=\(excluded)"])
        }
        let known = try shape(taken)
        let unknown = try shape(TestAgent.uniqueEmail("free"))
        #expect(known.0 == 200 && unknown.0 == 200)
        #expect(known.1 == unknown.1 && known.2 == unknown.2)
        // Passkey sign-in start takes no identifier at all: nothing to enumerate.
        let start = try TestAgent(app).post("/api/passkeys/authentication/start", ["email": taken])
        #expect(start.status == 200)
        let options = start.json["options"] as? [String: Any] ?? [:]
        let allowed = options["allowCredentials"] as? [Any] ?? []
        #expect(allowed.isEmpty)
    }

    /// With the production Argon2id cost, a wrong password for a known email and any password
    /// for an unknown one take about as long (median difference under 50 %).
    @Test func passwordSignInTimingDoesNotRevealAccounts() throws {
        let server = try ServeProcess(
            databaseURL: try TestCluster.freshDatabaseURL(),
            extraConfig:
                #", "sign_in_throttle": {"account_max_failures": 1000, "address_max_failures": 1000}"#)
        let email = TestAgent.uniqueEmail("timing")
        let agent = PortAgent(port: server.port, origin: server.issuer)
        #expect(
            try agent.send(
                "POST", "/api/signup/password",
                json: ["email": email, "display_name": "T", "password": "a long passphrase"]
            ).status == 201)
        var known: [Double] = []
        var unknown: [Double] = []
        let client = PortAgent(port: server.port, origin: server.issuer)
        _ = try client.send("GET", "/api/csrf")
        for round in 0..<40 {
            let target = round % 2 == 0 ? email : "nobody-\(round)@example.com"
            let started = Date()
            let reply = try client.send(
                "POST", "/api/signin/password",
                json: ["email": target, "password": "wrong password \(round)"])
            let seconds = Date().timeIntervalSince(started)
            #expect(reply.status == 401)
            #expect(reply.error == "invalid_credentials")
            if round % 2 == 0 { known.append(seconds) } else { unknown.append(seconds) }
        }
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        let (a, b) = (median(known), median(unknown))
        #expect(abs(a - b) / max(a, b) < 0.5, "known \(a) s, unknown \(b) s")
        #expect(server.terminate() == 0)
    }
}
