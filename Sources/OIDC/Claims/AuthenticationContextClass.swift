/// The authentication context classes (`acr`, OpenID Connect Core §2) this provider
/// distinguishes, weakest first, and how a session's `amr` maps to them.
///
/// `phr` and `phrh` are the phishing-resistant classes of OpenID Connect EAP ACR Values 1.0
/// (§2): `phr` needs an authentication whose secret cannot be replayed on another site,
/// `phrh` additionally a key held in hardware that cannot be exported. A passkey with user
/// verification is phishing-resistant; a device-bound one (`hwk`) is also hardware-held.
/// Synced passkeys (`swk`) are not `phrh`: their key leaves the device.
public enum AuthenticationContextClass: String, Sendable, Equatable, CaseIterable, Comparable {
    case basic
    case phr
    case phrh

    /// Strongest first, as advertised in `acr_values_supported`.
    public static let supported: [String] = [phrh.rawValue, phr.rawValue, basic.rawValue]

    /// The class a session's RFC 8176 method references reach (see `AuthenticationMethods`):
    /// `hwk` + `user` → `phrh`; any passkey (`hwk`/`swk`) + `user` → `phr`; else `basic`
    /// (password, recovery, a passkey without user verification).
    public static func of(amr: [String]) -> AuthenticationContextClass {
        guard amr.contains("user") else { return .basic }
        if amr.contains("hwk") { return .phrh }
        if amr.contains("swk") { return .phr }
        return .basic
    }

    private var rank: Int {
        switch self {
        case .basic: 0
        case .phr: 1
        case .phrh: 2
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
}

/// What a request asks of the authentication's class: `acr_values` (voluntary, Core
/// §3.1.2.1) or an `acr` claim in `claims` (`essential`, `value`/`values`, Core §5.5.1.1).
public struct AuthenticationContextRequest: Sendable, Equatable {
    /// The requested values in order of preference, unknown ones included.
    public var values: [String]
    /// Whether an unmet request is refused (`unmet_authentication_requirements`) rather than
    /// answered with the class actually reached.
    public var essential: Bool

    public init(values: [String], essential: Bool) {
        self.values = values
        self.essential = essential
    }

    /// The request of an authorization request, or nil when it asks for nothing. An `acr`
    /// claim (ID token member, else userinfo member) takes precedence over `acr_values`; an
    /// `acr` claim without values uses the `acr_values`.
    public static func from(acrValues: [String], claims: ClaimsRequest) -> AuthenticationContextRequest? {
        let claim = claims.idToken["acr"] ?? claims.userinfo["acr"]
        var values = acrValues
        if let listed = claim?.values {
            values = listed.map { $0.stringValue ?? "" }
        }
        let essential = claim?.essential ?? false
        guard !values.isEmpty else { return nil }
        return AuthenticationContextRequest(values: values, essential: essential)
    }

    /// The known classes requested.
    public var known: [AuthenticationContextClass] { values.compactMap(AuthenticationContextClass.init) }

    /// Whether `reached` satisfies the request: it is at least one of the known requested
    /// classes. Unknown values are ignored when voluntary; with only unknown values an
    /// essential request cannot be met, a voluntary one asks for nothing.
    public func isMet(by reached: AuthenticationContextClass) -> Bool {
        let known = self.known
        guard !known.isEmpty else { return !essential }
        return known.contains { reached >= $0 }
    }

    /// Whether signing in with a passkey could help: the request is unmet and asks for a
    /// class a passkey reaches.
    public func wantsStepUp(from reached: AuthenticationContextClass) -> Bool {
        !isMet(by: reached) && known.contains { $0 > reached }
    }
}
