import Crypto
import Foundation
import Postgres
import Testing

@testable import AuthServer
@testable import WebAuthnTestSupport

@Suite("auth-server sessions list and revoke")
struct SessionsCommandTests {
    @Test func listAndRevokeOneSessionThenAll() throws {
        let app = try TestApplication()
        let cli = try OperatorCLI(app)
        let email = TestAgent.uniqueEmail("sessions")
        let first = TestAgent(app)
        #expect(try first.signUp(email: email).status == 201)
        let second = TestAgent(app)
        let signedIn = try second.signIn(email: email, password: "correct horse battery")
        let secondSession = try #require(signedIn.json["session_id"] as? String)

        let list = cli.run(["sessions", "list"], ["--account", email])
        #expect(list.status == 0, "\(list.error)")
        #expect(list.output.split(separator: "\n").count == 3)
        #expect(list.output.contains("Safari on macOS"))
        let json = cli.run(["sessions", "list"], ["--account", email, "--json"])
        let sessions = try #require(
            try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        #expect(sessions.map { $0["id"] as? String }.contains(secondSession))

        let one = cli.run(["sessions", "revoke"], ["--session", secondSession])
        #expect(one.status == 0, "\(one.error)")
        #expect(one.output == "revoked 1 session(s)")
        #expect(try second.send("GET", "/api/account").status == 401)
        #expect(try first.send("GET", "/api/account").status == 200)
        let gone = cli.run(["sessions", "revoke"], ["--session", secondSession])
        #expect(gone.status == 1)
        #expect(gone.error.contains("no active session with id \(secondSession)"))

        let all = cli.run(["sessions", "revoke"], ["--account", email])
        #expect(all.output == "revoked 1 session(s)")
        #expect(try first.send("GET", "/api/account").status == 401)
        #expect(
            try app.count(
                "SELECT count(*) FROM audit_events WHERE event = 'session.revoked' AND actor = 'admin'") == 2)

        #expect(cli.run(["sessions", "revoke"]).status == 2)
        #expect(
            cli.run(["sessions", "revoke"], ["--account", email, "--session", secondSession]).status == 2)
        #expect(cli.run(["sessions", "revoke"], ["--session", "not-a-uuid"]).status == 2)
        #expect(cli.run(["sessions", "list"]).status == 2)
        let unknown = cli.run(["sessions", "list"], ["--account", "nobody@example.com"])
        #expect(unknown.status == 1)
        #expect(unknown.error.contains("no account with email nobody@example.com"))
        #expect(OperatorCLI.run(["sessions", "--help"]).status == 0)
    }

    @Test func revokingTellsTheClientsThroughBackChannelLogout() throws {
        let receiver = try LogoutReceiver(failures: 0)
        let app = try OAuthFixtures.app(backchannelURI: receiver.uri)
        let cli = try OperatorCLI(app)
        let (agent, _) = try app.signedInFlow()
        let email = try #require(try agent.send("GET", "/api/account").json["email"] as? String)
        #expect(cli.run(["sessions", "revoke"], ["--account", email]).output == "revoked 1 session(s)")
        let bodies = receiver.waitFor(1)
        #expect(bodies.count == 1)
        #expect(bodies.first?.hasPrefix("logout_token=") == true)
    }
}

@Suite("Audit events and auth-server audit")
struct AuditTests {
    @Test func signInsPasskeysPasswordsAndSignOutAreRecorded() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail("audit")
        let agent = TestAgent(app)
        #expect(try agent.signUp(email: email).status == 201)
        let id = try app.accountID(email: email)
        #expect(try app.auditEvents("account.created", account: id) == 1)

