/// Which user claims the userinfo endpoint returns (OpenID Connect Core §5.3, §5.4).
public enum UserInfoClaims {
    /// `sub` plus the claims the granted scopes release: `profile` → name, family_name,
    /// given_name, middle_name, nickname, preferred_username, profile, picture, website,
    /// gender, birthdate, zoneinfo, locale, updated_at; `email` → email, email_verified.
    /// Claims absent from `available` are left out (never `null`).
    public static func select(subject: String, available: [String: JSONValue], scopes: [String]) -> [String:
        JSONValue]
    {
        var claims: [String: JSONValue] = [:]
        for (name, value) in available {
            if let scope = Scopes.scope(releasing: name), scopes.contains(scope), value != .null {
                claims[name] = value
            }
        }
        claims["sub"] = .string(subject)
        return claims
    }

    /// The JSON body.
    public static func jsonBody(_ claims: [String: JSONValue]) -> [UInt8] { JSONBody.encode(claims) }
}
