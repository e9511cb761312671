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

    /// The methods of a session after a re-authentication by `added`: the earlier ones, then
    /// the new ones it did not already claim (each value once, in the order first proved).
    public static func combining(_ earlier: [String], with added: [String]) -> [String] {
        earlier + added.filter { !earlier.contains($0) }
    }
}
