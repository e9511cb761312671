/// Which sign-in credentials an account may give up: it always keeps a way in. The stores
/// supply the counts (inside the transaction of the removal, so that two removals cannot both
/// pass); this type decides.
enum CredentialPolicy {
    enum Decision: Equatable, Sendable {
        case allowed
        /// The passkey is the account's only way to sign in: no other passkey, no password.
        case lastCredential
        /// None of the account's passkeys has ever signed in, so none is known to work.
        case passkeyNeverUsed
    }

    /// Removing one passkey of an account that holds `passkeys` (the one to remove included).
    static func removePasskey(passkeys: Int, hasPassword: Bool) -> Decision {
        passkeys <= 1 && !hasPassword ? .lastCredential : .allowed
    }

    /// Removing the password: only once a passkey of the account has proven it signs in.
    static func removePassword(hasUsedPasskey: Bool) -> Decision {
        hasUsedPasskey ? .allowed : .passkeyNeverUsed
    }

    /// Whether the account page offers to remove the password.
    static func mayRemovePassword(hasPassword: Bool, hasUsedPasskey: Bool) -> Bool {
        hasPassword && removePassword(hasUsedPasskey: hasUsedPasskey) == .allowed
    }
}
