import Crypto
import Foundation
import OIDC
import Postgres
import Testing
import WebAuthnCore

@testable import AuthServer
@testable import WebAuthnTestSupport

/// The authorization challenge endpoint (draft-ietf-oauth-first-party-apps), driven as a
/// first-party app drives it: form posts to `/authorize-challenge`, assertions from a software
/// authenticator, the code redeemed at `/token`.
enum FirstParty {
    static let passwordAppID = "native-password-app"

    static func app(configure: (inout Configuration) -> Void = { _ in }) throws -> TestApplication {
        try OAuthFixtures.app { configuration in
            var passwordApp = ClientMetadata(
                clientID: passwordAppID, clientName: "Password App", applicationType: .native,
                redirectURIs: ["com.example.password:/callback"], tokenEndpointAuthMethod: .none,
                grantTypes: ["authorization_code", "refresh_token"],
                scope: ["openid", "profile", "email", "offline_access"])
            passwordApp.firstParty = true
            passwordApp.firstPartyPasswordStep = true
            let thirdParty = ClientMetadata(
                clientID: "third-party-native", clientName: "Third Party", applicationType: .native,
                redirectURIs: ["com.thirdparty.app:/callback"], tokenEndpointAuthMethod: .none,
                grantTypes: ["authorization_code"], scope: ["openid", "profile"])
            configuration.clients += [passwordApp, thirdParty]
            configure(&configuration)
        }
    }

    /// One app's sign-in: its client id and PKCE verifier.
    struct Attempt {
        var clientID = "native-app"
        var verifier = Base64URL.encode(SecureRandom.bytes(count: 32))
        var redirectURI: String {
            clientID == "native-app" ? OAuthFixtures.nativeRedirect : "com.example.password:/callback"
        }
    }

    static func begin(_ app: TestApplication, _ attempt: Attempt, extra: [(String, String)] = []) throws
        -> TestAgent.Reply
    {
        try challenge(
            app,
            [
                ("client_id", attempt.clientID), ("response_type", "code"),
                ("scope", "openid profile email offline_access"),
                ("code_challenge", PKCE.challenge(for: attempt.verifier)), ("code_challenge_method", "S256"),
            ] + extra)
    }

    static func step(
        _ app: TestApplication, _ attempt: Attempt, session: String, _ form: [(String, String)]
    ) throws -> TestAgent.Reply {
        try challenge(app, [("client_id", attempt.clientID), ("auth_session", session)] + form)
    }

    static func challenge(_ app: TestApplication, _ form: [(String, String)]) throws -> TestAgent.Reply {
        try TestAgent.Reply(response: app.client.post("/authorize-challenge", form: form))
    }

    /// An account with a password and a passkey; returns the authenticator and user handle.
    static func accountWithPasskey(_ app: TestApplication, email: String = TestAgent.uniqueEmail()) throws
        -> (SoftwareAuthenticator, [UInt8], UUID)
    {
        let agent = TestAgent(app)
        let signUp = try agent.signUp(email: email)
        let accountID = try #require(UUID(uuidString: signUp.json["account_id"] as? String ?? ""))
        let authenticator = try SoftwareAuthenticator()
        #expect(try agent.registerPasskey(authenticator).status == 201)
        let handle: [UInt8] = try #require(
            try app.sql("SELECT webauthn_user_handle FROM accounts WHERE id = \(accountID)").first?.decode(
                "webauthn_user_handle"))
        return (authenticator, handle, accountID)
    }

    /// The assertion over the challenge of an `insufficient_authorization` answer, as form text.
    static func assertion(
        _ authenticator: SoftwareAuthenticator, handle: [UInt8], reply: TestAgent.Reply, signCount: UInt32 = 1
    ) throws -> String {
        let options = try reply.decode(
            PublicKeyCredentialRequestOptionsJSON.self, at: "passkey_request_options")
        return try assertion(
            authenticator, handle: handle, challenge: try Base64URL.decode(options.challenge),
            signCount: signCount)
    }

    static func assertion(
        _ authenticator: SoftwareAuthenticator, handle: [UInt8], challenge: [UInt8], signCount: UInt32 = 1
    ) throws -> String {
        let json = try authenticator.serverAssertion(challenge: challenge).userHandle(handle).signCount(
            signCount
        )
        .json()
        return String(decoding: try JSONEncoder().encode(json), as: UTF8.self)
    }

    /// The whole passkey loop; returns the code.
    static func passkeyCode(
        _ app: TestApplication, _ attempt: Attempt, _ authenticator: SoftwareAuthenticator, _ handle: [UInt8],
        signCount: UInt32 = 1
    ) throws -> String {
        let first = try begin(app, attempt)
        try #require(first.status == 403, "\(first.text)")
        let session = try #require(first.json["auth_session"] as? String)
        let reply = try step(
            app, attempt, session: session,
            [
                ("step", "passkey"),
                (
                    "credential",
                    try assertion(authenticator, handle: handle, reply: first, signCount: signCount)
                ),
            ])
        try #require(reply.status == 200, "\(reply.text)")
        return try #require(reply.json["authorization_code"] as? String)
    }

    static func redeem(_ app: TestApplication, code: String, _ attempt: Attempt, clientID: String? = nil)
        throws -> TestAgent.Reply
    {
        var form = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", attempt.redirectURI),
            ("client_id", clientID ?? attempt.clientID),
        ]
        form.append(("code_verifier", attempt.verifier))
        return try app.token(form, auth: nil)
    }
}

