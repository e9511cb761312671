import Crypto
import Foundation
import Postgres
import Testing

@testable import AuthServer
@testable import WebAuthnTestSupport

@Suite("auth-server users list, show, disable, enable, reset-password, delete")
struct UsersOperationsTests {
    static let password = "correct horse battery"

    @Test func helpAndUsageErrors() throws {
        let help = try Executable.run(["users", "list", "--help"])
        #expect(help.status == 0)
        #expect(
            help.output.contains(
                "users list --config FILE [--email-contains TEXT] [--disabled] [--limit N] [--json]"))
        let top = try Executable.run(["--help"])
        for command in [
            "users show --config FILE ID|EMAIL", "users disable --config FILE ID|EMAIL",
            "users reset-password --config FILE ID|EMAIL [--generate]",
            "users delete --config FILE ID|EMAIL --yes",
            "sessions revoke --config FILE (--account ID|EMAIL | --session UUID)", "audit --config FILE",
            "maintenance run --config FILE", "clients reload --config FILE",
        ] {
            #expect(top.output.contains(command), "\(command)")
        }

        let noYes = OperatorCLI.run(["users", "delete", "--config", "/nonexistent.json", "a@example.com"])
        #expect(noYes.status == 2)
        #expect(noYes.error.contains("cannot be undone; add --yes to confirm"))
        let noConfig = OperatorCLI.run(["users", "show", "a@example.com"])
        #expect(noConfig.status == 2)
        #expect(noConfig.error.contains("--config FILE is required"))
        let unknown = OperatorCLI.run(["users", "list", "--config", "x.json", "--frobnicate"])
        #expect(unknown.status == 2)
        #expect(unknown.error.contains("unknown option --frobnicate"))
        let badLimit = OperatorCLI.run(["users", "list", "--config", "x.json", "--limit", "0"])
        #expect(badLimit.status == 2)
        let twoAccounts = OperatorCLI.run([
            "users", "disable", "--config", "x.json", "a@example.com", "b@example.com",
        ])
        #expect(twoAccounts.status == 2)
        let missingFile = OperatorCLI.run(["users", "list", "--config", "/nonexistent/config.json"])
        #expect(missingFile.status == 1)
        #expect(missingFile.error.contains("cannot read file /nonexistent/config.json"))
    }

    @Test func listAndShowDescribeAccounts() throws {
        let app = try TestApplication()
        let cli = try OperatorCLI(app)
        let first = TestAgent.uniqueEmail("first")
        let second = TestAgent.uniqueEmail("second")
        let agent = TestAgent(app)
        #expect(try agent.signUp(email: first, name: "First Person").status == 201)
        #expect(try agent.registerPasskey(try SoftwareAuthenticator()).status == 201)
        #expect(try TestAgent(app).signUp(email: second, name: "Second").status == 201)

        let list = cli.run(["users", "list"])
        #expect(list.status == 0, "\(list.error)")
        let lines = list.output.split(separator: "\n")
        #expect(lines.first?.hasPrefix("ID") == true)
        #expect(lines.first?.contains("VERIFIED") == true)
        #expect(lines.count == 3)
        #expect(lines.contains { $0.contains(first) && $0.contains("First Person") && $0.contains("  1  ") })

        let filtered = cli.run(["users", "list"], ["--email-contains", "SECOND", "--json"])
        #expect(filtered.status == 0)
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(filtered.output.utf8)) as? [[String: Any]])
        #expect(json.count == 1)
        #expect(json.first?["email"] as? String == second)
        #expect(json.first?["has_password"] as? Bool == true)
        #expect(json.first?["email_verified"] as? Bool == false)
        #expect(cli.run(["users", "list"], ["--disabled"]).output.split(separator: "\n").count == 1)

        let show = cli.run(["users", "show"], [first])
        #expect(show.status == 0, "\(show.error)")
        #expect(show.output.contains("name      First Person"))
        #expect(show.output.contains("password  yes"))
        #expect(show.output.contains("sessions  1 active"))
        #expect(show.output.contains("\(first) (not verified)"))
        #expect(show.output.contains("account.created"))
        #expect(show.output.contains("passkey.added"))
        #expect(show.output.contains("last used never  device-bound"))

        let byID = cli.run(["users", "show"], [try app.accountID(email: first).uuidString, "--json"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(byID.output.utf8)) as? [String: Any])
        #expect((object["passkeys"] as? [[String: Any]])?.count == 1)
        #expect(object["active_sessions"] as? Int == 1)

        let missing = cli.run(["users", "show"], ["nobody@example.com"])
        #expect(missing.status == 1)
        #expect(missing.error.contains("no account with email nobody@example.com"))
        let missingID = cli.run(["users", "show"], [UUID().uuidString])
        #expect(missingID.status == 1)
        #expect(missingID.error.contains("no account with id"))
    }

    @Test func disableBlocksSignInSessionsAndTokensUntilEnabled() throws {
        let app = try OAuthFixtures.app()
        let cli = try OperatorCLI(app)
        let (agent, tokens) = try app.signedInFlow()
        let account = try #require(try agent.send("GET", "/api/account").json["email"] as? String)
        let authenticator = try SoftwareAuthenticator()
        #expect(try agent.registerPasskey(authenticator).status == 201)
        let handle = try agent.userHandle()
        let refreshToken = try #require(tokens.refreshToken)

        let disabled = cli.run(["users", "disable"], [account])
        #expect(disabled.status == 0, "\(disabled.error)")
        #expect(disabled.output.contains("disabled account"))
        #expect(cli.run(["users", "disable"], [account]).output.contains("was already disabled"))

        #expect(try agent.send("GET", "/api/account").status == 401)
        let wrong = try TestAgent(app).signIn(email: TestAgent.uniqueEmail("nobody"), password: Self.password)
        let refused = try TestAgent(app).signIn(email: account, password: Self.password)
        #expect(refused.status == wrong.status)
        #expect(refused.text == wrong.text)
        let passkey = try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle)
        #expect(passkey.status == 400)
        #expect(passkey.error == "passkey_verification_failed")
        let refresh = try app.token([("grant_type", "refresh_token"), ("refresh_token", refreshToken)])
        #expect(refresh.status == 400)
        #expect(refresh.error == "invalid_grant")
        let userinfo = try app.userinfo(tokens.accessToken)
        #expect(userinfo.status == 401)
        #expect(userinfo.header("WWW-Authenticate")?.contains("invalid_token") == true)
        let id = try app.accountID(email: account)
        #expect(
            try app.count(
                "SELECT count(*) FROM authentication_sessions WHERE account_id = \(id) AND revoked_at IS NULL"
            ) == 0)
        #expect(
            try app.count(
                "SELECT count(*) FROM refresh_token_families WHERE account_id = \(id) AND revoked_at IS NULL")
                == 0)
        #expect(
            try app.count(
                "SELECT count(*) FROM audit_events WHERE event = 'sign_in.failed' AND detail->>'reason' = 'account_disabled'"
            ) == 2)
        #expect(try app.auditEvents("account.disabled", account: id) == 1)

        let enabled = cli.run(["users", "enable"], [id.uuidString])
        #expect(enabled.status == 0)
        #expect(enabled.output.contains("enabled account"))
        #expect(cli.run(["users", "enable"], [account]).output.contains("was not disabled"))
        #expect(try TestAgent(app).signIn(email: account, password: Self.password).status == 200)
        #expect(
            try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle, signCount: 5).status
                == 200)
        #expect(try app.auditEvents("account.enabled", account: id) == 1)
    }

    @Test func resetPasswordChecksThePolicyAndEndsSessions() throws {
        let app = try TestApplication()
        let cli = try OperatorCLI(app)
        let email = TestAgent.uniqueEmail("reset")
        let agent = TestAgent(app)
        #expect(try agent.signUp(email: email).status == 201)

        let weak = cli.run(["users", "reset-password"], [email], input: "short")
        #expect(weak.status == 1)
        #expect(weak.error.contains("password refused: Use at least 8 characters."))
        let set = cli.run(["users", "reset-password"], [email], input: "a brand new passphrase")
        #expect(set.status == 0, "\(set.error)")
        #expect(set.output.contains("1 session(s) ended"))
        #expect(try agent.send("GET", "/api/account").status == 401)
        #expect(try TestAgent(app).signIn(email: email, password: Self.password).status == 401)
        #expect(try TestAgent(app).signIn(email: email, password: "a brand new passphrase").status == 200)
        #expect(
            try app.count("SELECT count(*) FROM password_credentials WHERE password_hash LIKE '$argon2id$%'")
                == 1)

        let generated = cli.run(["users", "reset-password"], [email, "--generate"])
        #expect(generated.status == 0)
        let line = try #require(
            generated.output.split(separator: "\n").first { $0.hasPrefix("new password: ") })
        let password = String(line.dropFirst("new password: ".count))
        #expect(password.count >= 20)
        #expect(try TestAgent(app).signIn(email: email, password: password).status == 200)
        #expect(try app.auditEvents("password.reset", account: try app.accountID(email: email)) == 2)
        #expect(
            try app.count(
                "SELECT count(*) FROM audit_events WHERE event = 'password.reset' AND actor = 'admin'") == 2)
    }

    @Test func deleteLeavesNoRowThatNamesTheAccount() throws {
        let receiver = try LogoutReceiver(failures: 0)
        let app = try OAuthFixtures.app(backchannelURI: receiver.uri)
        let cli = try OperatorCLI(app)
        let (agent, tokens) = try app.signedInFlow()
        let email = try #require(try agent.send("GET", "/api/account").json["email"] as? String)
        let id = try app.accountID(email: email)
        #expect(try agent.registerPasskey(try SoftwareAuthenticator()).status == 201)
        _ = try agent.post("/api/passkeys/registration/start")
        #expect(
            try app.token([("grant_type", "refresh_token"), ("refresh_token", tokens.refreshToken ?? "")])
                .status == 200)
        // A second browser session that signed in to the client and ended: a delivery row.
        let other = TestAgent(app)
        #expect(try other.signIn(email: email, password: Self.password).status == 200)
        _ = try other.authorize(AuthorizationAttempt())
        #expect(try other.post("/api/signout").status == 204)
        _ = try TestAgent(app).signIn(email: email, password: "wrong password here")
        #expect(
            try app.count("SELECT count(*) FROM backchannel_logout_deliveries WHERE account_id = \(id)") >= 1)
        #expect(try app.count("SELECT count(*) FROM sign_in_failures WHERE subject = \(email)") == 1)
        // A recovery request, with the address verified so that a code is mailed and stored.
        try app.sql("UPDATE account_emails SET verified_at = now() WHERE account_id = \(id)")
        #expect(try TestAgent(app).post("/api/recovery/start", ["email": email]).status == 202)
        #expect(
            try app.count("SELECT count(*) FROM recovery_attempts WHERE subject = \(email.lowercased())") == 1
        )

        let refused = cli.run(["users", "delete"], [email])
        #expect(refused.status == 2)
        let deleted = cli.run(["users", "delete"], [email, "--yes"])
        #expect(deleted.status == 0, "\(deleted.error)")
        #expect(deleted.output.contains("deleted account \(id.uuidString.lowercased())"))
        // The live session's back-channel logout is the one row left naming the account, until
        // it is delivered.
        let deadline = Date().addingTimeInterval(20)
        while try app.count("SELECT count(*) FROM backchannel_logout_deliveries WHERE account_id = \(id)")
            > 0,
            Date() < deadline
        {
            Thread.sleep(forTimeInterval: 0.1)
        }

        // Every uuid column of every table, and every text column, for the id and the address.
        let columns = try app.sql(
            """
            SELECT table_name, column_name, data_type FROM information_schema.columns
            WHERE table_schema = 'public' AND table_name <> 'audit_events' AND table_name <> 'schema_migrations'
              AND data_type IN ('uuid', 'text')
            """)
        #expect(columns.count > 20)
        for column in columns {
            let table: String = try column.decode("table_name")
            let name: String = try column.decode("column_name")
            let type: String = try column.decode("data_type")
            let value = type == "uuid" ? id.uuidString.lowercased() : email.lowercased()
            let rows = try app.count(
                PostgresQuery(
                    stringLiteral: "SELECT count(*) FROM \(table) WHERE lower(\(name)::text) = '\(value)'"))
            #expect(rows == 0, "\(table).\(name)")
        }
        // Audit events stay, under one anonymous id and without the client address.
        #expect(try app.count("SELECT count(*) FROM audit_events WHERE account_id = \(id)") == 0)
        let anonymous = try app.sql(
            "SELECT account_id FROM audit_events WHERE event = 'account.deleted' AND actor = 'admin'")
        #expect(anonymous.count == 1)
        let anonymousID: UUID = try #require(anonymous.first).decode("account_id")
        #expect(try app.auditEvents("sign_in.succeeded", account: anonymousID) >= 1)
        #expect(
            try app.count(
                "SELECT count(*) FROM audit_events WHERE account_id = \(anonymousID) AND client_address <> ''"
            ) == 0)
        #expect(try app.userinfo(tokens.accessToken).status == 401)

        let again = cli.run(["users", "delete"], [id.uuidString, "--yes"])
        #expect(again.status == 1)
        #expect(again.error.contains("no account with id"))
    }
}
