import Crypto
import Foundation
import OIDC
import Testing

@testable import AuthServer

/// Hostile OAuth requests: duplicated parameters (RFC 6749 §3.1, §3.2), redirect-URI tricks,
/// PKCE downgrades, replayed and cross-client codes and refresh tokens. Each gets its exact
/// status and OAuth error code; none leaves a record.
@Suite("Hostile input: OAuth endpoints")
struct HostileOAuthTests {
    static func query(_ items: [(String, String)]) -> String {
        FormEncoding.encode(items.map { (name: $0.0, value: $0.1) })
    }

    static func authorizeItems(
        client: String = "web-app", redirect: String = OAuthFixtures.webRedirect, challenge: String? = nil,
        method: String? = "S256"
    ) -> [(String, String)] {
        var items = [
            ("response_type", "code"), ("client_id", client), ("redirect_uri", redirect),
            ("scope", "openid profile"), ("state", "st-1"), ("nonce", "n-1"),
        ]
        items.append(("code_challenge", challenge ?? PKCE.challenge(for: String(repeating: "v", count: 43))))
        if let method { items.append(("code_challenge_method", method)) }
        return items
    }

    static func authorizeCases(_ c: HostileCatalogue) -> [HostileCase] {
        var cases: [HostileCase] = []
        let base = authorizeItems()
        // RFC 6749 §3.1: a parameter sent twice is invalid_request. Duplicated client_id or
        // redirect_uri cannot be trusted for a redirect: an error page.
        for name in ["client_id", "redirect_uri"] {
            let value = base.first { $0.0 == name }?.1 ?? ""
            cases.append(
                .init("/authorize duplicated \(name)", 400, "invalid_request") {
                    try c.get("/authorize?" + query(base + [(name, value)]))
                })
        }
        for name in [
            "response_type", "scope", "state", "nonce", "code_challenge", "code_challenge_method", "prompt",
            "max_age", "response_mode", "login_hint", "ui_locales", "claims",
        ] {
            let value = base.first { $0.0 == name }?.1 ?? "x"
            var items = base + [(name, value)]
            if base.first(where: { $0.0 == name }) == nil { items += [(name, value)] }
            cases.append(
                .init("/authorize duplicated \(name)", 303, "invalid_request") {
                    try c.get("/authorize?" + query(items))
                })
        }
        cases.append(
            .init("/authorize duplicated client_id via POST", 400, "invalid_request") {
                try c.postForm("/authorize", base + [("client_id", "web-app")])
            })

        // Redirect URIs: exact match only; every near miss is an error page, never a redirect.
        let web = "https://rp.example/callback"
        let tricks = [
            web + "x", web + "/", web + "/..", web + "/../callback", "https://rp.example/cb/../callback",
            "https://rp.example//callback", "https://rp.example/./callback",
            web + "?next=https://evil.example",
            web + "#", web + "#frag", "https://rp.example@evil.example/callback",
            "https://evil.example@rp.example/callback", "https://rp.example%40evil.example/callback",
            "https://rp.example\\@evil.example/callback", "https://rp.example.evil.example/callback",
            "https://evil.example/callback", "HTTPS://rp.example/callback", "https://RP.example/callback",
            "https://rp.example/Callback", "https://rp.example/%63allback",
            "https://rp.example/callback%2F..%2Fevil",
            "https://rp.example/callback%00", "https://rp.example./callback",
            "https://xn--rp-example-9db.com/callback",
            "https://rр.example/callback", "https://rp.example:443/callback",
            "https://rp.example:8443/callback",
            "http://rp.example/callback", " " + web, web + " ", "//rp.example/callback", "/callback",
            "javascript:alert(1)//rp.example/callback", "data:text/html,<script>alert(1)</script>", "",
        ]
        for uri in tricks {
            cases.append(
                .init("redirect_uri \(uri.debugDescription)", 400, "invalid_request") {
                    try c.get("/authorize?" + query(authorizeItems(redirect: uri)))
                })
        }
        let nativeTricks = [
            "http://127.0.0.1.evil.example/callback", "http://localhost/callback",
            "http://127.0.0.1/callback/..",
            "http://127.0.0.1/other", "http://127.0.0.2/callback", "http://user@127.0.0.1/callback",
            "com.example.app:/callback/../x", "com.example.app.evil:/callback", "com.example.ap:/callback",
            "COM.EXAMPLE.APP:/callback", "https://localhost/app/callback/x",
            "https://localhost:8443/app/callback",
        ]
        for uri in nativeTricks {
            cases.append(
                .init("native redirect_uri \(uri.debugDescription)", 400, "invalid_request") {
                    try c.get("/authorize?" + query(authorizeItems(client: "native-app", redirect: uri)))
                })
        }

        // PKCE downgrade: the public client must send an S256 challenge.
        let native = "http://127.0.0.1:51234/callback"
        let downgrades: [(String, [(String, String)])] = [
            (
                "no code_challenge",
                authorizeItems(client: "native-app", redirect: native).filter {
                    !$0.0.hasPrefix("code_challenge")
                }
            ),
            (
                "plain method",
                authorizeItems(
                    client: "native-app", redirect: native, challenge: String(repeating: "v", count: 43),
                    method: "plain")
            ),
            ("no method", authorizeItems(client: "native-app", redirect: native, method: nil)),
            ("lowercase s256", authorizeItems(client: "native-app", redirect: native, method: "s256")),
            ("unknown method", authorizeItems(client: "native-app", redirect: native, method: "S512")),
            ("short challenge", authorizeItems(client: "native-app", redirect: native, challenge: "abc")),
            (
                "challenge with padding",
                authorizeItems(
                    client: "native-app", redirect: native, challenge: String(repeating: "A", count: 42) + "="
                )
            ),
            (
                "challenge with bad characters",
                authorizeItems(
                    client: "native-app", redirect: native, challenge: String(repeating: "+", count: 43))
            ),
            ("web client without challenge", authorizeItems().filter { !$0.0.hasPrefix("code_challenge") }),
        ]
        for (name, items) in downgrades {
            cases.append(
                .init("PKCE: \(name)", 303, "invalid_request") { try c.get("/authorize?" + query(items)) })
        }
        cases.append(
            .init("response_type token", 303, "unsupported_response_type") {
                try c.get("/authorize?" + query(base.map { $0.0 == "response_type" ? ($0.0, "token") : $0 }))
            })
        cases.append(
            .init("unknown client", 400, "invalid_client") {
                try c.get("/authorize?" + query(authorizeItems(client: "evil-app")))
            })
        return cases
    }

