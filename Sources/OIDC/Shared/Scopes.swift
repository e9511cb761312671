/// The scopes and claims this provider knows (OpenID Connect Core §5.4, §11).
public enum Scopes {
    public static let openid = "openid"
    public static let profile = "profile"
    public static let email = "email"
    public static let offlineAccess = "offline_access"
    public static let supported: [String] = [openid, profile, email, offlineAccess]

    /// Claims released by the `profile` scope (Core §5.4).
    public static let profileClaims: [String] = [
        "name", "family_name", "given_name", "middle_name", "nickname", "preferred_username", "profile",
        "picture", "website", "gender", "birthdate", "zoneinfo", "locale", "updated_at",
    ]
    /// Claims released by the `email` scope.
    public static let emailClaims: [String] = ["email", "email_verified"]

    /// The scope that releases `claim`, if any.
    public static func scope(releasing claim: String) -> String? {
        if profileClaims.contains(claim) { return profile }
        if emailClaims.contains(claim) { return email }
        return nil
    }

    /// RFC 6749 §3.3 allows the server to "fully or partially ignore the scope requested";
    /// this provider does so rather than failing with `invalid_scope`, so a client asking
    /// for an optional extra scope still works: scopes not in the client's allowed set
    /// (`OAuthClient.scopes`, which may hold API scopes besides the OpenID ones) are
    /// dropped, and the token response then states the granted `scope`. `offline_access` is
    /// kept only for clients allowed to use refresh tokens. Duplicates are removed; order
    /// kept.
    public static func narrow(_ requested: [String], for client: OAuthClient) -> [String] {
        var granted: [String] = []
        for scope in requested where !granted.contains(scope) && client.scopes.contains(scope) {
            if scope == offlineAccess && !client.grantTypes.contains(.refreshToken) { continue }
            granted.append(scope)
        }
        return granted
    }
}