@Suite("First-party apps: authorization challenge endpoint refusals")
struct FirstPartyAppRefusalTests {
    @Test func aClientThatIsNotFirstPartyIsRefused() throws {
        let app = try FirstParty.app()
        let reply = try FirstParty.begin(app, FirstParty.Attempt(clientID: "third-party-native"))
        #expect(reply.status == 400)
        #expect(reply.error == "unauthorized_client")
        #expect(reply.json["auth_session"] == nil)
        #expect(reply.header("Cache-Control") == "no-store")
    }

    @Test func aFirstPartyWebClientIsRefused() throws {
        let app = try FirstParty.app()
        // `post-app` is first_party but a web client with a secret: it authenticates, and is
        // still refused.
        let reply = try FirstParty.challenge(
            app,
            [
                ("client_id", "post-app"), ("client_secret", OAuthFixtures.webSecret), ("scope", "openid"),
                ("code_challenge", PKCE.challenge(for: "v" + String(repeating: "x", count: 50))),
                ("code_challenge_method", "S256"),
            ])
        #expect(reply.status == 400)
        #expect(reply.error == "unauthorized_client")
    }

    @Test func anUnknownClientIsRefused() throws {
        let app = try FirstParty.app()
        let reply = try FirstParty.begin(app, FirstParty.Attempt(clientID: "nobody"))
        #expect(reply.status == 401)
        #expect(reply.error == "invalid_client")
    }

    @Test func pkceIsRequired() throws {
        let app = try FirstParty.app()
        let reply = try FirstParty.challenge(
            app, [("client_id", "native-app"), ("response_type", "code"), ("scope", "openid")])
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_request")
        let plain = try FirstParty.challenge(
            app,
            [
                ("client_id", "native-app"), ("scope", "openid"),
                ("code_challenge", String(repeating: "a", count: 43)), ("code_challenge_method", "plain"),
            ])
        #expect(plain.error == "invalid_request")
    }

    @Test func thePasswordStepIsRefusedWithoutTheClientFlag() throws {
        let app = try FirstParty.app()
        let email = TestAgent.uniqueEmail()
        let (_, _, accountID) = try FirstParty.accountWithPasskey(app, email: email)
        let attempt = FirstParty.Attempt()
        let first = try FirstParty.begin(app, attempt)
        #expect(first.status == 403)
        #expect(first.error == "insufficient_authorization")
        #expect(first.json["steps"] as? [String] == ["passkey", "sign_up", "recovery"])
        let sessionsBefore = try Self.sessionCount(app, accountID)
        let reply = try FirstParty.step(
            app, attempt, session: try #require(first.json["auth_session"] as? String),
            [("step", "password"), ("username", email), ("password", "correct horse battery")])
        #expect(reply.status == 400)
        #expect(reply.error == "unauthorized_client")
        #expect(reply.json["authorization_code"] == nil)
        // The right password started nothing.
        #expect(try Self.sessionCount(app, accountID) == sessionsBefore)
    }

