import Foundation
import OIDC

/// `resources`: the APIs (resource servers) that accept this server's access tokens. Read
/// after `clients`, since each API names the clients allowed to request it.
enum ResourcesConfigurationReader {
    /// Scope names that belong to OpenID Connect and can never be an API's.
    static let reservedScopes: Set<String> = Set(Scopes.supported)

    static func read(_ root: ObjectReader, clients: [ClientMetadata], sink: ProblemSink)
        -> [ProtectedResource]
    {
        guard let value = root.value("resources") else { return [] }
        guard case .array(let items) = value else {
            root.error("resources", "must be an array of API objects, found \(value.typeName)")
            return []
        }
        let clientIDs = Set(clients.map(\.clientID))
        var resources: [ProtectedResource] = []
        var identifiers: Set<String> = []
        var scopeOwners: [String: String] = [:]
        var introspectionIDs: Set<String> = []
        for (index, item) in items.enumerated() {
            let path = "$.resources[\(index)]"
            guard let reader = ObjectReader(item, path: path, sink: sink) else { continue }
            guard let resource = readResource(reader, clientIDs: clientIDs) else {
                reader.reportUnknownMembers()
                continue
            }
            reader.reportUnknownMembers()
            if !identifiers.insert(resource.identifier).inserted {
                reader.error("identifier", "duplicates an earlier identifier \"\(resource.identifier)\"")
            }
            for scope in resource.scopeNames {
                if let owner = scopeOwners[scope] {
                    reader.error("scopes", "\"\(scope)\" is already a scope of \(owner)")
                } else {
                    scopeOwners[scope] = resource.identifier
                }
            }
            if let id = resource.introspection?.clientID, !introspectionIDs.insert(id).inserted {
                reader.error("introspection", "client_id \"\(id)\" is already used by another API")
            }
            resources.append(resource)
        }
        return resources
    }

    private static func readResource(_ reader: ObjectReader, clientIDs: Set<String>) -> ProtectedResource? {
        let identifier = reader.string("identifier", required: true)
        if let identifier, !ProtectedResource.isValidIndicator(identifier) {
            reader.error("identifier", "must be an absolute URI without a fragment (RFC 8707 §2)")
        }
        let name = reader.string("name", required: true)
        let scopes = readScopes(reader)
        let (format, lifetime) = readAccessToken(reader)
        let allowed = reader.strings("allowed_clients") ?? []
        for (index, id) in allowed.enumerated() where !clientIDs.contains(id) {
            reader.error("allowed_clients[\(index)]", "\"\(id)\" is not a configured client_id")
        }
        var claims: [ProtectedResource.TokenClaim] = []
        for (index, text) in (reader.strings("token_claims") ?? []).enumerated() {
            if let claim = ProtectedResource.TokenClaim(rawValue: text) {
                if !claims.contains(claim) { claims.append(claim) }
            } else {
                reader.error(
                    "token_claims[\(index)]",
                    "must be one of \(ProtectedResource.TokenClaim.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
        }
        let introspection = readIntrospection(reader, clientIDs: clientIDs)
        guard let identifier, let name else { return nil }
        return ProtectedResource(
            identifier: identifier, name: name, scopes: scopes, tokenFormat: format,
            tokenLifetimeSeconds: lifetime,
            allowedClients: Set(allowed), tokenClaims: claims, introspection: introspection)
    }

    /// `scopes`: `{ "name", "description", "description_ja" }` each; names are RFC 6749 §3.3
    /// scope tokens and never one of OpenID Connect's.
    private static func readScopes(_ reader: ObjectReader) -> [ProtectedResource.Scope] {
        guard let value = reader.value("scopes") else { return [] }
        guard case .array(let items) = value else {
            reader.error("scopes", "must be an array of scope objects, found \(value.typeName)")
            return []
        }
        var scopes: [ProtectedResource.Scope] = []
        for (index, item) in items.enumerated() {
            guard
                let scope = ObjectReader(
                    item, path: reader.memberPath("scopes[\(index)]"), sink: sink(of: reader))
            else { continue }
            let name = scope.string("name", required: true)
            let description = scope.string("description", required: true)
            let descriptionJa = scope.string("description_ja") ?? description
            scope.reportUnknownMembers()
            guard let name, let description, let descriptionJa else { continue }
            // RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
            guard
                name.unicodeScalars.allSatisfy({
                    $0.value == 0x21 || (0x23...0x5B).contains($0.value) || (0x5D...0x7E).contains($0.value)
                })
            else {
                scope.error("name", "must be a scope token (printable ASCII without space, \" or \\)")
                continue
            }
            if reservedScopes.contains(name) {
                scope.error("name", "\"\(name)\" is an OpenID Connect scope and cannot belong to an API")
                continue
            }
            scopes.append(.init(name: name, description: description, descriptionJa: descriptionJa))
        }
        return scopes
    }

    /// `access_token`: `{ "format": "jwt" | "opaque", "lifetime_seconds": N }`.
    private static func readAccessToken(_ reader: ObjectReader) -> (ProtectedResource.TokenFormat, Int) {
        var format = ProtectedResource.TokenFormat.jwt
        var lifetime = 600
        guard let value = reader.value("access_token") else { return (format, lifetime) }
        guard let token = ObjectReader(value, path: reader.memberPath("access_token"), sink: sink(of: reader))
        else { return (format, lifetime) }
        if let text = token.string("format") {
            if let parsed = ProtectedResource.TokenFormat(rawValue: text) {
                format = parsed
            } else {
                token.error("format", "must be \"jwt\" or \"opaque\"")
            }
        }
        lifetime = token.integer("lifetime_seconds", in: 10...86_400) ?? lifetime
        token.reportUnknownMembers()
        return (format, lifetime)
    }

    /// `introspection`: `{ "client_id", "client_secret_hash" }`, the API's own credentials.
    private static func readIntrospection(_ reader: ObjectReader, clientIDs: Set<String>)
        -> ProtectedResource.IntrospectionCredentials?
    {
        guard let value = reader.value("introspection") else { return nil }
        guard
            let object = ObjectReader(value, path: reader.memberPath("introspection"), sink: sink(of: reader))
        else { return nil }
        let id = object.string("client_id", required: true)
        if object.value("client_secret") != nil {
            object.error(
                "client_secret", "store only a hash: use client_secret_hash (auth-server clients hash-secret)"
            )
        }
        let hash = object.string("client_secret_hash", required: true)
        object.reportUnknownMembers()
        if let id, clientIDs.contains(id) {
            object.error("client_id", "\"\(id)\" is a client's id; an API needs an id of its own")
        }
        if let hash, !ClientSecret.isWellFormed(hash) {
            object.error("client_secret_hash", ClientMetadataReader.notASecretHash)
        }
        guard let id, let hash else { return nil }
        return .init(clientID: id, clientSecretHash: hash)
    }

    private static func sink(of reader: ObjectReader) -> ProblemSink { reader.sink }
}
