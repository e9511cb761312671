import Foundation
import Testing

@testable import AuthServer

@Suite("auth-server users roles|groups add, remove, list")
struct AccountAttributesCommandTests {
    @Test func rolesAreAddedListedShownAndRemovedWithAuditEvents() throws {
        let app = try TestApplication()
        let cli = try OperatorCLI(app)
        let email = TestAgent.uniqueEmail("ops")
        #expect(try TestAgent(app).signUp(email: email).status == 201)
        let id = try app.accountID(email: email)
        let idText = id.uuidString.lowercased()

        let added = cli.run(["users", "roles", "add"], [email, "admin"])
        #expect(added.status == 0, "\(added.error)")
        #expect(added.output == "added role admin to account \(idText)")
        #expect(cli.run(["users", "roles", "add"], [id.uuidString, "billing:read"]).status == 0)
        let again = cli.run(["users", "roles", "add"], [email, "admin"])
        #expect(again.status == 0)
        #expect(again.output == "account \(idText) already has role admin")
        #expect(cli.run(["users", "groups", "add"], [email, "staff/tokyo"]).status == 0)

        let list = cli.run(["users", "roles", "list"], [email])
        #expect(list.status == 0)
        #expect(list.output == "admin\nbilling:read")
        let json = cli.run(["users", "groups", "list"], [email, "--json"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(object["groups"] as? [String] == ["staff/tokyo"])
        #expect(object["account"] as? String == idText)
        #expect(
            try AccountStore.attributes(accountID: id, on: app.database.pool).roles == [
                "admin", "billing:read",
            ])

        let show = cli.run(["users", "show"], [email])
        #expect(show.output.contains("roles     admin, billing:read"))
        #expect(show.output.contains("groups    staff/tokyo"))
        #expect(show.output.contains("account.role_added"))
        let showJSON = try #require(
            try JSONSerialization.jsonObject(
                with: Data(cli.run(["users", "show"], [email, "--json"]).output.utf8))
                as? [String: Any])
        #expect(showJSON["roles"] as? [String] == ["admin", "billing:read"])
        #expect(showJSON["groups"] as? [String] == ["staff/tokyo"])

        let removed = cli.run(["users", "roles", "remove"], [email, "admin"])
        #expect(removed.status == 0)
        #expect(removed.output == "removed role admin from account \(idText)")
        let absent = cli.run(["users", "roles", "remove"], [email, "admin"])
        #expect(absent.status == 0)
        #expect(absent.output == "account \(idText) has no role admin")
        #expect(cli.run(["users", "roles", "list"], [email]).output == "billing:read")

        // One event per change that happened (not for the no-op add and remove), by the operator.
        #expect(try app.auditEvents("account.role_added", account: id) == 2)
        #expect(try app.auditEvents("account.role_removed", account: id) == 1)
        #expect(try app.auditEvents("account.group_added", account: id) == 1)
        #expect(
            try app.count(
                "SELECT count(*) FROM audit_events WHERE event LIKE 'account.%_added' AND actor = 'admin' AND detail->>'name' IS NOT NULL"
            ) == 3)
    }

    @Test func invalidNamesAndUsageErrorsExit2AndWriteNothing() throws {
        let app = try TestApplication()
        let cli = try OperatorCLI(app)
        let email = TestAgent.uniqueEmail("ops")
        #expect(try TestAgent(app).signUp(email: email).status == 201)
        for name in [
            "", "_admin", "admin role", "admin\n", "ad'min;DROP", String(repeating: "a", count: 101), "管理者",
        ] {
            let refused = cli.run(["users", "roles", "add"], [email, name])
            #expect(refused.status == 2, "\(name)")
            #expect(refused.error.contains("is not a valid role name"), "\(name): \(refused.error)")
        }
        #expect(
            cli.run(["users", "groups", "add"], [email, ".hidden"]).error.contains("not a valid group name"))
        #expect(try app.count("SELECT count(*) FROM account_attributes") == 0)
        #expect(try app.count("SELECT count(*) FROM audit_events WHERE event LIKE 'account.role%'") == 0)

        let noName = cli.run(["users", "roles", "add"], [email])
        #expect(noName.status == 2)
        #expect(noName.error.contains("ID|EMAIL and ROLE are required"))
        let extra = cli.run(["users", "roles", "list"], [email, "admin"])
        #expect(extra.status == 2)
        let unknownAction = OperatorCLI.run([
            "users", "roles", "grant", "--config", cli.configPath, email, "a",
        ])
        #expect(unknownAction.status == 2)
        #expect(unknownAction.error.contains("unknown action \"grant\""))
        #expect(OperatorCLI.run(["users", "groups"]).status == 2)
        let noConfig = OperatorCLI.run(["users", "roles", "add", email, "admin"])
        #expect(noConfig.status == 2)
        #expect(noConfig.error.contains("--config FILE is required"))

        let nobody = cli.run(["users", "roles", "add"], ["nobody@example.com", "admin"])
        #expect(nobody.status == 1)
        #expect(nobody.error.contains("no account with email nobody@example.com"))
        #expect(cli.run(["users", "roles", "list"], [UUID().uuidString]).status == 1)
    }

    @Test func helpDescribesTheCommands() throws {
        let help = try Executable.run(["users", "roles", "--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("users roles add --config FILE ID|EMAIL ROLE"))
        #expect(help.output.contains("users roles list --config FILE ID|EMAIL [--json]"))
        let top = try Executable.run(["--help"])
        #expect(top.output.contains("users roles add|remove|list --config FILE ID|EMAIL [NAME]"))
        #expect(top.output.contains("users groups add|remove|list --config FILE ID|EMAIL [NAME]"))
        let users = try Executable.run(["users", "--help"])
        #expect(users.output.contains("users groups remove --config FILE ID|EMAIL GROUP"))
    }
}