        #expect(try TestAgent(app).signIn(email: email, password: "not the password").status == 401)
        #expect(
            try TestAgent(app).signIn(email: "unknown-\(email)", password: "whatever it is").status == 401)
        let browser = TestAgent(app)
        let signedIn = try browser.signIn(email: email, password: "correct horse battery")
        #expect(signedIn.status == 200)
        #expect(try app.auditEvents("passkey.upgrade_offered", account: id) == 1)
        let failures = try app.sql(
            "SELECT account_id, detail->>'reason' AS reason, client_address FROM audit_events WHERE event = 'sign_in.failed' ORDER BY id"
        )
        #expect(
            try failures.map { try $0.decode("reason", as: String.self) } == [
                "wrong_password", "unknown_account",
            ])
        #expect(try failures.first?.decode("account_id", as: UUID?.self) == id)
        #expect(try failures.last?.decode("account_id", as: UUID?.self) == nil)
        #expect(try failures.first?.decode("client_address", as: String.self) == "127.0.0.1")
        #expect(
            try app.count(
                "SELECT count(*) FROM audit_events WHERE event = 'sign_in.succeeded' AND detail->>'method' = 'password'"
            ) == 1)

        let authenticator = try SoftwareAuthenticator()
        #expect(try browser.registerPasskey(authenticator).status == 201)
        #expect(
            try app.count(
                "SELECT count(*) FROM audit_events WHERE event = 'passkey.added' AND detail->>'ceremony' = 'modal'"
            ) == 1)
        let handle = try browser.userHandle()
        let passkeyBrowser = TestAgent(app)
        #expect(try passkeyBrowser.signInWithPasskey(authenticator, userHandle: handle).status == 200)
        #expect(
            try app.count(
                "SELECT count(*) FROM audit_events WHERE event = 'sign_in.succeeded' AND detail->>'method' = 'passkey'"
            ) == 1)

        #expect(
            try browser.post(
                "/api/password",
                ["current_password": "correct horse battery", "new_password": "another long passphrase"]
            ).status == 204)
        #expect(try app.auditEvents("password.changed", account: id) == 1)
        // The change signed the other browser out; the one that made it goes on.
        #expect(try passkeyBrowser.send("GET", "/api/account").status == 401)
        #expect(try browser.send("DELETE", "/api/password").status == 204)
        #expect(try app.auditEvents("password.removed", account: id) == 1)
        #expect(try browser.post("/api/signout").status == 204)
        #expect(try app.auditEvents("session.signed_out", account: id) == 1)
        let text = try app.sql("SELECT detail::text AS d FROM audit_events").map {
            try $0.decode("d", as: String.self)
        }
        #expect(!text.joined().contains("correct horse"))
    }

    @Test func codeReplayAndRefreshReuseAreRecorded() throws {
        let app = try OAuthFixtures.app()
        let attempt = AuthorizationAttempt()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let code = try #require(try agent.authorize(attempt)["code"])
        let first = try app.redeem(code, attempt)
        #expect(first.status == 200)
        #expect(try app.redeem(code, attempt).status == 400)
        #expect(
            try app.count(
                "SELECT count(*) FROM audit_events WHERE event = 'token.code_replayed' AND client_id = 'web-app' AND account_id IS NOT NULL"
            ) == 1)
        let refresh = try #require(first.json["refresh_token"] as? String)
        #expect(try app.token([("grant_type", "refresh_token"), ("refresh_token", refresh)]).status == 400)

        let (_, tokens) = try app.signedInFlow()
        let token = try #require(tokens.refreshToken)
        #expect(try app.token([("grant_type", "refresh_token"), ("refresh_token", token)]).status == 200)
        #expect(try app.token([("grant_type", "refresh_token"), ("refresh_token", token)]).status == 400)
        #expect(try app.auditEvents("token.refresh_reuse_detected") == 1)
    }

    @Test func auditCommandFilters() throws {
        let app = try TestApplication()
        let cli = try OperatorCLI(app)
        let email = TestAgent.uniqueEmail("filter")
        #expect(try TestAgent(app).signUp(email: email).status == 201)
        #expect(try TestAgent(app).signIn(email: email, password: "wrong password!").status == 401)
        #expect(try TestAgent(app).signIn(email: email, password: "correct horse battery").status == 200)
        try app.sql(
            "INSERT INTO audit_events (occurred_at, event, actor) VALUES (now() - interval '3 days', 'clients.reloaded', 'admin')"
        )

        let all = cli.run(["audit"])
        #expect(all.status == 0, "\(all.error)")
        let lines = all.output.split(separator: "\n")
        #expect(lines.count == 5)
        #expect(lines.first?.contains("passkey.upgrade_offered  user  ") == true)
        #expect(lines.dropFirst().first?.contains("sign_in.succeeded  user  ") == true)
        #expect(lines.dropFirst().first?.contains("127.0.0.1  method=password") == true)
        #expect(lines.last?.contains("clients.reloaded  admin  -  -  -  -") == true)
        #expect(all.output.contains("method=password reason=wrong_password"))

        #expect(cli.run(["audit"], ["--event", "sign_in.failed"]).output.split(separator: "\n").count == 1)
        #expect(cli.run(["audit"], ["--account", email]).output.split(separator: "\n").count == 4)
        #expect(cli.run(["audit"], ["--since", "24h"]).output.split(separator: "\n").count == 4)
        #expect(cli.run(["audit"], ["--until", "2d"]).output.split(separator: "\n").count == 1)
        let old = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-86_400))
        #expect(cli.run(["audit"], ["--until", old]).output.split(separator: "\n").count == 1)
        #expect(cli.run(["audit"], ["--limit", "2"]).output.split(separator: "\n").count == 2)
        let json = cli.run(["audit"], ["--event", "account.created", "--json"])
        let events = try #require(
            try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        #expect(events.count == 1)
        #expect(
            events.first?["account_id"] as? String
                == (try app.accountID(email: email)).uuidString.lowercased())

        let bad = cli.run(["audit"], ["--since", "yesterday"])
        #expect(bad.status == 2)
        #expect(bad.error.contains("--since must be an ISO 8601 instant or a duration like 30m, 24h, 7d"))
        #expect(cli.run(["audit"], ["--account", "nobody@example.com"]).status == 1)
        #expect(cli.run(["audit"], ["--account", UUID().uuidString]).output.isEmpty)
    }

    @Test func whenIsAnInstantOrADuration() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(AuditQuery.parseWhen("30m", now: now) == now.addingTimeInterval(-1_800))
        #expect(AuditQuery.parseWhen("24h", now: now) == now.addingTimeInterval(-86_400))
        #expect(AuditQuery.parseWhen("7d", now: now) == now.addingTimeInterval(-7 * 86_400))
        #expect(
            AuditQuery.parseWhen("2026-05-01T12:00:00Z", now: now)
                == Date(timeIntervalSince1970: 1_777_636_800))
        #expect(
            AuditQuery.parseWhen("2026-05-01T14:00:00+02:00", now: now)
                == Date(timeIntervalSince1970: 1_777_636_800))
        #expect(
            AuditQuery.parseWhen("2026-05-01T12:00:00.500Z", now: now)
                == Date(timeIntervalSince1970: 1_777_636_800.5))
        #expect(AuditQuery.parseWhen("2026-05-01", now: now) == Date(timeIntervalSince1970: 1_777_593_600))
        for bad in ["", "h", "-5m", "5w", "yesterday", "2026-13-01T00:00:00Z"] {
            #expect(AuditQuery.parseWhen(bad, now: now) == nil, "\(bad)")
        }
    }
}
