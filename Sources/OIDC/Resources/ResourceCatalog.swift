import Foundation

/// The configured APIs and the rules for asking tokens for them (RFC 8707, RFC 9068).
///
/// How API scopes relate to `resource`: an API scope names its API implicitly, as a
/// Keycloak client scope with an audience mapper or an Auth0 permission does, so
/// `scope=orders:read` alone yields a token for the orders API; `resource=` may name an API
/// explicitly as well (RFC 8707 §2), also one whose scopes are not asked for. The grant
/// records every API named either way. Each access token is for one audience: RFC 8707 §2
/// and RFC 9068 §3 recommend narrowing tokens to one resource, so at the token endpoint
/// `resource=` picks one API of the grant, and without it a grant of exactly one API yields
/// that API's token. This server's own identifier (the issuer) is a resource too, always
/// within a grant: `resource=<issuer>` asks for a token for its own endpoints (userinfo).
public struct ResourceCatalog: Sendable, Equatable {
    public let resources: [ProtectedResource]
    /// This server's issuer identifier, the audience of tokens for its own endpoints.
    public let issuer: String?

    public init(_ resources: [ProtectedResource], issuer: String? = nil) {
        self.resources = resources
        self.issuer = issuer
    }

    public static let empty = ResourceCatalog([])

    public func resource(_ identifier: String) -> ProtectedResource? {
        resources.first { $0.identifier == identifier }
    }

    /// The API that defines `scope`, if any (scope names are unique across APIs).
    public func resource(owning scope: String) -> ProtectedResource? {
        resources.first { $0.scopeNames.contains(scope) }
    }

    /// The API whose introspection credentials use `clientID`.
    public func resource(introspectionClientID clientID: String) -> ProtectedResource? {
        resources.first { $0.introspection?.clientID == clientID }
    }

    /// Whether `scope` belongs to some API.
    public func isAPIScope(_ scope: String) -> Bool { resource(owning: scope) != nil }

    /// What an authorization or client-credentials request asks of the APIs.
    public struct Selection: Sendable, Equatable {
        /// The APIs named by `resource` or by one of their scopes, in request order.
        public var resources: [String]
        /// The requested API scopes, each allowed for the client, in request order.
        public var apiScopes: [String]
        /// The other requested scopes, for the usual narrowing (`Scopes.narrow`).
        public var otherScopes: [String]
    }

    /// Checks the `resource` values and API scopes of a request (RFC 8707 §2, RFC 6749 §3.3):
    /// 1. Each `resource` is an absolute URI without a fragment, else `invalid_target`.
    /// 2. It is a configured API, else `invalid_target`.
    /// 3. The client may use it, else `invalid_target`.
    /// 4. An API scope of an API the client may not use is refused with `invalid_scope`
    ///    (unlike an unknown scope, which is narrowed away: the client asked for something
    ///    that exists and it must learn that it is not allowed).
    public func select(resources requested: [String], scopes: [String], clientID: String) throws(OAuthError)
        -> Selection
    {
        var selection = Selection(resources: [], apiScopes: [], otherScopes: [])
        for value in requested {
            // Steps 1 to 3.
            guard ProtectedResource.isValidIndicator(value) else {
                throw OAuthError(
                    .invalidTarget, hint: "A 'resource' must be an absolute URI without a fragment.")
            }
            // This server: always available, nothing to record.
            if value == issuer { continue }
            guard let api = resource(value) else {
                throw OAuthError(.invalidTarget, hint: "The 'resource' is not a known API.")
            }
            guard api.allows(clientID) else {
                throw OAuthError(.invalidTarget, hint: "The client may not request the 'resource'.")
            }
            if !selection.resources.contains(value) { selection.resources.append(value) }
        }
        for scope in scopes {
            // Step 4.
            guard let api = resource(owning: scope) else {
                if !selection.otherScopes.contains(scope) { selection.otherScopes.append(scope) }
                continue
            }
            guard api.allows(clientID) else {
                throw OAuthError(.invalidScope, hint: "A requested API scope is not allowed for this client.")
            }
            if !selection.apiScopes.contains(scope) { selection.apiScopes.append(scope) }
            if !selection.resources.contains(api.identifier) { selection.resources.append(api.identifier) }
        }
        return selection
    }

    /// The API a token-endpoint request is for (RFC 8707 §2.2): the one `resource` named,
    /// which must be within the grant, or the grant's only API, or none (a token for this
    /// server's own endpoints, as without APIs).
    /// - Parameters:
    ///   - requested: the request's `resource` values; at most one, as a token has one audience.
    ///   - granted: the APIs the grant covers.
    public func target(requested: [String], granted: [String], clientID: String) throws(OAuthError)
        -> ProtectedResource?
    {
        guard requested.count <= 1 else {
            throw OAuthError(.invalidTarget, hint: "Name one 'resource' per token request.")
        }
        let identifier: String
        if let value = requested.first {
            guard ProtectedResource.isValidIndicator(value) else {
                throw OAuthError(
                    .invalidTarget, hint: "A 'resource' must be an absolute URI without a fragment.")
            }
            if value == issuer { return nil }
            guard granted.contains(value) else {
                throw OAuthError(.invalidTarget, hint: "The 'resource' is not within the grant.")
            }
            identifier = value
        } else if granted.count == 1, let only = granted.first {
            identifier = only
        } else {
            return nil
        }
        // The configuration may have changed since the grant: the API must still exist and
        // still allow the client.
        guard let api = resource(identifier), api.allows(clientID) else {
            throw OAuthError(.invalidTarget, hint: "The 'resource' is no longer available to this client.")
        }
        return api
    }

    /// The scopes an access token carries: for an API, the granted scopes it defines; for
    /// this server, the granted scopes no API defines.
    public func tokenScopes(granted: [String], for api: ProtectedResource?) -> [String] {
        guard let api else { return granted.filter { !isAPIScope($0) } }
        let names = Set(api.scopeNames)
        return granted.filter(names.contains)
    }
}
