/// A JSON Web Key Set (RFC 7517 §5), as served at `jwks_uri` and as configured for
/// verifying tokens.
public struct JWKS: Codable, Sendable, Equatable {
    public var keys: [JWK]

    public init(keys: [JWK]) { self.keys = keys }

    /// The first key with this `kid`.
    public func key(withID id: String) -> JWK? { keys.first { $0.kid == id } }

    /// The same set with every private member removed: what may be published.
    public var publicKeys: JWKS { JWKS(keys: keys.map(\.publicJWK)) }
}
