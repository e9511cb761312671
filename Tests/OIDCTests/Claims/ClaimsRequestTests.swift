import Foundation
import Testing
@testable import OIDC

@Suite struct ClaimsRequestTests {
    @Test func parsesBothMembersWithEssentialValueAndValues() throws {
        let request = try ClaimsRequest.parse(
            """
            {"id_token":{"email":{"essential":true},"name":null,"acr":{"values":["phr","basic"]}},
             "userinfo":{"given_name":{"essential":false},"sub":{"value":"acct-1"},"nickname":{}},
             "other":{"ignored":true}}
            """)
        #expect(
            request.idToken == [
                "email": .init(essential: true), "name": .init(),
                "acr": .init(values: [.string("phr"), .string("basic")]),
            ])
        #expect(
            request.userinfo == [
                "given_name": .init(), "sub": .init(values: [.string("acct-1")]), "nickname": .init(),
            ])
        #expect(request.requestedSubjects == ["acct-1"])
        #expect(!request.isEmpty)
    }

    @Test func nullAndEmptyMembersRequestNothing() throws {
        #expect(try ClaimsRequest.parse("{}").isEmpty)
        #expect(try ClaimsRequest.parse(#"{"id_token":null,"userinfo":{}}"#).isEmpty)
    }

    @Test(arguments: [
        ("{id_token", "The 'claims' parameter must be a JSON object."),
        ("[]", "The 'claims' parameter must be a JSON object."),
        (#""text""#, "The 'claims' parameter must be a JSON object."),
        (#"{"id_token":["email"]}"#, "The 'claims' member 'id_token' must be a JSON object."),
        (#"{"userinfo":"email"}"#, "The 'claims' member 'userinfo' must be a JSON object."),
        (#"{"userinfo":{"email":true}}"#, "The requested claim 'email' must be null or a JSON object."),
        (#"{"id_token":{"email":["x"]}}"#, "The requested claim 'email' must be null or a JSON object."),
        (
            #"{"id_token":{"email":{"essential":"yes"}}}"#,
            "The 'essential' member of claim 'email' must be a boolean."
        ),
        (#"{"userinfo":{"acr":{"values":"phr"}}}"#, "The 'values' member of claim 'acr' must be an array."),
        (
            #"{"id_token":{"sub":{"value":"a","values":["b"]}}}"#,
            "The claim 'sub' cannot have both 'value' and 'values'."
        ),
    ])
    func malformed(_ text: String, hint: String) {
        #expect(throws: OAuthError(.invalidRequest, hint: hint)) { try ClaimsRequest.parse(text) }
    }

    @Test func releasableAreTheStandardClaimsOfScopesTheClientMayObtain() throws {
        let request = try ClaimsRequest.parse(
            #"{"userinfo":{"email":null,"name":null,"phone_number":null,"custom":null,"sub":null}}"#)
        #expect(ClaimsRequest.releasable(request.userinfo, for: Fixture.web) == ["email", "name"])
        var emailOnly = Fixture.web
        emailOnly.scopes = ["openid", "email"]
        #expect(ClaimsRequest.releasable(request.userinfo, for: emailOnly) == ["email"])
        #expect(ClaimsRequest.scopes(for: ["email", "email_verified", "name"]) == ["email", "profile"])
    }

    @Test func nonStringSubjectValuesCanNeverMatch() throws {
        let request = try ClaimsRequest.parse(#"{"id_token":{"sub":{"value":42}}}"#)
        #expect(request.requestedSubjects.count == 1)
        #expect(!request.requestedSubjects.contains("42"))
    }
}

@Suite struct AuthenticationContextClassTests {
    @Test(arguments: [
        ([String](), AuthenticationContextClass.basic),
        (["pwd"], .basic),
        (["email"], .basic),
        (["hwk"], .basic),
        (["swk"], .basic),
        (["swk", "user", "mfa"], .phr),
        (["hwk", "user", "mfa"], .phrh),
        (["pwd", "hwk", "user", "mfa"], .phrh),
        (["pwd", "user"], .basic),
    ])
    func levelFromAMR(_ amr: [String], expected: AuthenticationContextClass) {
        #expect(AuthenticationContextClass.of(amr: amr) == expected)
    }

    @Test func orderingAndAdvertisedValues() {
        #expect(AuthenticationContextClass.basic < .phr && AuthenticationContextClass.phr < .phrh)
        #expect(AuthenticationContextClass.supported == ["phrh", "phr", "basic"])
    }

    @Test func requestFromAcrValuesAndClaims() throws {
        #expect(AuthenticationContextRequest.from(acrValues: [], claims: ClaimsRequest()) == nil)
        #expect(
            AuthenticationContextRequest.from(acrValues: ["phr"], claims: ClaimsRequest())
                == .init(values: ["phr"], essential: false))
        let essential = try ClaimsRequest.parse(#"{"id_token":{"acr":{"essential":true,"value":"phrh"}}}"#)
        #expect(
            AuthenticationContextRequest.from(acrValues: ["basic"], claims: essential)
                == .init(values: ["phrh"], essential: true))
        let withoutValues = try ClaimsRequest.parse(#"{"id_token":{"acr":{"essential":true}}}"#)
        #expect(
            AuthenticationContextRequest.from(acrValues: ["phr"], claims: withoutValues)
                == .init(values: ["phr"], essential: true))
        #expect(AuthenticationContextRequest.from(acrValues: [], claims: withoutValues) == nil)
    }

    @Test func metWhenAtLeastOneKnownRequestedClass() {
        let phr = AuthenticationContextRequest(values: ["phr"], essential: true)
        #expect(!phr.isMet(by: .basic))
        #expect(phr.isMet(by: .phr) && phr.isMet(by: .phrh))
        #expect(phr.wantsStepUp(from: .basic))
        #expect(!phr.wantsStepUp(from: .phr))
        // Several values: the weakest known one decides; unknown ones are ignored.
        let mixed = AuthenticationContextRequest(values: ["urn:unknown", "phrh", "basic"], essential: true)
        #expect(mixed.isMet(by: .basic))
        // Only unknown values: nothing asked when voluntary, unmeetable when essential.
        #expect(AuthenticationContextRequest(values: ["1", "2"], essential: false).isMet(by: .basic))
        let unknownEssential = AuthenticationContextRequest(values: ["1"], essential: true)
        #expect(!unknownEssential.isMet(by: .phrh))
        #expect(!unknownEssential.wantsStepUp(from: .basic))
    }
}