    @Test func anAuthSessionOfAnotherClientIsRefusedAndLeftAlone() throws {
        let app = try FirstParty.app()
        let (authenticator, handle, _) = try FirstParty.accountWithPasskey(app)
        let victim = FirstParty.Attempt()
        let first = try FirstParty.begin(app, victim)
        let session = try #require(first.json["auth_session"] as? String)
        let assertion = try FirstParty.assertion(authenticator, handle: handle, reply: first)
        // Another client presents the victim's value.
        let attacker = FirstParty.Attempt(clientID: FirstParty.passwordAppID)
        let stolen = try FirstParty.step(
            app, attacker, session: session, [("step", "passkey"), ("credential", assertion)])
        #expect(stolen.status == 400)
        #expect(stolen.error == "invalid_session")
        #expect(stolen.json["authorization_code"] == nil)
        // The victim's sign-in goes on.
        let own = try FirstParty.step(
            app, victim, session: session, [("step", "passkey"), ("credential", assertion)])
        #expect(own.status == 200, "\(own.text)")
    }

    @Test func aReplayedAuthSessionStepIsRefused() throws {
        let app = try FirstParty.app()
        let (authenticator, handle, _) = try FirstParty.accountWithPasskey(app)
        let attempt = FirstParty.Attempt()
        let first = try FirstParty.begin(app, attempt)
        let session = try #require(first.json["auth_session"] as? String)
        // A malformed step uses the value up and answers a new one.
        let malformed = try FirstParty.step(
            app, attempt, session: session, [("step", "passkey"), ("credential", "{not json")])
        #expect(malformed.status == 400)
        #expect(malformed.error == "invalid_request")
        let next = try #require(malformed.json["auth_session"] as? String)
        #expect(next != session)
        let assertion = try FirstParty.assertion(authenticator, handle: handle, reply: first)
        let replay = try FirstParty.step(
            app, attempt, session: session, [("step", "passkey"), ("credential", assertion)])
        #expect(replay.status == 400)
        #expect(replay.error == "invalid_session")
        // The new value works once; after the code, it is spent as well.
        let done = try FirstParty.step(
            app, attempt, session: next, [("step", "passkey"), ("credential", assertion)])
        #expect(done.status == 200, "\(done.text)")
        let again = try FirstParty.step(
            app, attempt, session: next, [("step", "passkey"), ("credential", assertion)])
        #expect(again.error == "invalid_session")
    }

    @Test func anExpiredAuthSessionIsRefused() throws {
        let app = try FirstParty.app()
        let attempt = FirstParty.Attempt()
        let first = try FirstParty.begin(app, attempt)
        let session = try #require(first.json["auth_session"] as? String)
        try app.sql("UPDATE authorization_challenge_sessions SET expires_at = now() - interval '1 second'")
        let reply = try FirstParty.step(app, attempt, session: session, [("step", "recovery")])
        #expect(reply.error == "invalid_session")
    }

    @Test func theCodeNeedsTheRightPKCEVerifier() throws {
        let app = try FirstParty.app()
        let (authenticator, handle, _) = try FirstParty.accountWithPasskey(app)
        var attempt = FirstParty.Attempt()
        let code = try FirstParty.passkeyCode(app, attempt, authenticator, handle, signCount: 1)
        let without = try app.token(
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", attempt.redirectURI),
                ("client_id", attempt.clientID),
            ], auth: nil)
        #expect(without.status == 400)
        #expect(without.error == "invalid_grant")

