import Foundation
import OIDC

/// The pushed authorization request endpoint (RFC 9126 §2): the authorization request is
/// validated with the rules of /authorize, stored, and named by a one-time `request_uri`.
struct PushedAuthorizationFlow: Sendable {
    let oauth: OAuthServices
    let store: any PushedAuthorizationStore

    struct Pushed {
        var requestURI: String
        var expiresIn: Int
    }

    /// - Throws: `OAuthError` (answered in JSON with status 400, §2.3) for a request /authorize
    ///   would refuse; database errors as they are.
    func push(_ body: Parameters, client: OAuthClient, dpop: DPoPProof? = nil) throws -> Pushed {
        // Step 1. The request itself: no `request_uri`, the authenticated client_id, no credentials.
        var parameters = try PushedAuthorizationRequest.parameters(pushed: body, client: client)
        // Step 2. A signed request object (RFC 9126 §3): verified, its parameters replace the
        // body's, its `jti` used up now. An unsigned one is refused in step 4.
        var signed = false
        if let object = try parameters.value("request"), RequestObject.isSigned(object) {
            let verified = try RequestObjects(oauth: oauth).verify(object, client: client)
            if let jti = verified.jwtID {
                guard
                    try store.recordRequestObjectID(
                        clientID: client.clientID, jti: jti, expiresAt: verified.expiresAt)
                else {
                    throw OAuthError(.invalidRequestObject, hint: "The request object was already used.")
                }
            }
            parameters = verified.parameters
            signed = true
        }
        // Step 3. A DPoP proof sent with the push binds the code to its key, as `dpop_jkt`
        // would; both present must name the same key (RFC 9449 §10.1).
        let named = try parameters.value("dpop_jkt")
        if let key = try DPoPProofs.boundKey(proof: dpop, dpopJKT: named), named == nil {
            parameters = Parameters(parameters.items + [(name: "dpop_jkt", value: key)])
        }
        // Step 4. The same checks as /authorize (§2.1); any error is answered here, never redirected.
        do throws(AuthorizationFailure) {
            let hinted = parameters.contains("id_token_hint")
            _ = try AuthorizationRequest.validate(
                parameters, client: client, issuer: oauth.issuer,
                verifier: hinted ? try? oauth.verifier() : nil, resources: oauth.resources, pushed: true,
                signed: signed)
        } catch {
            var refusal = error.error
            refusal.status = 400
            throw refusal
        }
        // Step 5. Store under the digest of a fresh reference (§2.2).
        let reference = oauth.tokens.next()
        let lifetime = oauth.settings.pushedRequestLifetimeSeconds
        try store.insert(
            referenceDigest: OAuthStore.digest(reference), clientID: client.clientID,
            parameters: FormEncoding.encode(parameters.items), requestObjectSigned: signed,
            lifetimeSeconds: lifetime)
        oauth.log.info("par.pushed", ["client_id": client.clientID])
        return Pushed(
            requestURI: PushedAuthorizationRequest.requestURI(reference: reference), expiresIn: lifetime)
    }
}
