import Foundation
import Testing

@testable import AuthServer
@testable import WebAuthnTestSupport

@Suite("Security notifications: passkey and password changes")
struct SecurityNotificationTests {
    static func notices(_ app: TestApplication, to email: String) -> [OutgoingMail] {
        app.mailbox.received(to: email).filter { !$0.text.contains("/verify-email?") }
    }

    @Test func eachChangeSendsOneNotice() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        let (agent, handle) = try PasskeyFlowTests.signedIn(app, email: email)
        #expect(Self.notices(app, to: email).isEmpty)

        let authenticator = try SoftwareAuthenticator()
        let second = try SoftwareAuthenticator()
        let id = try #require(try agent.registerPasskey(authenticator).json["id"] as? String)
        var notices = Self.notices(app, to: email)
        #expect(notices.count == 1)
        #expect(notices.last?.subject.contains("A passkey was added") == true)
        #expect(notices.last?.text.contains("\(app.configuration.issuer)/account") == true)
        #expect(notices.last?.text.contains("If this was not you") == true)

        #expect(try agent.registerPasskey(second).status == 201)
        #expect(try agent.send("DELETE", "/api/passkeys/\(id)").status == 200)
        notices = Self.notices(app, to: email)
        #expect(notices.count == 3)
        #expect(notices.last?.subject.contains("A passkey was removed") == true)

        #expect(
            try agent.post(
                "/api/password",
                ["current_password": "a long passphrase", "new_password": "another long passphrase"]
            ).status == 204)
        notices = Self.notices(app, to: email)
        #expect(notices.count == 4)
        #expect(notices.last?.subject.contains("Your password was changed") == true)

        #expect(try TestAgent(app).signInWithPasskey(second, userHandle: handle).status == 200)
        #expect(try agent.send("DELETE", "/api/password").status == 204)
        notices = Self.notices(app, to: email)
        #expect(notices.count == 5)
        #expect(notices.last?.subject.contains("Your password was removed") == true)
        #expect(notices.allSatisfy { $0.html.contains("<a href=\"\(app.configuration.issuer)/account\">") })
    }

    @Test func aFailedChangeSendsNothing() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        let (agent, _) = try PasskeyFlowTests.signedIn(app, email: email)
        let wrong = try agent.post(
            "/api/password",
            ["current_password": "not the password", "new_password": "another long passphrase"])
        #expect(wrong.status == 403)
        #expect(Self.notices(app, to: email).isEmpty)
    }

    @Test func noticesAreEscapedAndInTheRequestLanguage() throws {
        let content = MailTemplates.securityNotice(
            .passkeyAdded(name: "<script>x</script>"), at: Date(timeIntervalSince1970: 0),
            accountURL: "https://id.example.com/account", siteName: "Example & Co", language: .ja)
        #expect(content.subject == "Example & Co: アカウントにパスキーが追加されました")
        #expect(content.text.contains("1970年1月1日 00:00 (UTC)"))
        #expect(content.html.contains("&lt;script&gt;x&lt;/script&gt;"))
        #expect(!content.html.contains("<script>"))
        #expect(content.html.contains("Example &amp; Co"))
    }

    /// The attack: a passkey name whose `<` and `>` each follow a Unicode "prepend" character
    /// (U+0600), which joins them into one grapheme with it. Escaping grapheme by grapheme let
    /// them through, and the notice mailed to the account's address carried the attacker's link.
    @Test func aPrependCharacterDoesNotSmuggleMarkupIntoANotice() throws {
        let name = "\u{0600}<a href=https://evil.example/ \u{0600}>Secure your account\u{0600}</a\u{0600}>\u{0600}\"\u{0600}&"
        let content = MailTemplates.securityNotice(
            .passkeyAdded(name: name), at: Date(timeIntervalSince1970: 0),
            accountURL: "https://id.example.com/account", siteName: "Example", language: .en)
        #expect(!content.html.contains("<a href=https://evil.example/"))
        #expect(!content.html.contains("</a\u{0600}>"))
        #expect(content.html.contains("\u{0600}&lt;a href=https://evil.example/ \u{0600}&gt;"))
        #expect(content.html.contains("\u{0600}&quot;\u{0600}&amp;"))
    }
}
