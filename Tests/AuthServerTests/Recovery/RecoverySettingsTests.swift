import Foundation
import Testing

@testable import AuthServer

@Suite struct RecoverySettingsTests {
    func check(_ members: String) -> ConfigurationLoader.Result {
        ConfigurationLoader.check(
            data: Data(#"{"issuer": "https://id.example.com", "clients": [] \#(members)}"#.utf8))
    }

    @Test func defaults() throws {
        let configuration = try #require(check("").configuration)
        #expect(configuration.recovery.codeLifetimeSeconds == 900)
        #expect(configuration.recovery.maxAttempts == 5)
        #expect(configuration.recovery.sessionLifetimeSeconds == 900)
        #expect(configuration.passwordless == .init())
        #expect(configuration.passwordless.passwordSignUp)
        #expect(configuration.passwordless.passwordSignInForPasskeyAccounts)
        #expect(configuration.passwordless.conditionalUpgrade)
        #expect(configuration.passwordless.passkeyPromptAfterPasswordSignIns == 3)
    }

    @Test func valuesAreRead() throws {
        let configuration = try #require(
            check(
                #"""
                , "recovery": {"code_lifetime_seconds": 600, "max_attempts": 3, "session_lifetime_seconds": 300,
                               "start_max_per_email": 4, "verify_max_per_client": 20, "throttle_window_seconds": 60},
                  "passwordless": {"password_sign_up": false, "password_sign_in_for_passkey_accounts": false,
                                   "conditional_upgrade": false, "passkey_prompt_after_password_sign_ins": 0}
                """#
            ).configuration)
        #expect(configuration.recovery.codeLifetimeSeconds == 600)
        #expect(configuration.recovery.maxAttempts == 3)
        #expect(configuration.recovery.sessionLifetimeSeconds == 300)
        #expect(configuration.recovery.startMaxPerEmail == 4)
        #expect(configuration.recovery.verifyMaxPerClient == 20)
        #expect(configuration.recovery.throttleWindowSeconds == 60)
        #expect(
            configuration.passwordless
                == .init(
                    passwordSignUp: false, passwordSignInForPasskeyAccounts: false, conditionalUpgrade: false,
                    passkeyPromptAfterPasswordSignIns: 0))
    }

    @Test func problemsCarryTheirJSONPath() {
        let problems = check(
            #"""
            , "recovery": {"code_lifetime_seconds": 5, "max_attempts": "five", "codes": 1},
              "passwordless": {"password_sign_up": "no", "passkey_prompt_after_password_sign_ins": -1}
            """#
        ).problems.map(\.description)
        #expect(
            problems.contains {
                $0.contains("$.recovery.code_lifetime_seconds: must be between 60 and 86400")
            })
        #expect(problems.contains { $0.contains("$.recovery.max_attempts: must be an integer") })
        #expect(problems.contains { $0.contains("$.recovery.codes: is not a known setting") })
        #expect(problems.contains { $0.contains("$.passwordless.password_sign_up: must be true or false") })
        #expect(problems.contains { $0.contains("$.passwordless.passkey_prompt_after_password_sign_ins") })
        #expect(problems.count == 5)
        #expect(
            check(#", "passwordless": []"#).problems.map(\.description) == [
                "error: $.passwordless: must be an object, found an array"
            ] || check(#", "passwordless": []"#).problems.count == 1)
    }
}