    /// Codes and tokens the token-endpoint cases spend, made before the counted batch.
    struct Prepared {
        var codes: [String: (String, AuthorizationAttempt)] = [:]
        var usedCode: (String, AuthorizationAttempt)
        var rotatedRefreshToken: String
        var liveRefreshToken: String
    }

    static func prepare(_ app: TestApplication, labels: [String]) throws -> Prepared {
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail("oauth"))
        var codes: [String: (String, AuthorizationAttempt)] = [:]
        for label in labels {
            let attempt =
                label.hasPrefix("native")
                ? AuthorizationAttempt(clientID: "native-app", redirectURI: "http://127.0.0.1:4000/callback")
                : AuthorizationAttempt()
            let callback = try agent.authorize(attempt)
            codes[label] = (try #require(callback["code"]), attempt)
        }
        let used = AuthorizationAttempt()
        let usedCode = try #require(try agent.authorize(used)["code"])
        let first = try app.redeem(usedCode, used)
        try #require(first.status == 200)
        let rotated = try #require(TokenSet(json: first.json).refreshToken)
        let second = try app.token([("grant_type", "refresh_token"), ("refresh_token", rotated)])
        try #require(second.status == 200)
        // A second family, for the cases that must not be spent by the replay above.
        let (_, other) = try app.signedInFlow(agent: agent)
        return Prepared(
            codes: codes, usedCode: (usedCode, used), rotatedRefreshToken: rotated,
            liveRefreshToken: try #require(other.refreshToken))
    }

    static let codeLabels = [
        "dupCode", "dupVerifier", "dupRedirect", "dupGrant", "dupClientID", "noVerifier", "wrongVerifier",
        "shortVerifier", "longVerifier", "badCharVerifier", "wrongRedirect", "crossClient",
        "crossClientSecret",
        "nativeCrossClient", "nativeNoVerifier", "wrongSecret", "basicAndPost",
    ]

    static func tokenCases(_ c: HostileCatalogue, _ p: Prepared) -> [HostileCase] {
        let app = c.app
        func code(_ label: String) -> (String, AuthorizationAttempt) {
            p.codes[label] ?? ("", AuthorizationAttempt())
        }
        func form(
            _ label: String, drop: String? = nil, add: [(String, String)] = [],
            replace: [String: String] = [:]
        )
            -> [(String, String)]
        {
            let (value, attempt) = code(label)
            var items = [
                ("grant_type", "authorization_code"), ("code", value), ("redirect_uri", attempt.redirectURI),
                ("code_verifier", attempt.verifier),
            ]
            if attempt.clientID == "native-app" { items.append(("client_id", "native-app")) }
            items = items.filter { $0.0 != drop }.map { (name, v) in (name, replace[name] ?? v) }
            return items + add
        }
        let nativeAuth: (String, String)? = nil
        var cases: [HostileCase] = [
            .init("duplicated code", 400, "invalid_request") {
                try app.token(form("dupCode", add: [("code", code("dupCode").0)]))
            },
            .init("duplicated code_verifier", 400, "invalid_request") {
                try app.token(form("dupVerifier", add: [("code_verifier", code("dupVerifier").1.verifier)]))
            },
            .init("duplicated redirect_uri", 400, "invalid_request") {
                try app.token(form("dupRedirect", add: [("redirect_uri", OAuthFixtures.webRedirect)]))
            },
            .init("duplicated grant_type", 400, "invalid_request") {
                try app.token(form("dupGrant", add: [("grant_type", "authorization_code")]))
            },
            .init("duplicated client_id", 400, "invalid_request") {
                try app.token(form("dupClientID", add: [("client_id", "web-app"), ("client_id", "web-app")]))
            },
            .init("verifier missing", 400, "invalid_grant") {
                try app.token(form("noVerifier", drop: "code_verifier"))
            },
            .init("verifier wrong", 400, "invalid_grant") {
                try app.token(
                    form("wrongVerifier", replace: ["code_verifier": String(repeating: "w", count: 43)]))
            },
            .init("verifier too short", 400, "invalid_request") {
                try app.token(form("shortVerifier", replace: ["code_verifier": "short"]))
            },
            .init("verifier too long", 400, "invalid_request") {
                try app.token(
                    form("longVerifier", replace: ["code_verifier": String(repeating: "l", count: 129)]))
            },
            .init("verifier with bad characters", 400, "invalid_request") {
                try app.token(
                    form("badCharVerifier", replace: ["code_verifier": String(repeating: "/", count: 43)]))
            },
            .init("redirect_uri differs", 400, "invalid_grant") {
                try app.token(
                    form("wrongRedirect", replace: ["redirect_uri": "https://rp.example/callback/"]))
            },
            .init("web code redeemed by the native client", 400, "invalid_grant") {
                try app.token(form("crossClient", add: [("client_id", "native-app")]), auth: nativeAuth)
            },
            .init("web code redeemed by post-app", 400, "invalid_grant") {
                try app.token(
                    form(
                        "crossClientSecret",
                        add: [("client_id", "post-app"), ("client_secret", OAuthFixtures.webSecret)]),
                    auth: nil)
            },
            .init("native code redeemed by the web client", 400, "invalid_grant") {
                try app.token(form("nativeCrossClient", drop: "client_id"))
            },
            .init("native code without verifier", 400, "invalid_grant") {
                try app.token(form("nativeNoVerifier", drop: "code_verifier"), auth: nativeAuth)
            },
            .init("wrong client secret", 401, "invalid_client") {
                try app.token(form("wrongSecret"), auth: OAuthFixtures.basic("web-app", "not-the-secret"))
            },
            .init("basic and post credentials together", 400, "invalid_request") {
                try app.token(
                    form(
                        "basicAndPost",
                        add: [("client_id", "web-app"), ("client_secret", OAuthFixtures.webSecret)]))
            },
            .init("replayed code", 400, "invalid_grant") {
                try app.redeem(p.usedCode.0, p.usedCode.1)
            },
            .init("unknown code", 400, "invalid_grant") {
                try app.token([
                    ("grant_type", "authorization_code"), ("code", String(repeating: "A", count: 43)),
                    ("redirect_uri", OAuthFixtures.webRedirect),
                    ("code_verifier", String(repeating: "v", count: 43)),
                ])
            },
            .init("replayed refresh token", 400, "invalid_grant") {
                try app.token([("grant_type", "refresh_token"), ("refresh_token", p.rotatedRefreshToken)])
            },
            .init("refresh token of web-app used by native-app", 400, "invalid_grant") {
                try app.token(
                    [
                        ("grant_type", "refresh_token"), ("refresh_token", p.liveRefreshToken),
                        ("client_id", "native-app"),
                    ],
                    auth: nil)
            },
            .init("duplicated refresh_token", 400, "invalid_request") {
                try app.token([
                    ("grant_type", "refresh_token"), ("refresh_token", p.liveRefreshToken),
                    ("refresh_token", p.liveRefreshToken),
                ])
            },
            .init("refresh token with a wider scope", 400, "invalid_scope") {
                try app.token([
                    ("grant_type", "refresh_token"), ("refresh_token", p.liveRefreshToken),
                    ("scope", "openid api.admin"),
                ])
            },
            .init("password grant", 400, "unsupported_grant_type") {
                try app.token([("grant_type", "password"), ("username", "a"), ("password", "b")])
            },
            .init("implicit grant", 400, "unsupported_grant_type") {
                try app.token([("grant_type", "implicit")])
            },
            .init("no grant_type", 400, "invalid_request") { try app.token([("code", "x")]) },
            .init("malformed basic credentials", 401, "invalid_client") {
                try app.token(
                    [("grant_type", "client_credentials")], auth: ("Authorization", "Basic !!!not-base64"))
            },
            .init("basic without colon", 401, "invalid_client") {
                try app.token(
                    [("grant_type", "client_credentials")],
                    auth: ("Authorization", "Basic " + Data("web-app".utf8).base64EncodedString()))
            },
            .init("unknown client", 401, "invalid_client") {
                try app.token(
                    [("grant_type", "client_credentials")], auth: OAuthFixtures.basic("nobody", "x"))
            },
            .init("JSON body", 400, "invalid_request") {
                try c.postBody(
                    "/token", Array(#"{"grant_type":"client_credentials"}"#.utf8),
                    contentType: "application/json", headers: [OAuthFixtures.basic()])
            },
            .init("revoke with duplicated token", 400, "invalid_request") {
                TestAgent.Reply(
                    response: try app.client.post(
                        "/revoke", form: [("token", "a"), ("token", "b")], headers: [OAuthFixtures.basic()]))
            },
            .init("introspect with duplicated token", 400, "invalid_request") {
                TestAgent.Reply(
                    response: try app.client.post(
                        "/introspect", form: [("token", "a"), ("token", "b")],
                        headers: [OAuthFixtures.basic()]))
            },
        ]
        cases.append(
            .init("GET /token", 405) { try c.get("/token") })
        return cases
    }

    @Test func authorizationRequestsAreRefusedExactly() throws {
        let app = try OAuthFixtures.app()
        let catalogue = HostileCatalogue(app: app)
        let cases = Self.authorizeCases(catalogue)
        #expect(cases.count >= 60)
        try catalogue.run(cases)
    }

    @Test func tokenRequestsAreRefusedExactly() throws {
        let app = try OAuthFixtures.app()
        let prepared = try Self.prepare(app, labels: Self.codeLabels)
        let catalogue = HostileCatalogue(app: app)
        let cases = Self.tokenCases(catalogue, prepared)
        #expect(cases.count >= 30)
        try catalogue.run(cases)
        // None of the refused attempts spent a code that another case did not touch: a
        // normal redemption of a fresh code still works afterwards.
        let (_, tokens) = try app.signedInFlow()
        #expect(!tokens.accessToken.isEmpty)
    }
}
