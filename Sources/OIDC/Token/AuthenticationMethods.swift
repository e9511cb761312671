/// Authentication method references (RFC 8176) that a sign-in records for its session, and
/// that ID tokens and access tokens issued under that session carry as `amr`.
public enum AuthenticationMethods {
    /// Something the user knows.
    public static let password = ["pwd"]

    /// A sign-in completed through account recovery proved only control of the mailbox that
    /// received the code, whatever the recovery then set up: the new passkey or password is
    /// not yet evidence of anything, so the session claims neither (`email` is not an RFC 8176
    /// value; it is documented in docs/api.md).
    public static let emailRecovery = ["email"]

    /// A passkey is possession of a key (synced: `swk`, device-bound: `hwk`); with user
    /// verification it is also something the user is or knows, hence `user` and `mfa`.
    public static func passkey(backupEligible: Bool, userVerified: Bool) -> [String] {
        [backupEligible ? "swk" : "hwk"] + (userVerified ? ["user", "mfa"] : [])
    }
}
