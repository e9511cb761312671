/// Which user claims the userinfo endpoint returns (OpenID Connect Core §5.3, §5.4).
public enum UserInfoClaims {
    /// `sub` plus the claims the granted scopes release: `profile` → name, family_name,
    /// given_name, middle_name, nickname, preferred_username, profile, picture, website,
    /// gender, birthdate, zoneinfo, locale, updated_at; `email` → email, email_verified.
    /// Claims absent from `available` are left out (never `null`). `requested`: the claims
    /// the `claims` parameter's `userinfo` member asked for (Core §5.5), already limited to
    /// those the user consented to; released even without their scope.
    public static func select(
        subject: String, available: [String: JSONValue], scopes: [String], requested: Set<String> = []
    ) -> [String: JSONValue] {
        var claims: [String: JSONValue] = [:]
        for (name, value) in available {
            guard let scope = Scopes.scope(releasing: name), value != .null else { continue }
            if scopes.contains(scope) || requested.contains(name) {
                claims[name] = value
            }
        }
        claims["sub"] = .string(subject)
        return claims
    }

    /// The JSON body.
    public static func jsonBody(_ claims: [String: JSONValue]) -> [UInt8] { JSONBody.encode(claims) }
}
