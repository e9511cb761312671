import Foundation
import Testing
@testable import OIDC

@Suite struct AuthorizationInteractionTests {
    static let items: [(name: String, value: String)] = [
        (name: "client_id", value: "native-app"), (name: "scope", value: "openid profile"),
    ]
    static let returnTo = AuthorizationInteraction.resumeURL(items: items, resume: "r-1")

    static func request(_ overrides: [String: String?] = [:]) throws -> AuthorizationRequest {
        try Fixture.validate(Fixture.authorize(Fixture.native, overrides))
    }

    @Test func resumeURLKeepsTheRequestAndAddsResume() {
        #expect(Self.returnTo == "/authorize?client_id=native-app&scope=openid%20profile&resume=r-1")
    }

    @Test func loginGoesToSignInOrSignUp() throws {
        let request = try Self.request()
        let encoded = FormEncoding.encode(Self.returnTo)
        #expect(
            AuthorizationInteraction.login(
                .noSession, request: request, signedIn: false, returnTo: Self.returnTo)
                == "/signin?return_to=\(encoded)")
        #expect(
            AuthorizationInteraction.login(
                .promptCreate, request: request, signedIn: false, returnTo: Self.returnTo)
                == "/signup?return_to=\(encoded)")
        // Someone is signed in: the page must ask again rather than continue as them.
        #expect(
            AuthorizationInteraction.login(
                .maxAgeExceeded, request: request, signedIn: true, returnTo: Self.returnTo)
                == "/signin?return_to=\(encoded)&prompt=login")
    }

    @Test func loginCarriesTheHintAndLocales() throws {
        let request = try Self.request(["login_hint": "a@example.com", "ui_locales": "ja en"])
        #expect(
            AuthorizationInteraction.login(.promptLogin, request: request, signedIn: true, returnTo: "/x")
                == "/signin?return_to=%2Fx&prompt=login&login_hint=a%40example.com&ui_locales=ja%20en")
    }

    @Test func accountChoiceAndSwitchSignInAgain() {
        #expect(
            AuthorizationInteraction.selectAccount(returnTo: "/x") == "/signin?return_to=%2Fx&prompt=login")
        #expect(
            AuthorizationInteraction.switchAccount(returnTo: "/x") == "/signin?prompt=login&return_to=%2Fx")
    }

    @Test func consentCoversOnlyEveryRequestedScope() {
        #expect(
            SessionContext.consentCovers(["openid", "profile"], consented: ["profile", "openid", "email"]))
        #expect(!SessionContext.consentCovers(["openid", "email"], consented: ["openid"]))
        #expect(!SessionContext.consentCovers(["openid"], consented: nil))
        #expect(SessionContext.consentCovers([], consented: []))
    }

    @Test func formPostOrigin() {
        #expect(
            AuthorizationResponse.origin(of: "https://app.example.com/cb?x=1") == "https://app.example.com")
        #expect(AuthorizationResponse.origin(of: "http://127.0.0.1:8080/cb") == "http://127.0.0.1:8080")
        #expect(AuthorizationResponse.origin(of: "http://[::1]:8080/cb") == "http://[::1]:8080")
        #expect(AuthorizationResponse.origin(of: "com.example.app:/oauth2redirect") == "'none'")
        #expect(
            AuthorizationResponse.formPostPolicy(action: "https://app.example.com/cb")
                == "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action https://app.example.com; frame-ancestors 'none'; base-uri 'none'"
        )
    }
}
