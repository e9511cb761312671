/// Which sign-in credentials an account may give up: it always keeps a way in. The stores
/// supply the counts (inside the transaction of the removal, so that two removals cannot both
/// pass); this type decides. A linked upstream identity (Sign in with Apple, another OpenID
/// provider) is a way in too: an account that has one may give up its last passkey or its
/// password, and its last identity may go only while a passkey or the password remains.
enum CredentialPolicy {
    enum Decision: Equatable, Sendable {
        case allowed
        /// The passkey is the account's only way to sign in: no other passkey, no password.
        case lastCredential
        /// None of the account's passkeys has ever signed in, so none is known to work.
        case passkeyNeverUsed
    }

    /// Unlinking one upstream identity of an account that holds `identities` (that one
    /// included), `passkeys` passkeys and maybe a password.
    static func unlinkIdentity(identities: Int, passkeys: Int, hasPassword: Bool) -> Decision {
        identities <= 1 && passkeys == 0 && !hasPassword ? .lastCredential : .allowed
    }

    /// Removing one passkey of an account that holds `passkeys` (the one to remove included).
    static func removePasskey(passkeys: Int, hasPassword: Bool, identities: Int = 0) -> Decision {
        passkeys <= 1 && !hasPassword && identities == 0 ? .lastCredential : .allowed
    }

    /// Removing the password: only once a passkey of the account has proven it signs in, or
    /// while an upstream identity is linked.
    static func removePassword(hasUsedPasskey: Bool, identities: Int = 0) -> Decision {
        hasUsedPasskey || identities > 0 ? .allowed : .passkeyNeverUsed
    }

    /// Whether the account page offers to remove the password.
    static func mayRemovePassword(hasPassword: Bool, hasUsedPasskey: Bool, identities: Int = 0) -> Bool {
        hasPassword && removePassword(hasUsedPasskey: hasUsedPasskey, identities: identities) == .allowed
    }
}
