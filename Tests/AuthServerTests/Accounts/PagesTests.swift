import Foundation
import Testing

@testable import AuthServer

@Suite("Pages served by the application")
struct PagesTests {
    @Test func signInPageHasTheAutofillAttributesAndHonoursLoginHint() throws {
        let app = try TestApplication()
        let page = try TestAgent(app).send(
            "GET", "/signin?login_hint=ada%40example.com&return_to=%2Fauthorize%3Fx%3D1")
        #expect(page.status == 200)
        #expect(page.text.contains("autocomplete=\"username webauthn\""))
        #expect(page.text.contains("autocomplete=\"current-password\""))
        #expect(page.text.contains("value=\"ada@example.com\""))
        #expect(page.text.contains("name=\"return_to\" value=\"/authorize?x=1\""))
        #expect(page.header("Cache-Control") == "no-store")
        #expect(page.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
        #expect(!page.text.contains("<script>"))
        #expect(!page.text.contains("style="))
    }

    @Test func languageFollowsUILocalesThenAcceptLanguage() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        #expect(try agent.send("GET", "/signin?ui_locales=ja%20en").text.contains("<html lang=\"ja\">"))
        let accept = try agent.send(
            "GET", "/signup", headers: [("Accept-Language", "ja-JP,ja;q=0.9,en;q=0.8")])
        #expect(accept.text.contains("<html lang=\"ja\">"))
        #expect(accept.text.contains("パスキーで登録"))
        #expect(
            try agent.send("GET", "/signin", headers: [("Accept-Language", "fr")]).text.contains(
                "<html lang=\"en\">"))
    }

    @Test func accountPageNeedsASessionAndEscapesNames() throws {
        let app = try TestApplication()
        #expect(try TestAgent(app).send("GET", "/account").status == 303)
        let agent = TestAgent(app)
        #expect(
            try agent.signUp(email: TestAgent.uniqueEmail(), name: "<script>alert(1)</script>").status == 201)
        let page = try agent.send("GET", "/account")
        #expect(page.status == 200)
        #expect(!page.text.contains("<script>alert(1)"))
        #expect(page.text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
    }

    @Test func staticAssetsAreServed() throws {
        let app = try TestApplication { $0.publicDirectory = Self.publicDirectory }
        for path in [
            "/static/js/signin.js", "/static/js/webauthn.js", "/static/css/app.css",
            "/static/img/passkey.svg",
        ] {
            #expect(try TestAgent(app).send("GET", path).status == 200, "\(path)")
        }
    }

    static var publicDirectory: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("public").path
    }
}
