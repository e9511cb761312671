import Foundation
import Testing

@testable import AuthServer
@testable import WebAuthnTestSupport

@Suite("Passwordless policy")
struct PasswordlessPolicyTests {
    @Test func passwordSignUpCanBeSwitchedOff() throws {
        let app = try TestApplication { $0.passwordless.passwordSignUp = false }
        let agent = TestAgent(app)
        let api = try agent.signUp(email: TestAgent.uniqueEmail())
        #expect(api.status == 403)
        #expect(api.error == "password_sign_up_disabled")
        let page = try agent.send("GET", "/signup")
        #expect(page.text.contains("id=\"passkey-signup\""))
        #expect(!page.text.contains("id=\"password-signup\""))
        #expect(!page.text.contains("autocomplete=\"new-password\""))
        let form = try agent.postForm(
            "/signup",
            [("email", TestAgent.uniqueEmail()), ("display_name", "Ada"), ("password", "a long passphrase")])
        #expect(form.status == 403)
        #expect(form.text.contains("New accounts are created with a passkey."))
        #expect(try app.sql("SELECT count(*) AS n FROM accounts").first?.decode("n", as: Int.self) == 0)

        let open = try TestApplication()
        #expect(try TestAgent(open).send("GET", "/signup").text.contains("id=\"password-signup\""))
    }

    @Test func passkeyAccountsCanBeRefusedTheirPassword() throws {
        let app = try TestApplication { $0.passwordless.passwordSignInForPasskeyAccounts = false }
        let email = TestAgent.uniqueEmail()
        let owner = TestAgent(app)
        #expect(try owner.signUp(email: email, password: "a long passphrase").status == 201)
        // Without a passkey the password still works.
        #expect(try TestAgent(app).signIn(email: email, password: "a long passphrase").status == 200)
        #expect(try owner.registerPasskey(try SoftwareAuthenticator()).status == 201)

        let wrong = try TestAgent(app).signIn(email: email, password: "not the passphrase")
        #expect(wrong.status == 401)
        #expect(wrong.error == "invalid_credentials")
        let right = try TestAgent(app).signIn(email: email, password: "a long passphrase")
        #expect(right.status == 403)
        #expect(right.error == "passkey_required")
        #expect(right.setCookies.allSatisfy { !$0.hasPrefix("session=") })

        let page = try TestAgent(app).postForm(
            "/signin", [("email", email), ("password", "a long passphrase")])
        #expect(page.status == 403)
        #expect(page.text.contains("This account has a passkey. Sign in with your passkey."))
        let wrongPage = try TestAgent(app).postForm(
            "/signin", [("email", email), ("password", "nope nope nope")])
        #expect(wrongPage.status == 401)
    }

    @Test func theConditionalUpgradeCanBeSwitchedOff() throws {
        for enabled in [true, false] {
            let app = try TestApplication {
                $0.passwordless.conditionalUpgrade = enabled
                $0.passwordless.passkeyPromptAfterPasswordSignIns = 0
            }
            let email = TestAgent.uniqueEmail()
            try TestAgent(app).signUp(email: email, password: "a long passphrase")
            let reply = try TestAgent(app).signIn(email: email, password: "a long passphrase")
            #expect(reply.status == 200)
            #expect((reply.json["passkey_upgrade"] != nil) == enabled)
        }
    }

    @Test func thePromptFollowsEveryNthPasswordSignInOfAnAccountWithoutPasskey() throws {
        let app = try TestApplication()  // default: every 3rd
        let email = TestAgent.uniqueEmail()
        try TestAgent(app).signUp(email: email, password: "a long passphrase")
        var destinations: [String] = []
        for _ in 0..<4 {
            let reply = try TestAgent(app).post(
                "/api/signin/password",
                ["email": email, "password": "a long passphrase", "return_to": "/authorize?a=1"])
            destinations.append(reply.json["redirect_to"] as? String ?? "")
            if (reply.json["redirect_to"] as? String ?? "").hasPrefix("/passkey-prompt") {
                #expect(reply.json["passkey_upgrade"] == nil)
            }
        }
        #expect(
            destinations == [
                "/authorize?a=1", "/authorize?a=1", "/passkey-prompt?return_to=%2Fauthorize%3Fa%3D1",
                "/authorize?a=1",
            ])
        #expect(
            try app.sql("SELECT password_sign_ins FROM accounts").first?.decode(
                "password_sign_ins", as: Int.self) == 4)

        // The form post goes the same way, and the prompt page offers "Not now".
        let agent = TestAgent(app)
        _ = try agent.postForm("/signin", [("email", email), ("password", "a long passphrase")])
        let sixth = try agent.postForm("/signin", [("email", email), ("password", "a long passphrase")])
        #expect(sixth.status == 303)
        #expect(sixth.header("Location") == "/passkey-prompt?return_to=%2Faccount")
        let prompt = try agent.send("GET", "/passkey-prompt?return_to=%2Faccount")
        #expect(prompt.status == 200)
        #expect(prompt.text.contains("id=\"prompt-create\""))
        #expect(
            prompt.text.contains("href=\"/account\" id=\"prompt-skip\"")
                || prompt.text.contains("id=\"prompt-skip\""))
        #expect(prompt.text.contains("Not now"))
        #expect(try TestAgent(app).send("GET", "/passkey-prompt").header("Location") == "/signin")
    }

    @Test func noPromptWhenSwitchedOffOrWhenThePasskeyExists() throws {
        let never = try TestApplication { $0.passwordless.passkeyPromptAfterPasswordSignIns = 0 }
        let email = TestAgent.uniqueEmail()
        try TestAgent(never).signUp(email: email, password: "a long passphrase")
        for _ in 0..<4 {
            let reply = try TestAgent(never).signIn(email: email, password: "a long passphrase")
            #expect(reply.json["redirect_to"] as? String == "/account")
        }

        let app = try TestApplication { $0.passwordless.passkeyPromptAfterPasswordSignIns = 1 }
        let owner = TestAgent(app)
        let other = TestAgent.uniqueEmail()
        try owner.signUp(email: other, password: "a long passphrase")
        #expect(
            try TestAgent(app).signIn(email: other, password: "a long passphrase").json["redirect_to"]
                as? String
                == "/passkey-prompt?return_to=%2Faccount")
        #expect(try owner.registerPasskey(try SoftwareAuthenticator()).status == 201)
        #expect(
            try TestAgent(app).signIn(email: other, password: "a long passphrase").json["redirect_to"]
                as? String
                == "/account")
    }
}