        attempt = FirstParty.Attempt()
        let second = try FirstParty.passkeyCode(app, attempt, authenticator, handle, signCount: 2)
        var wrong = attempt
        wrong.verifier = Base64URL.encode(SecureRandom.bytes(count: 32))
        let reply = try FirstParty.redeem(app, code: second, wrong)
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_grant")
    }

    @Test func anAssertionForAnotherChallengeIsRefused() throws {
        let app = try FirstParty.app()
        let (authenticator, handle, accountID) = try FirstParty.accountWithPasskey(app)
        let attempt = FirstParty.Attempt()
        let first = try FirstParty.begin(app, attempt)
        // Signed over the challenge of another sign-in.
        let other = try FirstParty.begin(app, FirstParty.Attempt())
        let foreign = try FirstParty.assertion(authenticator, handle: handle, reply: other)
        let sessionsBefore = try Self.sessionCount(app, accountID)
        let reply = try FirstParty.step(
            app, attempt, session: try #require(first.json["auth_session"] as? String),
            [("step", "passkey"), ("credential", foreign)])
        #expect(reply.status == 403)
        #expect(reply.error == "insufficient_authorization")
        #expect(reply.json["authorization_code"] == nil)
        #expect(reply.json["passkey_request_options"] != nil)
        #expect(try Self.sessionCount(app, accountID) == sessionsBefore)
        let failures = try app.sql(
            "SELECT count(*)::int AS n FROM audit_events WHERE event = 'sign_in.failed' AND account_id = \(accountID)"
        ).first?.decode("n", as: Int.self)
        #expect(failures == 1)
        // The retry's challenge works.
        let retry = try FirstParty.step(
            app, attempt, session: try #require(reply.json["auth_session"] as? String),
            [
                ("step", "passkey"),
                ("credential", try FirstParty.assertion(authenticator, handle: handle, reply: reply)),
            ])
        #expect(retry.status == 200, "\(retry.text)")
    }

    @Test func aCodeFromTheEndpointCannotBeRedeemedByAnotherClient() throws {
        let app = try FirstParty.app()
        let (authenticator, handle, _) = try FirstParty.accountWithPasskey(app)
        let attempt = FirstParty.Attempt()
        let code = try FirstParty.passkeyCode(app, attempt, authenticator, handle)
        let reply = try FirstParty.redeem(app, code: code, attempt, clientID: FirstParty.passwordAppID)
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_grant")
    }

    @Test func recoveryAndUnknownStepsGoToTheBrowser() throws {
        let app = try FirstParty.app()
        let attempt = FirstParty.Attempt()
        for step in ["recovery", "otp", ""] {
            let first = try FirstParty.begin(app, attempt)
            let reply = try FirstParty.step(
                app, attempt, session: try #require(first.json["auth_session"] as? String), [("step", step)])
            #expect(reply.status == 403)
            #expect(reply.error == "redirect_to_web")
        }
    }

    @Test func malformedRequestsGetJSONErrors() throws {
        let app = try FirstParty.app()
        let json = try TestAgent.Reply(
            response: app.client.send(
                method: "POST", target: "/authorize-challenge",
                headers: [("Content-Type", "application/json")],
                body: Array(#"{"client_id":"native-app"}"#.utf8)))
        #expect(json.status == 400)
        #expect(json.error == "invalid_request")
        let attempt = FirstParty.Attempt()
        let first = try FirstParty.begin(app, attempt)
        let session = try #require(first.json["auth_session"] as? String)
        let duplicated = try FirstParty.challenge(
            app, [("client_id", "native-app"), ("auth_session", session), ("auth_session", session)])
        #expect(duplicated.status == 400)
        #expect(duplicated.error == "invalid_request")
        // A step that needs an earlier one.
        let early = try FirstParty.step(
            app, attempt, session: session, [("step", "sign_up_passkey"), ("credential", "{}")])
        #expect(early.status == 400)
        #expect(early.error == "invalid_request")
        #expect(early.json["auth_session"] as? String != nil)
    }

    @Test func aRefusedSignUpWritesNoAccount() throws {
        let app = try FirstParty.app()
        let attempt = FirstParty.Attempt()
        let first = try FirstParty.begin(app, attempt)
        let email = TestAgent.uniqueEmail("refused")
        let signUp = try FirstParty.step(
            app, attempt, session: try #require(first.json["auth_session"] as? String),
            [("step", "sign_up"), ("email", email), ("display_name", "Refused")])
        // An attestation over another challenge.
        let credential = try SoftwareAuthenticator().serverRegistration(
            challenge: Array(repeating: 7, count: 32)
        )
        .json()
        let finish = try FirstParty.step(
            app, attempt, session: try #require(signUp.json["auth_session"] as? String),
            [
                ("step", "sign_up_passkey"),
                ("credential", String(decoding: try JSONEncoder().encode(credential), as: UTF8.self)),
            ])
        #expect(finish.status == 403, "\(finish.text)")
        #expect(finish.error == "insufficient_authorization")
        #expect(finish.json["authorization_code"] == nil)
        let accounts = try app.sql(
            "SELECT count(*)::int AS n FROM account_emails WHERE normalized_email = \(email.lowercased())"
        ).first?.decode("n", as: Int.self)
        #expect(accounts == 0)
    }

    static func sessionCount(_ app: TestApplication, _ accountID: UUID) throws -> Int {
        try app.sql("SELECT count(*)::int AS n FROM authentication_sessions WHERE account_id = \(accountID)")
            .first?.decode(
                "n", as: Int.self) ?? -1
    }
}

@Suite("First-party apps: sign-in through the authorization challenge endpoint")
struct FirstPartyAppFlowTests {
    @Test func passkeySignInEndsWithTokensForASessionOfItsOwn() throws {
        let app = try FirstParty.app()
        let (authenticator, handle, accountID) = try FirstParty.accountWithPasskey(app)
        let attempt = FirstParty.Attempt()
        let code = try FirstParty.passkeyCode(app, attempt, authenticator, handle)
        let reply = try FirstParty.redeem(app, code: code, attempt)
        #expect(reply.status == 200, "\(reply.text)")
        let tokens = TokenSet(json: reply.json)
        #expect(tokens.refreshToken != nil)
        let idToken = try app.claims(of: try #require(tokens.idToken))
        #expect(idToken["sub"] == .string(accountID.lowercased))
        #expect(idToken["amr"] != nil)
        guard case .string(let sid) = idToken["sid"] else {
            Issue.record("no sid")
            return
        }
        // The app's sign-in is a server-side session of the account (no cookie was set).
        let row = try app.sql(
            "SELECT account_id FROM authentication_sessions WHERE id = \(try #require(UUID(uuidString: sid)))"
        )
        #expect(try row.first?.decode("account_id", as: UUID.self) == accountID)
        #expect(try app.userinfo(tokens.accessToken).status == 200)
        // The code is single-use like any other.
        #expect(try FirstParty.redeem(app, code: code, attempt).error == "invalid_grant")
    }

    @Test func passwordStepWhenTheClientEnablesIt() throws {
        let app = try FirstParty.app()
        let email = TestAgent.uniqueEmail()
        _ = try TestAgent(app).signUp(email: email)
        let attempt = FirstParty.Attempt(clientID: FirstParty.passwordAppID)
        let first = try FirstParty.begin(app, attempt)
        #expect(first.json["steps"] as? [String] == ["passkey", "password", "sign_up", "recovery"])
        let wrong = try FirstParty.step(
            app, attempt, session: try #require(first.json["auth_session"] as? String),
            [("step", "password"), ("username", email), ("password", "not the password")])
        #expect(wrong.status == 403)
        #expect(wrong.error == "insufficient_authorization")
        let right = try FirstParty.step(
            app, attempt, session: try #require(wrong.json["auth_session"] as? String),
            [("step", "password"), ("username", email), ("password", "correct horse battery")])
        #expect(right.status == 200, "\(right.text)")
        let code = try #require(right.json["authorization_code"] as? String)
        let tokens = try FirstParty.redeem(app, code: code, attempt)
        #expect(tokens.status == 200, "\(tokens.text)")
        let idToken = try app.claims(of: try #require(TokenSet(json: tokens.json).idToken))
        #expect(idToken["amr"] == .array([.string("pwd")]))
    }

    @Test func aPasswordIsNotEnoughWhenAcrValuesAskForAPasskey() throws {
        let app = try FirstParty.app()
        let email = TestAgent.uniqueEmail()
        let (authenticator, handle, accountID) = try FirstParty.accountWithPasskey(app, email: email)
        let attempt = FirstParty.Attempt(clientID: FirstParty.passwordAppID)
        let first = try FirstParty.begin(app, attempt, extra: [("acr_values", "phr")])
        let sessionsBefore = try FirstPartyAppRefusalTests.sessionCount(app, accountID)
        let password = try FirstParty.step(
            app, attempt, session: try #require(first.json["auth_session"] as? String),
            [("step", "password"), ("username", email), ("password", "correct horse battery")])
        #expect(password.status == 403, "\(password.text)")
        #expect(password.error == "insufficient_authorization")
        #expect(password.json["passkey_required"] as? Bool == true)
        #expect(password.json["steps"] as? [String] == ["passkey", "recovery"])
        // No password was checked: no session, no code.
        #expect(try FirstPartyAppRefusalTests.sessionCount(app, accountID) == sessionsBefore)
        let passkey = try FirstParty.step(
            app, attempt, session: try #require(password.json["auth_session"] as? String),
            [
                ("step", "passkey"),
                ("credential", try FirstParty.assertion(authenticator, handle: handle, reply: password)),
            ])
        #expect(passkey.status == 200, "\(passkey.text)")
        let tokens = try FirstParty.redeem(
            app, code: try #require(passkey.json["authorization_code"] as? String), attempt)
        let idToken = try app.claims(of: try #require(TokenSet(json: tokens.json).idToken))
        // A device-bound passkey (the software authenticator sets no backup flag).
        #expect(idToken["acr"] == .string("phrh"))
    }

    @Test func passwordStepIsThrottledLikeThePasswordPage() throws {
        let app = try FirstParty.app { configuration in configuration.signInThrottle.accountMaxFailures = 2 }
        let email = TestAgent.uniqueEmail()
        _ = try TestAgent(app).signUp(email: email)
        let attempt = FirstParty.Attempt(clientID: FirstParty.passwordAppID)
        var session = try #require(try FirstParty.begin(app, attempt).json["auth_session"] as? String)
        var last: TestAgent.Reply?
        for _ in 0..<3 {
            let reply = try FirstParty.step(
                app, attempt, session: session,
                [("step", "password"), ("username", email), ("password", "wrong password here")])
            session = reply.json["auth_session"] as? String ?? session
            last = reply
        }
        #expect(last?.status == 429)
        #expect(last?.error == "too_many_attempts")
        #expect(last?.header("Retry-After") != nil)
    }

    @Test func passkeySignUpThroughTheLoop() throws {
        let app = try FirstParty.app()
        let attempt = FirstParty.Attempt()
        let first = try FirstParty.begin(app, attempt)
        let email = TestAgent.uniqueEmail("app")
        let signUp = try FirstParty.step(
            app, attempt, session: try #require(first.json["auth_session"] as? String),
            [("step", "sign_up"), ("email", email), ("display_name", "App User")])
        #expect(signUp.status == 403, "\(signUp.text)")
        #expect(signUp.json["steps"] as? [String] == ["sign_up_passkey"])
        let options = try signUp.decode(
            PublicKeyCredentialCreationOptionsJSON.self, at: "passkey_creation_options")
        let authenticator = try SoftwareAuthenticator()
        let credential = try authenticator.serverRegistration(
            challenge: try Base64URL.decode(options.challenge)
        )
        .json()
        let finish = try FirstParty.step(
            app, attempt, session: try #require(signUp.json["auth_session"] as? String),
            [
                ("step", "sign_up_passkey"),
                ("credential", String(decoding: try JSONEncoder().encode(credential), as: UTF8.self)),
            ])
        #expect(finish.status == 200, "\(finish.text)")
        let code = try #require(finish.json["authorization_code"] as? String)
        let tokens = try FirstParty.redeem(app, code: code, attempt)
        #expect(tokens.status == 200, "\(tokens.text)")
        let info = try app.userinfo(TokenSet(json: tokens.json).accessToken)
        #expect(info.json["email"] as? String == email)
        // The new account signs in with its passkey through the loop as well.
        let handle: [UInt8] = try Base64URL.decode(options.user.id)
        let second = FirstParty.Attempt()
        _ = try FirstParty.passkeyCode(app, second, authenticator, handle, signCount: 2)
    }

    @Test func discoveryNamesTheEndpoint() throws {
        let app = try FirstParty.app()
        let document = try TestAgent(app).send("GET", "/.well-known/openid-configuration").json
        #expect(
            document["authorization_challenge_endpoint"] as? String
                == app.configuration.issuer + "/authorize-challenge")
    }

    @Test func thePasswordStepIsConfiguredOnFirstPartyNativeClientsOnly() throws {
        let json = """
            {"issuer": "https://id.example.com", "clients": [
              {"client_id": "ios", "application_type": "native", "first_party": true,
               "redirect_uris": ["com.example.app:/cb"], "first_party_password_step": true},
              {"client_id": "other", "application_type": "native",
               "redirect_uris": ["com.example.other:/cb"], "first_party_password_step": true},
              {"client_id": "web", "first_party": true, "client_secret_hash": "\(ClientSecretFixture.wellFormed)",
               "redirect_uris": ["https://id.example.com/cb"], "first_party_password_step": true}
            ]}
            """
        let result = ConfigurationLoader.check(data: Data(json.utf8))
        #expect(
            result.problems.map(\.description).filter { $0.contains("first_party_password_step") } == [
                "error: $.clients[1].first_party_password_step: is allowed only on a first_party native client: only those may use the authorization challenge endpoint (draft-ietf-oauth-first-party-apps §9.1)",
                "error: $.clients[2].first_party_password_step: is allowed only on a first_party native client: only those may use the authorization challenge endpoint (draft-ietf-oauth-first-party-apps §9.1)",
            ])
        let ios = """
            {"issuer": "https://id.example.com", "clients": [
              {"client_id": "ios", "application_type": "native", "first_party": true,
               "redirect_uris": ["com.example.app:/cb"], "first_party_password_step": true}]}
            """
        let configuration = try #require(ConfigurationLoader.check(data: Data(ios.utf8)).configuration)
        let client = try #require(configuration.clients.first)
        #expect(client.firstPartyPasswordStep)
        #expect(ClientRegistry.client(from: client).firstPartyPasswordStep)
    }
}
