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

    @Test func reauthenticationAddsOnlyNewMethodsAfterTheEarlierOnes() {
        #expect(
            AuthenticationMethods.combining(["pwd"], with: ["hwk", "user", "mfa"]) == [
                "pwd", "hwk", "user", "mfa",
            ])
        #expect(
            AuthenticationMethods.combining(["swk", "user", "mfa"], with: ["pwd"]) == [
                "swk", "user", "mfa", "pwd",
            ])
        #expect(
            AuthenticationMethods.combining(["hwk", "user", "mfa"], with: ["swk", "user", "mfa"]) == [
                "hwk", "user", "mfa", "swk",
            ])
        #expect(AuthenticationMethods.combining(["email"], with: ["pwd"]) == ["email", "pwd"])
        #expect(AuthenticationMethods.combining(["pwd"], with: ["pwd"]) == ["pwd"])
    }
}
