import Testing

@testable import OIDC

@Suite struct AuthenticationMethodsTests {
    @Test func password() {
        #expect(AuthenticationMethods.password == ["pwd"])
    }

    @Test func emailRecovery() {
        #expect(AuthenticationMethods.emailRecovery == ["email"])
    }

    @Test(arguments: [
        (false, false, ["hwk"]),
        (false, true, ["hwk", "user", "mfa"]),
        (true, false, ["swk"]),
        (true, true, ["swk", "user", "mfa"]),
    ])
    func passkey(backupEligible: Bool, userVerified: Bool, expected: [String]) {
        #expect(
            AuthenticationMethods.passkey(backupEligible: backupEligible, userVerified: userVerified)
                == expected)
    }
}
