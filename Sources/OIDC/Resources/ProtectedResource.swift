import Foundation

/// An API (resource server) that accepts this provider's access tokens, as configured under
/// `resources`. Its identifier is the RFC 8707 resource indicator clients name with
/// `resource=` and the `aud` of the access tokens issued for it (RFC 9068 §3).
public struct ProtectedResource: Sendable, Equatable {
    /// A scope the API defines, with the sentences the consent page shows for it.
    public struct Scope: Sendable, Equatable {
        public var name: String
        public var description: String
        public var descriptionJa: String

        public init(name: String, description: String, descriptionJa: String) {
            self.name = name
            self.description = description
            self.descriptionJa = descriptionJa
        }
    }

    /// How the API's access tokens are written: a JWT it validates itself (RFC 9068), or an
    /// opaque random value it must introspect (RFC 7662), which is revocable at once.
    public enum TokenFormat: String, Sendable, Equatable, CaseIterable {
        case jwt
        case opaque
    }

    /// Account attributes an API may receive as access-token claims.
    public enum TokenClaim: String, Sendable, Equatable, CaseIterable {
        case roles
        case groups
    }

    /// The API's own credentials at the introspection endpoint (RFC 7662 §2.1). The id lives
    /// in the same namespace as client ids, so the two never collide.
    public struct IntrospectionCredentials: Sendable, Equatable {
        public var clientID: String
        /// `ClientSecret` hash, as for clients.
        public var clientSecretHash: String

        public init(clientID: String, clientSecretHash: String) {
            self.clientID = clientID
            self.clientSecretHash = clientSecretHash
        }
    }

    public var identifier: String
    public var name: String
    public var scopes: [Scope]
    public var tokenFormat: TokenFormat
    public var tokenLifetimeSeconds: Int
    public var allowedClients: Set<String>
    public var tokenClaims: [TokenClaim]
    public var introspection: IntrospectionCredentials?

    public init(
        identifier: String, name: String, scopes: [Scope] = [], tokenFormat: TokenFormat = .jwt,
        tokenLifetimeSeconds: Int = 600, allowedClients: Set<String> = [], tokenClaims: [TokenClaim] = [],
        introspection: IntrospectionCredentials? = nil
    ) {
        self.identifier = identifier
        self.name = name
        self.scopes = scopes
        self.tokenFormat = tokenFormat
        self.tokenLifetimeSeconds = tokenLifetimeSeconds
        self.allowedClients = allowedClients
        self.tokenClaims = tokenClaims
        self.introspection = introspection
    }

    public var scopeNames: [String] { scopes.map(\.name) }

    public func allows(_ clientID: String) -> Bool { allowedClients.contains(clientID) }

    /// RFC 8707 §2: "an absolute URI … MUST NOT include a fragment component". Absolute means
    /// a scheme (RFC 3986 §3.1: a letter, then letters, digits, `+ - .`) and a colon; the
    /// check stays syntactic, as the value is only ever compared with configured identifiers.
    public static func isValidIndicator(_ value: String) -> Bool {
        guard !value.contains("#"), let colon = value.firstIndex(of: ":"), colon != value.startIndex,
            value.index(after: colon) != value.endIndex
        else { return false }
        let scheme = value[..<colon].unicodeScalars
        guard let first = scheme.first, first.isASCII, CharacterSet.letters.contains(first) else {
            return false
        }
        return scheme.allSatisfy {
            $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "+-.".unicodeScalars.contains($0))
        } && !value.unicodeScalars.contains { $0 == " " || $0.value < 0x21 || $0.value == 0x7F }
    }
}
