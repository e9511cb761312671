import Crypto
import Foundation
import OIDC
import Testing

@testable import AuthServer

@Suite("OAuth logout, revocation, introspection and well-known documents")
struct LogoutAndResourceTests {
    // MARK: - RP-initiated logout

    @Test func validHintForTheCurrentSessionSignsOutAtOnceAndReturnsWithState() throws {
        let app = try OAuthFixtures.app()
        let (agent, tokens) = try app.signedInFlow()
        let state = "a b&c=d"
        let query = FormEncoding.encode([
            (name: "id_token_hint", value: try #require(tokens.idToken)),
            (name: "post_logout_redirect_uri", value: "https://rp.example/signed-out"),
            (name: "state", value: state),
        ])
        let reply = try agent.send("GET", "/logout?" + query)
        #expect(reply.status == 303)
        #expect(reply.header("Location") == "https://rp.example/signed-out?state=a%20b%26c%3Dd")
        #expect(TestAgent.queryItems(try #require(reply.header("Location")))["state"] == state)
        #expect(agent.cookies["session"] == nil)
        #expect(try agent.send("GET", "/api/account").status == 401)
    }

    @Test func expiredHintIsStillAccepted() throws {
        let app = try OAuthFixtures.app { $0.oauth.idTokenLifetimeSeconds = 30 }
        let (agent, tokens) = try app.signedInFlow()
        // A hint signed by our key with an exp in the past.
        let claims = try app.claims(of: try #require(tokens.idToken))
        var expired = claims
        expired["exp"] = .int(Int(Date().timeIntervalSince1970) - 3600)
        let signer = try app.signingKeys.signer(for: .RS256)
        let hint = try signer.sign(payload: try JSONEncoder().encode(expired), type: "JWT")
        let reply = try agent.send(
            "GET",
            "/logout?"
                + FormEncoding.encode([
                    (name: "id_token_hint", value: hint),
                    (name: "post_logout_redirect_uri", value: "https://rp.example/signed-out"),
                ]))
        #expect(reply.header("Location") == "https://rp.example/signed-out")
    }

    @Test func withoutHintTheUserConfirmsAndIsNotSentToTheClient() throws {
        let app = try OAuthFixtures.app()
        let (agent, _) = try app.signedInFlow()
        let query = "client_id=web-app&post_logout_redirect_uri=https%3A%2F%2Frp.example%2Fsigned-out&state=s"
        let page = try agent.send("GET", "/logout?" + query)
        #expect(page.status == 200)
        #expect(page.text.contains("logout-form"))
        #expect(page.text.contains("Web App"))
        #expect(try agent.send("GET", "/api/account").status == 200)
        let fields = TestAgent.hiddenFields(page.text).filter { $0.0 != "csrf_token" }
        let done = try agent.postForm("/logout/confirm", fields + [("confirm", "yes")])
        #expect(done.status == 200)
        #expect(done.header("Location") == nil)
        #expect(done.text.contains("signed-out"))
        #expect(try agent.send("GET", "/api/account").status == 401)
    }

    @Test func declinedConfirmationKeepsTheSession() throws {
        let app = try OAuthFixtures.app()
        let (agent, _) = try app.signedInFlow()
        let page = try agent.send("GET", "/logout")
        let fields = TestAgent.hiddenFields(page.text).filter { $0.0 != "csrf_token" }
        let kept = try agent.postForm("/logout/confirm", fields + [("confirm", "no")])
        #expect(kept.text.contains("logout-cancelled"))
        #expect(try agent.send("GET", "/api/account").status == 200)
    }

    /// A link to `/logout?confirm=yes` must not answer the question for the user: the page
    /// echoes the request's parameters as hidden fields, and "Stay signed in" has to keep the
    /// session even when the link carried the answer (or a CSRF token) of its own.
    @Test func aLinkCannotAnswerTheConfirmationForTheUser() throws {
        let app = try OAuthFixtures.app()
        let (agent, _) = try app.signedInFlow()
        let page = try agent.send("GET", "/logout?confirm=yes&csrf_token=forged")
        #expect(page.status == 200)
        let hidden = TestAgent.hiddenFields(page.text)
        #expect(!hidden.contains { $0.0 == "confirm" })
        #expect(!hidden.contains { $0.0 == "csrf_token" && $0.1 == "forged" })
        let kept = try agent.postForm(
            "/logout/confirm", hidden.filter { $0.0 != "csrf_token" } + [("confirm", "no")])
        #expect(kept.text.contains("logout-cancelled"))
        #expect(try agent.send("GET", "/api/account").status == 200)
        // The answer posted twice is no answer: the session stays.
        let twice = try agent.postForm("/logout/confirm", [("confirm", "yes"), ("confirm", "no")])
        #expect(twice.text.contains("logout-cancelled"))
        #expect(try agent.send("GET", "/api/account").status == 200)
    }

    @Test func hintForAnotherSessionNeedsConfirmationAndThenReturnsToTheClient() throws {
        let app = try OAuthFixtures.app()
        let (_, otherTokens) = try app.signedInFlow()
        let (agent, _) = try app.signedInFlow()
        let query = FormEncoding.encode([
            (name: "id_token_hint", value: try #require(otherTokens.idToken)),
            (name: "post_logout_redirect_uri", value: "https://rp.example/signed-out"),
            (name: "state", value: "x"),
        ])
        let page = try agent.send("GET", "/logout?" + query)
        #expect(page.status == 200)
        #expect(page.text.contains("logout-form"))
        let fields = TestAgent.hiddenFields(page.text).filter { $0.0 != "csrf_token" }
        let done = try agent.postForm("/logout/confirm", fields + [("confirm", "yes")])
        #expect(done.header("Location") == "https://rp.example/signed-out?state=x")
    }

    @Test func unregisteredPostLogoutURIIsAnErrorPageAndAForgedHintSignsNobodyOut() throws {
        let app = try OAuthFixtures.app()
        let (agent, tokens) = try app.signedInFlow()
        let unregistered = try agent.send(
            "GET",
            "/logout?"
                + FormEncoding.encode([
                    (name: "id_token_hint", value: try #require(tokens.idToken)),
                    (name: "post_logout_redirect_uri", value: "https://evil.example/"),
                ]))
        #expect(unregistered.status == 400)
        #expect(unregistered.header("Location") == nil)
        // A forged hint is ignored: the user is asked (see hintsThatAreNotOurIDTokensNeitherSignOutNorRedirect).
        let forged = try agent.send("GET", "/logout?id_token_hint=eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")
        #expect(forged.status == 200 && forged.text.contains("logout-form"))
        #expect(try agent.send("GET", "/api/account").status == 200)
        let confirmWithoutCSRF = try agent.postForm("/logout/confirm", [("confirm", "yes")], withCSRF: false)
        #expect(confirmWithoutCSRF.status == 400)
        #expect(try agent.send("GET", "/api/account").status == 200)
    }

    /// Tokens this server signed that are not ID tokens (an access token, a logout token), a
    /// token signed by another key, and an ID token for a client that is not registered: none
    /// may sign the user out without asking, or send the browser to the client.
    @Test func hintsThatAreNotOurIDTokensNeitherSignOutNorRedirect() throws {
        let app = try OAuthFixtures.app()
        let (agent, tokens) = try app.signedInFlow()
        let idClaims = try app.claims(of: try #require(tokens.idToken))
        let subject = try #require(idClaims["sub"]?.stringValue)
        let sid = try #require(idClaims["sid"]?.stringValue)
        let now = Date()
        let ourKey = try app.signingKeys.signer(for: .RS256)
        let logoutToken = try LogoutToken(
            issuer: app.configuration.issuer, audience: "web-app", issuedAt: now,
            expiresAt: now.addingTimeInterval(120), jwtID: "j-1", subject: subject, sessionID: sid
        ).sign(with: ourKey)
        let otherKey = try JWSSigner(
            privateKey: .p256(P256.Signing.PrivateKey()), algorithm: .ES256, keyID: "other")
        var unknownAudience = idClaims
        unknownAudience["aud"] = .string("unregistered-app")
        let hints = [
            ("access token", tokens.accessToken),
            ("logout token", logoutToken),
            ("another key", try otherKey.sign(payload: JSONBody.encode(idClaims), type: "JWT")),
            (
                "unregistered audience",
                try ourKey.sign(payload: JSONBody.encode(unknownAudience), type: "JWT")
            ),
        ]
        var lastPage: TestAgent.Reply?
        let redirect: [(name: String, value: String)] = [
            (name: "post_logout_redirect_uri", value: "https://rp.example/signed-out"),
            (name: "state", value: "x"),
        ]
        for ((name, hint), withRedirect) in hints.flatMap({ hint in [(hint, false), (hint, true)] }) {
            let page = try agent.send(
                "GET",
                "/logout?"
                    + FormEncoding.encode(
                        [(name: "id_token_hint", value: hint)] + (withRedirect ? redirect : [])))
            #expect(page.status == 200, "\(name) redirect=\(withRedirect)")
            #expect(page.header("Location") == nil, "\(name)")
            #expect(page.text.contains("logout-form"), "\(name): the user is asked")
            #expect(try agent.send("GET", "/api/account").status == 200, "\(name): still signed in")
            lastPage = page
        }
        // Confirming signs out, but still does not send the browser to the client.
        let fields = TestAgent.hiddenFields(try #require(lastPage).text).filter { $0.0 != "csrf_token" }
        let done = try agent.postForm("/logout/confirm", fields + [("confirm", "yes")])
        #expect(done.status == 200)
        #expect(done.header("Location") == nil)
        #expect(try agent.send("GET", "/api/account").status == 401)
    }

    @Test func backChannelLogoutIsDeliveredWithRetries() throws {
        let receiver = try LogoutReceiver(failures: 1)
        let app = try OAuthFixtures.app(backchannelURI: receiver.uri)
        let (agent, tokens) = try app.signedInFlow()
        let idToken = try app.claims(of: try #require(tokens.idToken))
        let reply = try agent.send(
            "GET",
            "/logout?" + FormEncoding.encode([(name: "id_token_hint", value: try #require(tokens.idToken))]))
        #expect(reply.status == 200)
        let bodies = receiver.waitFor(2)
        try #require(bodies.count == 2)
        let token = try #require(TestAgent.queryItems("http://x/?" + bodies[1])["logout_token"])
        let verified = try app.verifier().verify(token, expectedType: "logout+jwt")
        let claims = try verified.decodePayload(as: [String: OIDC.JSONValue].self)
        #expect(claims["iss"] == .string(app.configuration.issuer))
        #expect(claims["aud"] == .string("web-app"))
        #expect(claims["sub"] == idToken["sub"])
        #expect(claims["sid"] == idToken["sid"])
        #expect(claims["nonce"] == nil)
        #expect(claims["jti"]?.stringValue != nil)
        #expect(claims["iat"]?.intValue != nil)
        #expect(claims["events"] == .object([LogoutToken.event: .object([:])]))
        // Delivered once it succeeded: recorded, and no further attempts.
        let deadline = Date().addingTimeInterval(10)
        var delivered = false
        while Date() < deadline && !delivered {
            delivered =
                try app.sql(
                    "SELECT 1 AS one FROM backchannel_logout_deliveries WHERE delivered_at IS NOT NULL AND attempts = 2"
                ).count == 1
            if !delivered { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(delivered)
    }

    @Test func eachCodeKeepsTheSessionsClientRowAndItsCurrentLogoutURI() throws {
        let app = try OAuthFixtures.app(backchannelURI: "https://rp.example/logout-a")
        _ = try app.signedInFlow()
        let row = try #require(
            try app.sql("SELECT session_id, account_id FROM session_clients WHERE client_id = 'web-app'")
                .first)
        let sessionID: UUID = try row.decode("session_id")
        let accountID: UUID = try row.decode("account_id")
        func issueCode(logoutURI: String?) throws {
            let issued = IssuedAuthorizationCode(
                clientID: "web-app", redirectURI: "https://rp.example/cb", codeChallenge: nil,
                scopes: ["openid"],
                nonce: nil, accountID: accountID.uuidString.lowercased(), authTime: Date(), amr: ["pwd"],
                sessionID: sessionID.uuidString.lowercased(), idTokenClaims: [], expiresAt: Date())
            let accounts = AccountServices(
                configuration: app.configuration, pool: app.database.pool, log: Log(write: { _ in }),
                hasher: TestApplication.hasher)
            try PostgresAuthorizeStore(db: app.database.pool, sessions: accounts.sessions).insertCode(
                NewAuthorizationCode(
                    id: UUID(), code: TestAgent.uniqueEmail(), issued: issued, accountID: accountID,
                    sessionID: sessionID, lifetimeSeconds: 60, backchannelLogoutURI: logoutURI))
        }
        func stored() throws -> [String?] {
            try app.sql("SELECT backchannel_logout_uri FROM session_clients WHERE session_id = \(sessionID)")
                .map { try $0.decode("backchannel_logout_uri", as: String?.self) }
        }
        #expect(try stored() == ["https://rp.example/logout-a"])
        try issueCode(logoutURI: "https://rp.example/logout-b")  // the client's URI changed (reload)
        #expect(try stored() == ["https://rp.example/logout-b"])
        try issueCode(logoutURI: nil)
        #expect(try stored() == [nil])
        try issueCode(logoutURI: nil)
        #expect(try stored() == [nil])
        #expect(
            try app.sql("SELECT count(*) AS n FROM authorization_codes WHERE session_id = \(sessionID)")
                .first?
                .decode("n", as: Int.self) == 4)
    }

    /// A client that still holds the account's tokens after the session ended (offline access)
    /// hears of the account's deletion: a logout token that names the subject only (§2.4).
    @Test func aDeletedAccountIsToldToClientsHoldingItsTokensOutsideASession() throws {
        let receiver = try LogoutReceiver(failures: 0)
        let app = try OAuthFixtures.app(backchannelURI: receiver.uri)
        let (agent, tokens) = try app.signedInFlow()
        #expect(tokens.refreshToken != nil)
        let subject = try app.claims(of: try #require(tokens.idToken))["sub"]?.stringValue
        #expect(try agent.postForm("/signout", []).status == 303)
        try #require(receiver.waitFor(1).count == 1)
        var admin = AdminFlow(store: PostgresAdminStore(db: app.database.pool))
        admin.clients = app.configuration.clients
        let outcome = try admin.delete(accountID: try #require(UUID(uuidString: subject ?? "")))
        #expect(outcome?.logoutsQueued == 1)
        let bodies = receiver.waitFor(2)
        try #require(bodies.count == 2)
        let token = try #require(TestAgent.queryItems("http://x/?" + bodies[1])["logout_token"])
        let claims = try app.claims(of: token, type: "logout+jwt")
        #expect(claims["sub"]?.stringValue == subject && claims["sid"] == nil)
        #expect(claims["aud"] == .string("web-app"))
        // Delivered, it was the last row that named the account.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline,
            try app.sql("SELECT 1 FROM backchannel_logout_deliveries WHERE session_id IS NULL").count > 0
        {
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(try app.sql("SELECT 1 FROM backchannel_logout_deliveries WHERE session_id IS NULL").isEmpty)
    }

    /// The logout token goes to the registered URI only: a redirect from it (a 307 keeps the
    /// POST and its body) would let a client's host send it, and the request, into this
    /// server's own network.
    @Test func backchannelDeliveriesDoNotFollowRedirects() throws {
        let inside = try LogoutReceiver(failures: 0)
        let registered = try LogoutReceiver(failures: 0, redirectTo: inside.uri)
        let app = try OAuthFixtures.app(backchannelURI: registered.uri)
        let (agent, _) = try app.signedInFlow()
        #expect(try agent.postForm("/signout", []).status == 303)
        try #require(registered.waitFor(1).count >= 1)
        Thread.sleep(forTimeInterval: 1)
        #expect(inside.bodies.isEmpty)
        // A redirect is no delivery: it is retried, not marked delivered.
        #expect(try app.sql("SELECT 1 FROM backchannel_logout_deliveries WHERE delivered_at IS NOT NULL").isEmpty)
    }

    @Test func signingOutOnTheAccountPageAlsoNotifiesTheClients() throws {
        let receiver = try LogoutReceiver(failures: 0)
        let app = try OAuthFixtures.app(backchannelURI: receiver.uri)
        let (agent, tokens) = try app.signedInFlow()
        let sid = try app.claims(of: try #require(tokens.idToken))["sid"]?.stringValue
        // Signed in to no client: no notification for this other session.
        try TestAgent(app).signUp(email: TestAgent.uniqueEmail())
        let signedOut = try agent.postForm("/signout", [])
        #expect(signedOut.status == 303)
        let bodies = receiver.waitFor(1)
        try #require(bodies.count == 1)
        let token = try #require(TestAgent.queryItems("http://x/?" + bodies[0])["logout_token"])
        #expect(try app.claims(of: token, type: "logout+jwt")["sid"]?.stringValue == sid)
        #expect(
            try app.sql("SELECT count(*) AS n FROM backchannel_logout_deliveries").first?.decode(
                "n", as: Int.self) == 1)
    }

    @Test func deliveriesAreClaimedOnceAcrossWorkers() throws {
        let receiver = try LogoutReceiver(failures: 0)
        let app = try OAuthFixtures.app(backchannelURI: receiver.uri)
        app.backchannelLogout.stop()
        let (agent, tokens) = try app.signedInFlow()
        _ = try agent.send(
            "GET",
            "/logout?" + FormEncoding.encode([(name: "id_token_hint", value: try #require(tokens.idToken))]))
        let accounts = AccountServices(
            configuration: app.configuration, pool: app.database.pool, log: Log(write: { _ in }),
            hasher: TestApplication.hasher)
        let oauth = OAuthServices(
            configuration: app.configuration, pool: app.database.pool, signingKeys: app.signingKeys,
            accounts: accounts, log: Log(write: { _ in }))
        let workers = [BackchannelLogoutWorker(oauth: oauth), BackchannelLogoutWorker(oauth: oauth)]
        let attempted = try workers.map { try $0.runOnce() }
        #expect(attempted.reduce(0, +) == 1)
        #expect(receiver.waitFor(1).count == 1)
        #expect(try workers.map { try $0.runOnce() } == [0, 0])
    }

    // MARK: - Revocation and introspection

    @Test func introspectionReportsLiveTokensOnlyToTheirAuthenticatedClient() throws {
        let app = try OAuthFixtures.app()
        let (_, tokens) = try app.signedInFlow()
        func introspect(
            _ token: String, auth: (String, String)? = OAuthFixtures.basic(), extra: [(String, String)] = []
        ) throws -> TestAgent.Reply {
            try TestAgent.Reply(
                response: app.client.post(
                    "/introspect", form: [("token", token)] + extra, headers: auth.map { [$0] } ?? []))
        }
        let access = try introspect(tokens.accessToken)
        #expect(access.status == 200)
        #expect(access.json["active"] as? Bool == true)
        #expect(access.json["client_id"] as? String == "web-app")
        #expect(access.json["token_type"] as? String == "Bearer")
        #expect(access.json["scope"] as? String == "openid profile email offline_access")
        let refresh = try introspect(try #require(tokens.refreshToken))
        #expect(refresh.json["active"] as? Bool == true)
        #expect(refresh.json["token_type"] as? String == "refresh_token")
        #expect(try introspect("garbage").json["active"] as? Bool == false)
        let otherClient = try introspect(
            tokens.accessToken, auth: nil,
            extra: [("client_id", "post-app"), ("client_secret", OAuthFixtures.webSecret)])
        #expect(otherClient.json["active"] as? Bool == false)
        let publicClient = try introspect(tokens.accessToken, auth: nil, extra: [("client_id", "native-app")])
        #expect(publicClient.status == 401)
        #expect(try introspect(tokens.accessToken, auth: nil).status == 401)
    }

    @Test func revocationOfAccessAndRefreshTokens() throws {
        let app = try OAuthFixtures.app()
        let (_, tokens) = try app.signedInFlow()
        func revoke(
            _ token: String, auth: (String, String)? = OAuthFixtures.basic(), extra: [(String, String)] = []
        ) throws -> TestAgent.Reply {
            try TestAgent.Reply(
                response: app.client.post(
                    "/revoke", form: [("token", token)] + extra, headers: auth.map { [$0] } ?? []))
        }
        // Another client cannot revoke this client's token (and learns nothing: 200).
        let foreign = try revoke(
            tokens.accessToken, auth: nil,
            extra: [("client_id", "post-app"), ("client_secret", OAuthFixtures.webSecret)])
        #expect(foreign.status == 200)
        #expect(try app.userinfo(tokens.accessToken).status == 200)
        #expect(try revoke(tokens.accessToken, extra: [("token_type_hint", "refresh_token")]).status == 200)
        #expect(try app.userinfo(tokens.accessToken).status == 401)
        #expect(try revoke(try #require(tokens.refreshToken)).status == 200)
        #expect(
            try app.token([
                ("grant_type", "refresh_token"), ("refresh_token", try #require(tokens.refreshToken)),
            ]).error == "invalid_grant")
        #expect(try revoke("unknown-token").status == 200)
        #expect(try revoke("x", auth: OAuthFixtures.basic("web-app", "wrong")).status == 401)
    }

    @Test func userinfoRefusals() throws {
        let app = try OAuthFixtures.app()
        let missing = try TestAgent.Reply(response: app.client.get("/userinfo"))
        #expect(missing.status == 401)
        #expect(missing.header("WWW-Authenticate") == #"Bearer realm="\#(app.configuration.issuer)""#)
        let inQuery = try TestAgent.Reply(response: app.client.get("/userinfo?access_token=abc"))
        #expect(inQuery.status == 400)
        #expect(try app.userinfo("not.a.token").status == 401)
        let machine = try app.token([("grant_type", "client_credentials"), ("scope", "api.read")])
        let insufficient = try app.userinfo(try #require(machine.json["access_token"] as? String))
        #expect(insufficient.status == 403)
        #expect(insufficient.header("WWW-Authenticate")?.contains("insufficient_scope") == true)
    }

    // MARK: - Discovery and association files

    @Test func discoveryDescribesWhatIsImplemented() throws {
        let app = try OAuthFixtures.app()
        let reply = try TestAgent(app).send("GET", "/.well-known/openid-configuration")
        #expect(reply.status == 200)
        let document = reply.json
        let issuer = app.configuration.issuer
        #expect(document["issuer"] as? String == issuer)
        // Signed request objects (RFC 9101) in `request`; `request_uri` only from /par.
        #expect(document["request_parameter_supported"] as? Bool == true)
        #expect(document["request_uri_parameter_supported"] as? Bool == false)
        #expect(document["backchannel_logout_supported"] as? Bool == true)
        #expect(document["backchannel_logout_session_supported"] as? Bool == true)
        #expect(document["code_challenge_methods_supported"] as? [String] == ["S256"])
        #expect(document["authorization_response_iss_parameter_supported"] as? Bool == true)
        // Every advertised endpoint is served here.
        for (key, method) in [
            ("authorization_endpoint", "GET"), ("token_endpoint", "POST"), ("userinfo_endpoint", "GET"),
            ("jwks_uri", "GET"),
            ("revocation_endpoint", "POST"), ("introspection_endpoint", "POST"),
            ("end_session_endpoint", "GET"), ("pushed_authorization_request_endpoint", "POST"),
            ("authorization_challenge_endpoint", "POST"),
        ] {
            let url = try #require(document[key] as? String)
            #expect(url.hasPrefix(issuer + "/"))
            let path = String(url.dropFirst(issuer.count))
            let status = try app.client.send(method: method, target: path, headers: [], body: []).status
            #expect(status != 404 && status != 405, "\(key) \(status)")
        }
        let jwks = try TestAgent(app).send("GET", "/jwks")
        let keys = try #require(jwks.json["keys"] as? [[String: Any]])
        let advertised = try #require(document["id_token_signing_alg_values_supported"] as? [String])
        #expect(keys.contains { $0["alg"] as? String == "RS256" })
        // Only algorithms with a signing key are offered for ID tokens.
        #expect(advertised == ["RS256", "ES256"])
    }

    @Test func appleAppSiteAssociationAndAssetLinks() throws {
        let app = try OAuthFixtures.app { configuration in
            configuration.issuer = "https://localhost"
            configuration.webAuthn.relatedOrigins = ["https://shop.example"]
        }
        let aasa = try TestAgent(app).send("GET", "/.well-known/apple-app-site-association")
        #expect(aasa.status == 200)
        #expect(aasa.header("Content-Type") == "application/json")
        let webcredentials = try #require(aasa.json["webcredentials"] as? [String: Any])
        #expect(webcredentials["apps"] as? [String] == ["ABCDE12345.com.example.app"])
        let details = try #require((aasa.json["applinks"] as? [String: Any])?["details"] as? [[String: Any]])
        #expect(details.count == 1)
        #expect(details.first?["appIDs"] as? [String] == ["ABCDE12345.com.example.app"])
        #expect(details.first?["components"] as? [[String: String]] == [["/": "/app/callback"]])

        let links = try TestAgent(app).send("GET", "/.well-known/assetlinks.json")
        let statements = try #require(
            try JSONSerialization.jsonObject(with: Data(links.response.body)) as? [[String: Any]])
        #expect(statements.count == 1)
        #expect(
            statements.first?["relation"] as? [String] == [
                "delegate_permission/common.get_login_creds", "delegate_permission/common.handle_all_urls",
            ])
        let target = try #require(statements.first?["target"] as? [String: Any])
        #expect(target["package_name"] as? String == "com.example.app")
        #expect(target["namespace"] as? String == "android_app")

        let related = try TestAgent(app).send("GET", "/.well-known/webauthn")
        #expect(related.json["origins"] as? [String] == ["https://shop.example"])
        // The Android app's origin is accepted by the passkey ceremonies.
        let fingerprint = [UInt8](repeating: 0xAB, count: 31) + [0xCD]
        let expected =
            "android:apk-key-hash:"
            + Data(fingerprint).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        #expect(app.configuration.allowedWebAuthnOrigins.contains(expected))
        #expect(app.configuration.allowedWebAuthnOrigins.contains("https://shop.example"))
    }
}
