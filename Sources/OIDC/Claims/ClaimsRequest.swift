import Foundation

/// The `claims` authorization request parameter (OpenID Connect Core §5.5): which claims the
/// client wants in the ID token and from the userinfo endpoint, each with `essential`,
/// `value` or `values`.
///
/// Parsing only checks the structure. What is released is decided elsewhere: standard
/// profile and email claims (`releasable`), `sub` compared with the session (Core §5.5.1),
/// `acr` as an authentication requirement (`AuthenticationContextRequest`, Core §5.5.1.1).
/// Other `value`/`values` are informational: the real value is released.
public struct ClaimsRequest: Sendable, Equatable {
    /// One requested claim: `null` in the request is `essential == false` and no values.
    public struct Entry: Sendable, Equatable {
        public var essential: Bool
        /// `value` as a one-element list, or `values`; nil when neither was sent.
        public var values: [JSONValue]?

        public init(essential: Bool = false, values: [JSONValue]? = nil) {
            self.essential = essential
            self.values = values
        }
    }

    /// The `id_token` member: claims for the ID token.
    public var idToken: [String: Entry]
    /// The `userinfo` member: claims for the userinfo response.
    public var userinfo: [String: Entry]

    public init(idToken: [String: Entry] = [:], userinfo: [String: Entry] = [:]) {
        self.idToken = idToken
        self.userinfo = userinfo
    }

    public var isEmpty: Bool { idToken.isEmpty && userinfo.isEmpty }

    /// Parses the parameter's JSON text. Members other than `id_token` and `userinfo` are
    /// ignored (Core §5.5: "other members MAY be present … if not understood, MUST be
    /// ignored"); a member, a claim or one of `essential`/`value`/`values` of the wrong JSON
    /// type is `invalid_request`.
    public static func parse(_ text: String) throws(OAuthError) -> ClaimsRequest {
        guard let parsed = try? JSONValue.parse(Data(text.utf8)), let object = parsed.objectValue else {
            throw .invalidRequest("The 'claims' parameter must be a JSON object.")
        }
        return ClaimsRequest(
            idToken: try member(object["id_token"], name: "id_token"),
            userinfo: try member(object["userinfo"], name: "userinfo"))
    }

    private static func member(_ value: JSONValue?, name: String) throws(OAuthError) -> [String: Entry] {
        guard let value, value != .null else { return [:] }
        guard let claims = value.objectValue else {
            throw .invalidRequest("The 'claims' member '\(name)' must be a JSON object.")
        }
        var entries: [String: Entry] = [:]
        for (claim, request) in claims {
            entries[claim] = try entry(request, claim: claim)
        }
        return entries
    }

    /// Core §5.5.1: `null`, or an object with optional `essential` (boolean), `value` and
    /// `values` (an array).
    private static func entry(_ value: JSONValue, claim: String) throws(OAuthError) -> Entry {
        if value == .null { return Entry() }
        let described = String(claim.prefix(64))
        guard let object = value.objectValue else {
            throw .invalidRequest("The requested claim '\(described)' must be null or a JSON object.")
        }
        var entry = Entry()
        if let essential = object["essential"], essential != .null {
            guard let flag = essential.boolValue else {
                throw .invalidRequest("The 'essential' member of claim '\(described)' must be a boolean.")
            }
            entry.essential = flag
        }
        if let values = object["values"], values != .null {
            guard let list = values.arrayValue else {
                throw .invalidRequest("The 'values' member of claim '\(described)' must be an array.")
            }
            entry.values = list
        }
        if let single = object["value"], single != .null {
            if entry.values != nil {
                throw .invalidRequest("The claim '\(described)' cannot have both 'value' and 'values'.")
            }
            entry.values = [single]
        }
        return entry
    }

    /// The standard claims of `member` that this provider can release to `client`: profile
    /// and email claims whose scope the client may obtain (`OAuthClient.scopes`).
    public static func releasable(_ member: [String: Entry], for client: OAuthClient) -> Set<String> {
        Set(
            member.keys.filter { claim in
                Scopes.scope(releasing: claim).map(client.scopes.contains) ?? false
            })
    }

    /// The scopes the user consents to for the requested claims of both members (the
    /// released claims are exactly the ones those scopes would release).
    public static func scopes(for claims: Set<String>) -> Set<String> {
        Set(claims.compactMap(Scopes.scope(releasing:)))
    }

    /// The `sub` values the client insists on (Core §5.5.1), from either member. The signed-in
    /// user must be each of them, so two different values can never be met.
    public var requestedSubjects: Set<String> {
        var subjects = Set<String>()
        for member in [idToken, userinfo] {
            for value in member["sub"]?.values ?? [] {
                // A non-string value can never equal a subject: keep it so it is unmet.
                subjects.insert(value.stringValue ?? "\u{0}non-string")
            }
        }
        return subjects
    }
}
