import Foundation
import OIDC

/// The configured clients as the protocol logic sees them, looked up by `client_id`.
struct ClientRegistry: Sendable {
    let clients: [String: OAuthClient]
    let metadata: [String: ClientMetadata]

    init(_ configured: [ClientMetadata]) {
        var clients: [String: OAuthClient] = [:]
        var metadata: [String: ClientMetadata] = [:]
        for entry in configured {
            clients[entry.clientID] = Self.client(from: entry)
            metadata[entry.clientID] = entry
        }
        self.clients = clients
        self.metadata = metadata
    }

    func client(_ id: String) -> OAuthClient? { clients[id] }

    /// Builds the protocol view of a client. The configuration loader has validated every
    /// value, so unknown names cannot occur; they would be dropped rather than trap.
    static func client(from entry: ClientMetadata) -> OAuthClient {
        let jwks = entry.jwks.flatMap { try? JSONDecoder().decode(JWKS.self, from: Data($0.utf8)) }
        return OAuthClient(
            clientID: entry.clientID,
            applicationType: entry.applicationType == .native ? .native : .web,
            redirectURIs: entry.redirectURIs, postLogoutRedirectURIs: entry.postLogoutRedirectURIs,
            tokenEndpointAuthMethod: OAuthClient.AuthMethod(rawValue: entry.tokenEndpointAuthMethod.rawValue)
                ?? .none,
            clientSecretHash: entry.clientSecretHash,
            grantTypes: Set(entry.grantTypes.compactMap(OAuthClient.GrantType.init(rawValue:))),
            scopes: Set(entry.scope),
            idTokenSignedResponseAlg: JWSAlgorithm(rawValue: entry.idTokenSignedResponseAlg) ?? .RS256,
            requirePKCE: entry.requirePKCE, firstParty: entry.firstParty, jwks: jwks,
            backchannelLogoutURI: entry.backchannelLogoutURI,
            refreshTokensWithoutOfflineAccess: entry.refreshTokensWithoutOfflineAccess,
            requirePushedAuthorizationRequests: entry.requirePushedAuthorizationRequests,
            requireSignedRequestObject: entry.requireSignedRequestObject, jwksURI: entry.jwksURI,
            profile: ClientProfile(rawValue: entry.profile) ?? .standard,
            firstPartyPasswordStep: entry.firstPartyPasswordStep,
            dpopBoundAccessTokens: entry.dpopBoundAccessTokens, appleAppIDs: entry.appleAppIDs)
    }
}
