/// How the user authenticated, turned into RFC 8176 `amr` values.
public enum AuthenticationMethod: Sendable, Equatable {
    case password
    /// A WebAuthn passkey. `deviceBound`: the credential cannot leave the authenticator
    /// (backup-eligible flag clear) → `hwk`; a synced passkey → `swk`. `userVerified`: the
    /// UV flag was set (a local PIN or biometric).
    case passkey(deviceBound: Bool, userVerified: Bool)
}

public enum AuthenticationMethods {
    /// `pwd` for a password; `hwk` or `swk` plus `user` for a passkey; `mfa` when two
    /// factors were used: a password and a passkey, or a passkey with user verification
    /// (possession plus a PIN or biometric). Order is stable and values are unique.
    public static func amr(for methods: [AuthenticationMethod]) -> [String] {
        var values: [String] = []
        func add(_ value: String) { if !values.contains(value) { values.append(value) } }
        var factors = Set<String>()
        for method in methods {
            switch method {
            case .password:
                add("pwd")
                factors.insert("knowledge")
            case .passkey(let deviceBound, let userVerified):
                add(deviceBound ? "hwk" : "swk")
                add("user")
                factors.insert("possession")
                if userVerified { factors.insert("local verification") }
            }
        }
        if factors.count >= 2 { add("mfa") }
        return values
    }
}
