import Foundation
import HTTPServer
import OIDC

/// The DPoP proof of a request (RFC 9449 §4), checked against the endpoint's published URI
/// and this server's nonces. Pure checks in `DPoPProofVerifier`; the replay cache is
/// `OAuthStore.recordDPoPProof`, called by each flow where its writes happen.
struct DPoPProofs: Sendable {
    let oauth: OAuthServices

    /// The keys of recent proofs, checked once per key and process (`DPoPKeyCache`).
    static let keys = DPoPKeyCache()

    /// The server's nonces; nonces are only demanded with `oauth.dpop_nonce_required`.
    var nonces: DPoPNonce { DPoPNonce(key: oauth.signingKeys.dpopNonceKey) }

    /// The verified proof of `request`, nil when it carries no `DPoP` header. `uri` is the
    /// endpoint as the discovery document names it; `accessToken` the token presented with
    /// the proof at a resource (its `ath`); `client` the authenticated client, whose profile
    /// may allow fewer algorithms.
    func verify(
        _ request: HTTPRequest, uri: String, accessToken: String? = nil, client: OAuthClient? = nil,
        at endpoint: DPoPError.Endpoint
    ) throws(OAuthError) -> DPoPProof? {
        let now = oauth.system.now()
        // The nonce key is derived only when nonces are required.
        let nonces = oauth.settings.dpopNonceRequired ? self.nonces : nil
        do {
            return try DPoPProofVerifier.verify(
                headerValues: request.headers.values("DPoP"),
                request: DPoPRequest(
                    method: request.method.rawValue, uri: uri, accessToken: accessToken, nonces: nonces,
                    keys: Self.keys, algorithms: client?.signingAlgorithms),
                now: now)
        } catch {
            oauth.log.info("dpop.refused", ["step": "dpop.verify", "reason": "\(error)"])
            throw error.oauthError(at: endpoint, nonce: nonces?.current(now: now))
        }
    }

    /// The verified proof of a request to an endpoint that has no transaction of its own
    /// (`/par`, `/authorize-challenge`), its `jti` recorded at once (§11.1); nil without a
    /// `DPoP` header.
    func verifyOnce(_ request: HTTPRequest, uri: String, client: OAuthClient? = nil) throws -> DPoPProof? {
        guard let proof = try verify(request, uri: uri, client: client, at: .authorizationServer) else {
            return nil
        }
        guard try OAuthStore.recordDPoPProof(proof, asynchronousCommit: true, on: oauth.pool) else {
            throw Self.replayed(at: .authorizationServer)
        }
        return proof
    }

    /// The JWK thumbprint a request binds its code to (RFC 9449 §10): the proof's key, or
    /// `dpop_jkt`; when both are sent they must name the same key (§10.1).
    static func boundKey(proof: DPoPProof?, dpopJKT: String?) throws(OAuthError) -> String? {
        guard let proof else { return dpopJKT }
        if let dpopJKT, dpopJKT != proof.thumbprint {
            throw OAuthError(
                .invalidDPoPProof, hint: "The DPoP proof's key is not the key 'dpop_jkt' names.")
        }
        return proof.thumbprint
    }

    /// The `DPoP-Nonce` to send with a successful answer (§8.2): when nonces are required and
    /// the proof's is not the current one, so the client switches before its nonce expires.
    func nextNonce(after proof: DPoPProof?) -> String? {
        guard oauth.settings.dpopNonceRequired, let proof else { return nil }
        let current = nonces.current(now: oauth.system.now())
        return proof.nonce == current ? nil : current
    }

    /// The refusal of a proof whose `jti` was seen before (§11.1).
    static func replayed(at endpoint: DPoPError.Endpoint) -> OAuthError {
        DPoPError.replayed.oauthError(at: endpoint)
    }

    /// `WWW-Authenticate: DPoP` (§7.1): the algorithms accepted and, after a refusal, its error.
    static func challenge(realm: String, error: OAuthError?) -> String {
        var parts = ["realm=\"\(realm.filter { $0 != "\"" && $0 != "\\" })\""]
        if let error {
            parts.append("error=\"\(error.error)\"")
            parts.append("error_description=\"\(error.errorDescription)\"")
        }
        parts.append("algs=\"\(DPoPProofVerifier.algorithms.map(\.rawValue).joined(separator: " "))\"")
        return "DPoP " + parts.joined(separator: ", ")
    }
}
