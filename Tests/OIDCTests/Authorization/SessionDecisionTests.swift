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
            name: "other accounts signed in, none current", authAge: nil, selectionNeeded: true,
            expected: .selectAccount),
        .init(
            name: "other accounts signed in, none current, prompt=none", prompt: "none", authAge: nil,
            selectionNeeded: true,
            expected: error(.accountSelectionRequired, "The user must choose one of several accounts.")),
        .init(
            name: "other accounts signed in, none current, prompt=create", prompt: "create", authAge: nil,
            selectionNeeded: true, expected: .login(.promptCreate)),
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

/// `acr` step-up and the user a request names (`id_token_hint`, `sub` claim value).
@Suite struct SessionDecisionAuthenticationClassTests {
    static let now = Fixture.now
    static let password = ["pwd"]
    static let syncedPasskey = ["swk", "user", "mfa"]
    static let devicePasskey = ["hwk", "user", "mfa"]

    /// Decides for `overrides` with a session of `amr` (nil: none), authenticated 60 s ago,
    /// during the request or before it.
    static func decide(
        _ overrides: [String: String?], amr: [String]?, duringRequest: Bool = false,
        account: String = "acct-1",
        hintSubject: String? = nil, others: Set<String> = [], selected: Bool = false
    ) throws -> SessionDecision {
        var request = try Fixture.validate(Fixture.authorize(Fixture.native, overrides))
        request.idTokenHintSubject = hintSubject
        let session = amr.map {
            BrowserSession(
                accountID: account, authTime: now.addingTimeInterval(-60), amr: $0, sessionID: "sid-1")
        }
        let receivedAt = now.addingTimeInterval(duringRequest ? -120 : -1)
        var context = SessionContext(
            session: session, hasConsent: true, requestReceivedAt: receivedAt, now: now,
            accountSelected: selected)
        context.otherSignedInSubjects = others
        return SessionDecision.decide(for: request, context: context)
    }

    static func session(_ amr: [String], account: String = "acct-1") -> BrowserSession {
        BrowserSession(
            accountID: account, authTime: now.addingTimeInterval(-60), amr: amr, sessionID: "sid-1")
    }

    static let unmet = SessionDecision.error(
        OAuthError(
            .unmetAuthenticationRequirements,
            hint: "The sign-in does not reach the requested authentication context class."))
    static let essentialPHR = #"{"id_token":{"acr":{"essential":true,"values":["phr"]}}}"#

    @Test func voluntaryAcrAsksForAPasskeyThenProceedsWithWhatWasReached() throws {
        #expect(try Self.decide(["acr_values": "phr"], amr: Self.password) == .login(.stepUp))
        #expect(try Self.decide(["acr_values": "phr"], amr: nil) == .login(.stepUp))
        // The user signed in during the request but still with a password: proceed.
        #expect(
            try Self.decide(["acr_values": "phr"], amr: Self.password, duringRequest: true)
                == .proceed(Self.session(Self.password)))
        #expect(
            try Self.decide(["acr_values": "phr"], amr: Self.syncedPasskey)
                == .proceed(Self.session(Self.syncedPasskey)))
        #expect(
            try Self.decide(["acr_values": "phrh"], amr: Self.syncedPasskey) == .login(.stepUp))
        #expect(
            try Self.decide(["acr_values": "phrh phr"], amr: Self.syncedPasskey)
                == .proceed(Self.session(Self.syncedPasskey)))
        // Unknown values are ignored.
        #expect(
            try Self.decide(["acr_values": "1 2"], amr: Self.password)
                == .proceed(Self.session(Self.password)))
    }

    @Test func voluntaryAcrUnderPromptNoneProceeds() throws {
        #expect(
            try Self.decide(["acr_values": "phrh", "prompt": "none"], amr: Self.password)
                == .proceed(Self.session(Self.password)))
    }

    @Test func essentialAcrIsRefusedWhenStillUnmet() throws {
        #expect(try Self.decide(["claims": Self.essentialPHR], amr: Self.password) == .login(.stepUp))
        #expect(
            try Self.decide(["claims": Self.essentialPHR], amr: Self.password, duringRequest: true)
                == Self.unmet)
        #expect(
            try Self.decide(["claims": Self.essentialPHR, "prompt": "none"], amr: Self.password) == Self.unmet
        )
        #expect(
            try Self.decide(["claims": Self.essentialPHR, "prompt": "none"], amr: Self.devicePasskey)
                == .proceed(Self.session(Self.devicePasskey)))
        // Only unknown values, essential: cannot be met, no passkey would help.
        let unknown = #"{"id_token":{"acr":{"essential":true,"values":["urn:example:gold"]}}}"#
        #expect(try Self.decide(["claims": unknown], amr: Self.devicePasskey) == Self.unmet)
    }

    @Test func essentialAcrWithoutSessionUnderPromptNoneIsLoginRequired() throws {
        #expect(
            try Self.decide(["claims": Self.essentialPHR, "prompt": "none"], amr: nil)
                == .error(OAuthError(.loginRequired, hint: "No user is signed in.")))
    }

    static let otherUser = "The signed-in user is not the one the request names."

    @Test func hintForAnotherUser() throws {
        #expect(
            try Self.decide(["prompt": "none"], amr: Self.password, hintSubject: "acct-2")
                == .error(OAuthError(.loginRequired, hint: Self.otherUser)))
        #expect(try Self.decide([:], amr: Self.password, hintSubject: "acct-2") == .login(.otherSubject))
        // Signed in again during the request, still as someone else: never an answer for them.
        #expect(
            try Self.decide([:], amr: Self.password, duringRequest: true, hintSubject: "acct-2")
                == .error(OAuthError(.loginRequired, hint: Self.otherUser)))
        #expect(
            try Self.decide(["prompt": "none"], amr: Self.password, hintSubject: "acct-1")
                == .proceed(Self.session(Self.password)))
        #expect(
            try Self.decide(["prompt": "none"], amr: nil, hintSubject: "acct-1")
                == .error(OAuthError(.loginRequired, hint: "No user is signed in.")))
    }

    /// The named user is signed in in this browser too: the chooser, not the sign-in page;
    /// under `prompt=none` still `login_required` (nobody may choose).
    @Test func hintForAnotherSignedInUserShowsTheChooser() throws {
        #expect(
            try Self.decide([:], amr: Self.password, hintSubject: "acct-2", others: ["acct-2"])
                == .selectAccount)
        #expect(
            try Self.decide(["prompt": "none"], amr: Self.password, hintSubject: "acct-2", others: ["acct-2"])
                == .error(OAuthError(.loginRequired, hint: Self.otherUser)))
        // Chose another account than the one named: sign in as the named one.
        #expect(
            try Self.decide(
                [:], amr: Self.password, hintSubject: "acct-2", others: ["acct-2"], selected: true)
                == .login(.otherSubject))
        #expect(
            try Self.decide([:], amr: Self.password, hintSubject: "acct-2", others: ["acct-3"])
                == .login(.otherSubject))
    }

    @Test func subClaimValueForAnotherUser() throws {
        let other = #"{"id_token":{"sub":{"value":"acct-2"}}}"#
        #expect(
            try Self.decide(["claims": other, "prompt": "none"], amr: Self.password)
                == .error(OAuthError(.loginRequired, hint: Self.otherUser)))
        #expect(try Self.decide(["claims": other], amr: Self.password) == .login(.otherSubject))
        let same = #"{"userinfo":{"sub":{"value":"acct-1"}}}"#
        #expect(
            try Self.decide(["claims": same, "prompt": "none"], amr: Self.password)
                == .proceed(Self.session(Self.password)))
    }
}
