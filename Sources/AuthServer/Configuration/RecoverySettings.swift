extension Configuration {
    /// Account recovery by a code mailed to a verified address.
    struct RecoverySettings: Sendable, Equatable {
        /// How long a mailed code works.
        var codeLifetimeSeconds = 900
        /// Wrong codes tolerated before the live code stops working.
        var maxAttempts = 5
        /// How long the recovery session opened by a code stays usable.
        var sessionLifetimeSeconds = 900
        /// Requests allowed per window: recovery starts per email address and per client
        /// address, code checks per email address and per client address.
        var startMaxPerEmail = 5
        var startMaxPerClient = 30
        var verifyMaxPerEmail = 10
        var verifyMaxPerClient = 60
        var throttleWindowSeconds = 900
    }

    /// How far the deployment has moved towards passkeys.
    struct PasswordlessPolicy: Sendable, Equatable {
        /// Whether new accounts may be created with a password.
        var passwordSignUp = true
        /// Whether an account that has a passkey may still sign in with its password.
        var passwordSignInForPasskeyAccounts = true
        /// Whether the conditional passkey upgrade follows a password sign-in.
        var conditionalUpgrade = true
        /// Every this many password sign-ins of an account without a passkey, the sign-in flow
        /// asks it to create one; 0 never asks.
        var passkeyPromptAfterPasswordSignIns = 3
    }
}

/// Reads `recovery` and `passwordless` from the configuration file.
enum RecoverySettingsReader {
    static func recovery(_ root: ObjectReader, sink: ProblemSink) -> Configuration.RecoverySettings {
        var settings = Configuration.RecoverySettings()
        guard let value = root.value("recovery"),
            let reader = ObjectReader(value, path: root.memberPath("recovery"), sink: sink)
        else { return settings }
        settings.codeLifetimeSeconds =
            reader.integer("code_lifetime_seconds", in: 60...86_400) ?? settings.codeLifetimeSeconds
        settings.maxAttempts = reader.integer("max_attempts", in: 1...20) ?? settings.maxAttempts
        settings.sessionLifetimeSeconds =
            reader.integer("session_lifetime_seconds", in: 60...3_600) ?? settings.sessionLifetimeSeconds
        settings.startMaxPerEmail =
            reader.integer("start_max_per_email", in: 1...1_000) ?? settings.startMaxPerEmail
        settings.startMaxPerClient =
            reader.integer("start_max_per_client", in: 1...100_000) ?? settings.startMaxPerClient
        settings.verifyMaxPerEmail =
            reader.integer("verify_max_per_email", in: 1...1_000) ?? settings.verifyMaxPerEmail
        settings.verifyMaxPerClient =
            reader.integer("verify_max_per_client", in: 1...100_000) ?? settings.verifyMaxPerClient
        settings.throttleWindowSeconds =
            reader.integer("throttle_window_seconds", in: 10...86_400) ?? settings.throttleWindowSeconds
        reader.reportUnknownMembers()
        return settings
    }

    static func passwordless(_ root: ObjectReader, sink: ProblemSink) -> Configuration.PasswordlessPolicy {
        var policy = Configuration.PasswordlessPolicy()
        guard let value = root.value("passwordless"),
            let reader = ObjectReader(value, path: root.memberPath("passwordless"), sink: sink)
        else { return policy }
        policy.passwordSignUp = reader.bool("password_sign_up") ?? policy.passwordSignUp
        policy.passwordSignInForPasskeyAccounts =
            reader.bool("password_sign_in_for_passkey_accounts") ?? policy.passwordSignInForPasskeyAccounts
        policy.conditionalUpgrade = reader.bool("conditional_upgrade") ?? policy.conditionalUpgrade
        policy.passkeyPromptAfterPasswordSignIns =
            reader.integer("passkey_prompt_after_password_sign_ins", in: 0...1_000)
            ?? policy.passkeyPromptAfterPasswordSignIns
        reader.reportUnknownMembers()
        return policy
    }
}
