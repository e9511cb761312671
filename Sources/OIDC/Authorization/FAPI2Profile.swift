/// The FAPI 2.0 Security Profile (OpenID FAPI 2.0 Security Profile, final) as it applies to a
/// client configured with `"profile": "fapi2"`. Each rule is enforced where the request is
/// decided; this type holds the ones that are a single value or a configuration check, and
/// docs/fapi.md maps every requirement of the profile to the code and the test that prove it.
public enum FAPI2Profile {
    /// §5.3.2.2: authorization codes live at most 60 seconds, whatever the server's setting.
    public static let maxCodeLifetimeSeconds = 60

    /// The lifetime of a code issued to `client`: the configured one, capped for FAPI 2.0.
    public static func codeLifetime(configured: Int, for client: OAuthClient) -> Int {
        client.profile == .fapi2 ? min(configured, maxCodeLifetimeSeconds) : configured
    }

    /// The `aud` values a `private_key_jwt` assertion of `client` may carry: for a FAPI 2.0
    /// client only the issuer identifier (§5.3.2.1), else every value the server accepts.
    public static func assertionAudiences(for client: OAuthClient?, issuer: String, accepted: [String])
        -> [String]
    {
        client?.profile == .fapi2 ? [issuer] : accepted
    }

    /// What a FAPI 2.0 client's configuration must not be, one message per broken rule (empty:
    /// the configuration fits the profile). `authMethod`, `grantTypes` and the others are the
    /// client's metadata as configured.
    public static func configurationProblems(
        authMethod: String, applicationType: String, grantTypes: [String], requirePKCE: Bool
    ) -> [(key: String, message: String)] {
        var problems: [(key: String, message: String)] = []
        // §5.3.2.1: only confidential clients, authenticated with private_key_jwt or mTLS (no
        // mTLS here); a secret is not strong enough, and a public client cannot authenticate.
        if applicationType == "native" || authMethod == "none" {
            problems.append(
                (
                    "profile",
                    "fapi2 supports only confidential clients (FAPI 2.0 Security Profile §5.3.2.1); a public or "
                        + "native client cannot use it: give it DPoP and pushed requests without the profile"
                ))
        } else if authMethod != "private_key_jwt" {
            problems.append(
                (
                    "token_endpoint_auth_method",
                    "must be private_key_jwt for a fapi2 client (FAPI 2.0 Security Profile §5.3.2.1 allows only "
                        + "private_key_jwt and mTLS, and mTLS is not supported)"
                ))
        }
        // §5.3.2.2: PKCE with S256 always.
        if !requirePKCE {
            problems.append(
                ("require_pkce", "cannot be false for a fapi2 client (FAPI 2.0 Security Profile §5.3.2.2)"))
        }
        // §5.3.2.1's rule on refresh-token rotation is kept by not rotating a fapi2 client's
        // refresh tokens at all (`RefreshTokenIssuance.kept`): nothing to refuse here.
        return problems
    }
}
