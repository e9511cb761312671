/// Whether a client must present a DPoP proof at the token endpoint. The one place this
/// rule lives, so every grant and every profile asks the same question.
public enum DPoPPolicy {
    /// The client registered `dpop_bound_access_tokens` (RFC 9449 §5.2), or follows the FAPI
    /// 2.0 Security Profile (§5.3.2.1: only sender-constrained access tokens; DPoP is this
    /// server's method), or it is public and the server requires DPoP of every public client
    /// (a copied refresh token is then useless without the device's key).
    public static func required(for client: OAuthClient, requiredForPublicClients: Bool) -> Bool {
        client.dpopBoundAccessTokens || client.profile == .fapi2
            || (client.isPublic && requiredForPublicClients)
    }

    /// Whether a refresh token issued with a proof is bound to the proof's key: only for
    /// public clients (RFC 9449 §5); a confidential client's refresh token is already bound
    /// to its client authentication.
    public static func bindsRefreshToken(for client: OAuthClient) -> Bool { client.isPublic }

    /// A code bound with `dpop_jkt` (RFC 9449 §10) or a refresh token bound to a key (§5) is
    /// usable only with a proof of that key. Without a proof the answer says one is needed;
    /// with another key's proof the grant is refused like any grant that does not belong to
    /// the requester.
    public static func checkBinding(boundTo jkt: String?, proofKey: String?) throws(OAuthError) {
        guard let jkt else { return }
        guard let proofKey else { throw DPoPError.missing.oauthError(at: .authorizationServer) }
        guard proofKey == jkt else {
            throw OAuthError(
                .invalidGrant, hint: "The DPoP proof's key is not the key the grant is bound to.")
        }
    }
}
