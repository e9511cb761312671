/// How a registration ceremony meets its user, and so what its options ask of the
/// authenticator and what its verification then requires. One value decides both, so the
/// options sent and the checks applied cannot disagree.
/// - SeeAlso: https://w3c.github.io/webappsec-credential-management/#enumdef-credentialmediationrequirement
public enum RegistrationMediation: String, Sendable {
    /// The browser's dialog, started by the user: presence and verification required.
    case modal
    /// `mediation: "conditional"`, offered right after the user signed in another way: the
    /// authenticator may create the credential without a gesture (UP=0) and without
    /// verifying the user.
    case conditional

    /// `conditional` when `conditional`, else `modal`.
    public init(conditional: Bool) {
        self = conditional ? .conditional : .modal
    }

    /// What `authenticatorSelection.userVerification` asks for.
    public var userVerification: UserVerificationRequirement {
        switch self {
        case .modal: .required
        case .conditional: .preferred
        }
    }

    /// Whether the response must carry UP (step 15 of the registration ceremony).
    public var requiresUserPresence: Bool { self == .modal }

    /// Whether the response must carry UV (step 16).
    public var requiresUserVerification: Bool { userVerification == .required }
}
