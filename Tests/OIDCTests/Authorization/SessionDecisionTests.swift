import Foundation
import Testing
@testable import OIDC

struct SessionCase: CustomTestStringConvertible, Sendable {
    let name: String
    var prompt: String? = nil
    var maxAge: String? = nil
    /// Seconds before `now` of the last authentication; nil = no session.
    var authAge: Double? = 60
    /// Whether that authentication happened after the request arrived.
    var authenticatedDuringRequest = false
    var hasConsent = true
    var firstParty = false
    var accountSelected = false
    var consentGiven = false
    var selectionNeeded = false
    var interactionNeeded = false
    let expected: SessionDecision
    var testDescription: String { name }
}

@Suite struct SessionDecisionTests {
    static let now = Fixture.now
    static func session(age: Double) -> BrowserSession {
        BrowserSession(
            accountID: "acct-1", authTime: now.addingTimeInterval(-age), amr: ["pwd"], sessionID: "sid-1")
    }
    static func error(_ code: OAuthErrorCode, _ hint: String) -> SessionDecision {
        .error(OAuthError(code, hint: hint))
    }

    static let cases: [SessionCase] = [
        .init(name: "signed in, consented", expected: .proceed(session(age: 60))),
        .init(name: "no session", authAge: nil, expected: .login(.noSession)),
        .init(
            name: "no session, prompt=none", prompt: "none", authAge: nil,
            expected: error(.loginRequired, "No user is signed in.")),
        .init(
            name: "no session, prompt=create", prompt: "create", authAge: nil, expected: .login(.promptCreate)
        ),
        .init(name: "prompt=create with old session", prompt: "create", expected: .login(.promptCreate)),
        .init(name: "prompt=login with old session", prompt: "login", expected: .login(.promptLogin)),
        .init(
            name: "prompt=login satisfied by a new sign-in", prompt: "login", authAge: 5,
            authenticatedDuringRequest: true,
            expected: .proceed(session(age: 5))),
        .init(name: "max_age not exceeded", maxAge: "60", expected: .proceed(session(age: 60))),
        .init(name: "max_age exceeded", maxAge: "59", expected: .login(.maxAgeExceeded)),
        .init(
            name: "max_age exceeded, prompt=none", prompt: "none", maxAge: "59",
            expected: error(.loginRequired, "The last sign-in is older than 'max_age' allows.")),
        .init(name: "max_age=0 forces sign-in", maxAge: "0", authAge: 1, expected: .login(.maxAgeExceeded)),
        .init(
            name: "max_age satisfied by a new sign-in even if slow", maxAge: "0", authAge: 30,
            authenticatedDuringRequest: true, expected: .proceed(session(age: 30))),
        .init(name: "prompt=none, all satisfied", prompt: "none", expected: .proceed(session(age: 60))),
        .init(name: "no consent", hasConsent: false, expected: .consent),
        .init(
            name: "no consent, prompt=none", prompt: "none", hasConsent: false,
            expected: error(.consentRequired, "The user has not approved this client's requested scopes.")),
        .init(
            name: "no consent, first party", hasConsent: false, firstParty: true,
            expected: .proceed(session(age: 60))),
        .init(name: "prompt=consent forces consent", prompt: "consent", expected: .consent),
        .init(
            name: "prompt=consent, first party too", prompt: "consent", firstParty: true, expected: .consent),
        .init(
            name: "prompt=consent given", prompt: "consent", consentGiven: true,
            expected: .proceed(session(age: 60))),
        .init(name: "prompt=select_account", prompt: "select_account", expected: .selectAccount),
        .init(
            name: "prompt=select_account chosen", prompt: "select_account", accountSelected: true,
            expected: .proceed(session(age: 60))),
        .init(
            name: "several accounts, prompt=none", prompt: "none", selectionNeeded: true,
            expected: error(.accountSelectionRequired, "The user must choose one of several accounts.")),
        .init(name: "several accounts", selectionNeeded: true, expected: .selectAccount),
        .init(
            name: "account interaction, prompt=none", prompt: "none", interactionNeeded: true,
            expected: error(.interactionRequired, "The account must complete a step on the sign-in page.")),
        .init(name: "account interaction", interactionNeeded: true, expected: .login(.promptLogin)),
        .init(
            name: "login before consent", prompt: "login consent", hasConsent: false,
            expected: .login(.promptLogin)),
    ]

    @Test(arguments: cases)
    func decide(_ row: SessionCase) throws {
        var client = Fixture.native
        client.firstParty = row.firstParty
        let request = try AuthorizationRequest.validate(
            Fixture.authorize(client, ["prompt": row.prompt, "max_age": row.maxAge]), client: client,
            issuer: Fixture.issuer)
        let receivedAt = Self.now.addingTimeInterval(
            row.authenticatedDuringRequest ? -(row.authAge ?? 0) - 10 : -1)
        let context = SessionContext(
            session: row.authAge.map { Self.session(age: $0) }, hasConsent: row.hasConsent,
            requestReceivedAt: receivedAt,
            now: Self.now, accountSelected: row.accountSelected, consentGivenInThisRequest: row.consentGiven,
            accountSelectionNeeded: row.selectionNeeded, accountInteractionNeeded: row.interactionNeeded)
        let decision = SessionDecision.decide(for: request, context: context)
        #expect(decision == row.expected)
        if case .error(let error) = decision {
            #expect(error.redirectable)
            #expect(error.errorDescription == error.code.fixedDescription + " " + error.hint)
        }
    }

    @Test func authTimeMustBeLaterThanTheRequest() throws {
        let request = try Fixture.validate(Fixture.authorize(Fixture.native, ["prompt": "login"]))
        let session = Self.session(age: 10)
        // Authenticated in the same second the request arrived: not a new authentication.
        let same = SessionContext(
            session: session, hasConsent: true, requestReceivedAt: session.authTime, now: Self.now)
        #expect(SessionDecision.decide(for: request, context: same) == .login(.promptLogin))
        let later = SessionContext(
            session: session, hasConsent: true, requestReceivedAt: session.authTime.addingTimeInterval(-1),
            now: Self.now)
        #expect(SessionDecision.decide(for: request, context: later) == .proceed(session))
    }
}
