import Foundation
import Testing
@testable import OIDC

@Suite struct LogoutStepTests {
    static let bye = "https://app.example.com/bye"

    /// A decision as `LogoutRequest.validate` makes it: `hint` means a valid `id_token_hint`
    /// named the client, `client` that `client_id` alone did.
    static func decision(
        confirm: Bool = false, redirect: String? = bye, hint: Bool = true, client: Bool = true
    )
        -> LogoutDecision
    {
        LogoutDecision(
            requiresConfirmation: confirm, postLogoutRedirect: redirect, client: client ? Fixture.web : nil,
            hintSubject: hint ? "acct-1" : nil, hintSessionID: nil, uiLocales: [])
    }

    @Test func nobodySignedIn() {
        #expect(Self.decision().step(signedIn: false, confirmation: nil) == .nothingToEnd(redirect: Self.bye))
        // `client_id` alone may name where to go when there is nothing to end.
        #expect(
            Self.decision(hint: false).step(signedIn: false, confirmation: nil)
                == .nothingToEnd(redirect: Self.bye))
        #expect(
            Self.decision(hint: false, client: false).step(signedIn: false, confirmation: nil)
                == .nothingToEnd(redirect: nil))
    }

    @Test func askFirstWhenTheRequestCannotBeTrusted() {
        #expect(Self.decision(confirm: true, hint: false).step(signedIn: true, confirmation: nil) == .confirm)
    }

    @Test func declinedStaysSignedInAndRedirectsOnlyForAHint() {
        #expect(
            Self.decision(confirm: true).step(signedIn: true, confirmation: false)
                == .declined(redirect: Self.bye))
        #expect(
            Self.decision(confirm: true, hint: false).step(signedIn: true, confirmation: false)
                == .declined(redirect: nil))
    }

    @Test func endRedirectsOnlyForAHint() {
        #expect(Self.decision().step(signedIn: true, confirmation: nil) == .end(redirect: Self.bye))
        #expect(
            Self.decision(confirm: true).step(signedIn: true, confirmation: true) == .end(redirect: Self.bye))
        #expect(
            Self.decision(confirm: true, hint: false).step(signedIn: true, confirmation: true)
                == .end(redirect: nil))
    }
}
