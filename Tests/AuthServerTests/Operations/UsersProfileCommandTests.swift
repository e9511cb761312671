import Foundation
import Testing

@testable import AuthServer

@Suite("auth-server users profile")
struct UsersProfileCommandTests {
    @Test func theOperatorFillsTheProfileThatAppsThenReceive() throws {
        let app = try OAuthFixtures.app()
        let cli = try OperatorCLI(app)
        let (agent, tokens) = try app.signedInFlow()
        let email = try #require(try agent.send("GET", "/api/account").json["email"] as? String)
        let id = try app.accountID(email: email)
        try app.sql("UPDATE accounts SET profile_updated_at = profile_updated_at - interval '1 day'")

        let shown = cli.run(["users", "profile"], [email])
        #expect(shown.status == 0, "\(shown.error)")
        #expect(shown.output.contains("name                Test User"))
        #expect(shown.output.contains("given_name          -"))

        let changed = cli.run(
            ["users", "profile"],
            [
                email, "--given-name", "Grace", "--family-name", "Hopper", "--locale", "en-us", "--picture",
                "https://example.com/grace.png", "--name", "Grace Hopper",
            ])
        #expect(changed.status == 0, "\(changed.error)")
        #expect(changed.output.contains("given_name          Grace"))
        #expect(changed.output.contains("locale              en-US"))
        #expect(changed.output.contains("preferred_username  -"))

        let info = try app.userinfo(tokens.accessToken).json
        #expect(info["name"] as? String == "Grace Hopper")
        #expect(info["family_name"] as? String == "Hopper")
        #expect(info["picture"] as? String == "https://example.com/grace.png")
        #expect(try #require(info["updated_at"] as? Int) >= Int(Date().timeIntervalSince1970) - 60)
        #expect(
            try app.count(
                "SELECT count(*) FROM audit_events WHERE event = 'account.profile_updated' AND actor = 'admin' AND detail->>'fields' = 'name,given_name,family_name,locale,picture'"
            ) == 1)

        // An empty value removes; the same values again change nothing and record nothing.
        let json = cli.run(
            ["users", "profile"], [id.uuidString, "--picture", "", "--family-name", "Hopper", "--json"])
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        #expect(object["picture"] is NSNull)
        #expect(object["family_name"] as? String == "Hopper")
        #expect(try app.auditEvents("account.profile_updated", account: id) == 2)
        #expect(cli.run(["users", "profile"], [email, "--family-name", "Hopper"]).status == 0)
        #expect(try app.auditEvents("account.profile_updated", account: id) == 2)
        #expect(try app.userinfo(tokens.accessToken).json.keys.contains("picture") == false)
    }

    @Test func badValuesExit2AndWriteNothing() throws {
        let app = try TestApplication()
        let cli = try OperatorCLI(app)
        let email = TestAgent.uniqueEmail("ops")
        #expect(try TestAgent(app).signUp(email: email).status == 201)
        for (option, value) in [
            ("--locale", "ja_JP"), ("--picture", "http://example.com/a.png"), ("--name", ""),
            ("--given-name", "line\nbreak"), ("--preferred-username", String(repeating: "u", count: 65)),
        ] {
            let refused = cli.run(["users", "profile"], [email, "--given-name", "Kept", option, value])
            #expect(refused.status == 2, "\(option)")
            #expect(refused.error.contains("users profile: \(option): enter"), "\(refused.error)")
        }
        #expect(try app.count("SELECT count(*) FROM accounts WHERE given_name IS NOT NULL") == 0)
        #expect(try app.auditEvents("account.profile_updated") == 0)
        let nobody = cli.run(["users", "profile"], ["nobody@example.com", "--given-name", "X"])
        #expect(nobody.status == 1)
        #expect(cli.run(["users", "profile"], []).status == 2)
        #expect(cli.run(["users", "profile"], [email, "--nickname", "x"]).status == 2)
    }
}
