import Foundation
import OIDC

/// Reads and checks one entry of `clients`. Each rule here says why, because an admin who
/// meets the message should learn what the RFC expects.
enum ClientMetadataReader {
    static let supportedGrantTypes: Set<String> = [
        "authorization_code", "refresh_token", "client_credentials",
    ]
    static let supportedScopes: Set<String> = ["openid", "profile", "email", "offline_access"]
    static let supportedSigningAlgorithms: Set<String> = ["RS256", "PS256", "ES256", "EdDSA"]
    static let notASecretHash =
        "must be a hash from auth-server clients hash-secret ($hmac-sha256$<salt>$<mac>), never the secret itself"

    static func read(_ value: JSONValue, path: String, sink: ProblemSink) -> ClientMetadata? {
        guard let reader = ObjectReader(value, path: path, sink: sink) else { return nil }
        defer { reader.reportUnknownMembers() }

        let clientID = reader.string("client_id", required: true)
        if let clientID, !clientID.unicodeScalars.allSatisfy({ (0x21...0x7E).contains($0.value) }) {
            reader.error("client_id", "must contain only visible ASCII characters (RFC 6749 Appendix A.1)")
        }

        var applicationType = ClientMetadata.ApplicationType.web
        if let text = reader.string("application_type") {
            if let parsed = ClientMetadata.ApplicationType(rawValue: text) {
                applicationType = parsed
            } else {
                reader.error("application_type", "must be \"web\" or \"native\"")
            }
        }
        let native = applicationType == .native

        let redirectURIs = uris(reader, "redirect_uris", native: native, required: true)
        let postLogoutURIs = uris(reader, "post_logout_redirect_uris", native: native, required: false)

        let (authMethod, secretHash) = readAuthentication(reader, native: native)

        let grantTypes = readGrantTypes(reader, authMethod: authMethod, sink: sink)
        let responseTypes = readResponseTypes(reader)
        let scope = readScope(reader)

        let algorithm = reader.string("id_token_signed_response_alg") ?? "RS256"
        if !supportedSigningAlgorithms.contains(algorithm) {
            reader.error(
                "id_token_signed_response_alg",
                "must be one of \(supportedSigningAlgorithms.sorted().joined(separator: ", "))")
        }

        let backchannel = reader.string("backchannel_logout_uri")
        if let backchannel, let problem = RegisteredRedirectURI.problem(with: backchannel, native: false) {
            reader.error("backchannel_logout_uri", problem)
        }
        let backchannelSession = reader.bool("backchannel_logout_session_required") ?? false

        let jwks = readJWKS(reader, authMethod: authMethod)
        let jwksURI = readJWKSURI(reader)

        let requirePKCE = reader.bool("require_pkce") ?? true
        if !requirePKCE && (authMethod == .none || native) {
            reader.error("require_pkce", "public clients always use PKCE (RFC 9700 §2.1.1)")
        }
        let firstParty = reader.bool("first_party") ?? false
        let refreshWithoutOffline = reader.bool("refresh_tokens_without_offline_access") ?? false
        if refreshWithoutOffline && (authMethod == .none || native) {
            reader.error(
                "refresh_tokens_without_offline_access",
                "public clients get refresh tokens only with offline_access")
        }

        let passwordStep = reader.bool("first_party_password_step") ?? false
        if passwordStep && !(firstParty && native) {
            reader.error(
                "first_party_password_step",
                "is allowed only on a first_party native client: only those may use the authorization "
                    + "challenge endpoint (draft-ietf-oauth-first-party-apps §9.1)")
        }
        let dpopBound = reader.bool("dpop_bound_access_tokens") ?? false

        let (appleAppIDs, androidApps) = readAppAssociations(reader, firstParty: firstParty, sink: sink)
        let requirePushed = reader.bool("require_pushed_authorization_requests") ?? false
        let requireSigned = reader.bool("require_signed_request_object") ?? false
        let profile = reader.string("profile") ?? "standard"
        if ClientProfile(rawValue: profile) == nil {
            reader.error(
                "profile", "must be one of \(ClientProfile.allCases.map(\.rawValue).joined(separator: ", "))")
        } else if profile == ClientProfile.fapi2.rawValue {
            for problem in FAPI2Profile.configurationProblems(
                authMethod: authMethod.rawValue, applicationType: applicationType.rawValue,
                grantTypes: grantTypes,
                requirePKCE: requirePKCE)
            {
                reader.error(problem.key, problem.message)
            }
        }

        let clientName = reader.string("client_name")
        for informational in ["client_uri", "logo_uri", "policy_uri", "tos_uri"] {
            _ = reader.string(informational)
        }
        _ = reader.strings("contacts")

        guard let clientID, let redirectURIs else { return nil }
        var metadata = ClientMetadata(
            clientID: clientID, clientName: clientName, applicationType: applicationType,
            redirectURIs: redirectURIs, postLogoutRedirectURIs: postLogoutURIs ?? [],
            tokenEndpointAuthMethod: authMethod, clientSecretHash: secretHash, grantTypes: grantTypes,
            responseTypes: responseTypes, scope: scope, idTokenSignedResponseAlg: algorithm,
            backchannelLogoutURI: backchannel, backchannelLogoutSessionRequired: backchannelSession,
            jwks: jwks,
            requirePKCE: requirePKCE, firstParty: firstParty,
            refreshTokensWithoutOfflineAccess: refreshWithoutOffline, appleAppIDs: appleAppIDs,
            androidApps: androidApps, requirePushedAuthorizationRequests: requirePushed,
            requireSignedRequestObject: requireSigned, jwksURI: jwksURI, profile: profile,
            dpopBoundAccessTokens: dpopBound)
        metadata.firstPartyPasswordStep = passwordStep
        return metadata
    }

    /// `token_endpoint_auth_method` and `client_secret_hash`: a native app cannot keep a secret, and only a hash is stored.
    private static func readAuthentication(_ reader: ObjectReader, native: Bool) -> (
        ClientMetadata.AuthMethod, String?
    ) {
        var authMethod: ClientMetadata.AuthMethod = native ? .none : .clientSecretBasic
        if let text = reader.string("token_endpoint_auth_method") {
            if let parsed = ClientMetadata.AuthMethod(rawValue: text) {
                authMethod = parsed
            } else {
                reader.error(
                    "token_endpoint_auth_method",
                    "must be one of \(ClientMetadata.AuthMethod.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
        }
        if native && authMethod != .none {
            reader.error(
                "token_endpoint_auth_method",
                "a native app cannot keep a secret, so it must be \"none\" (RFC 8252 §8.5)")
        }

        if reader.value("client_secret") != nil {
            reader.error(
                "client_secret", "store only a hash: use client_secret_hash (auth-server clients hash-secret)"
            )
        }
        let secretHash = reader.string("client_secret_hash")
        let needsSecret = authMethod == .clientSecretBasic || authMethod == .clientSecretPost
        if needsSecret && secretHash == nil && !reader.has("client_secret") {
            reader.error("client_secret_hash", "is required for \(authMethod.rawValue)")
        } else if !needsSecret && secretHash != nil {
            reader.error("client_secret_hash", "is only used with client_secret_basic or client_secret_post")
        } else if let secretHash, !ClientSecret.isWellFormed(secretHash) {
            reader.error("client_secret_hash", Self.notASecretHash)
        }
        return (authMethod, secretHash)
    }

    /// `grant_types`: no implicit or password grant; client_credentials only for a client that authenticates.
    private static func readGrantTypes(
        _ reader: ObjectReader, authMethod: ClientMetadata.AuthMethod, sink: ProblemSink
    ) -> [String] {
        let grantTypes = reader.strings("grant_types") ?? ["authorization_code"]
        for (index, grant) in grantTypes.enumerated() where !supportedGrantTypes.contains(grant) {
            let why =
                grant == "implicit" || grant == "password"
                ? "is not supported: OAuth 2.1 and RFC 9700 retire it; use authorization_code with PKCE"
                : "is not supported (supported: \(supportedGrantTypes.sorted().joined(separator: ", ")))"
            sink.error("\(reader.memberPath("grant_types"))[\(index)]", "\"\(grant)\" \(why)")
        }
        if grantTypes.contains("client_credentials") && authMethod == .none {
            reader.error(
                "grant_types", "client_credentials needs a confidential client (a client that authenticates)")
        }
        return grantTypes
    }

    /// `response_types`: the authorization code flow only.
    private static func readResponseTypes(_ reader: ObjectReader) -> [String] {
        let responseTypes = reader.strings("response_types") ?? ["code"]
        if responseTypes != ["code"] {
            reader.error(
                "response_types", "must be [\"code\"]: only the authorization code flow is supported")
        }
        return responseTypes
    }

    /// `scope`: the scopes the client may ask for, each one this server knows.
    private static func readScope(_ reader: ObjectReader) -> [String] {
        var scope = ["openid", "profile", "email"]
        if let text = reader.string("scope") {
            scope = text.split(separator: " ").map(String.init)
            for item in scope where !supportedScopes.contains(item) {
                reader.error(
                    "scope",
                    "\"\(item)\" is not a supported scope (\(supportedScopes.sorted().joined(separator: " ")))"
                )
            }
        }
        return scope
    }

    /// `jwks` (RFC 7517 §5), required for private_key_jwt unless `jwks_uri` is given.
    private static func readJWKS(_ reader: ObjectReader, authMethod: ClientMetadata.AuthMethod) -> String? {
        var jwks: String?
        if let value = reader.value("jwks") {
            if case .object(let members) = value, case .array = members["keys"] {
                jwks = String(decoding: JSONBody.encode(value), as: UTF8.self)
            } else {
                reader.error("jwks", "must be a JWK Set: an object with a \"keys\" array (RFC 7517 §5)")
            }
        }
        if authMethod == .privateKeyJWT && jwks == nil && !reader.has("jwks_uri") {
            reader.error("jwks", "is required for private_key_jwt (or jwks_uri)")
        }
        return jwks
    }

    /// `jwks_uri` (RFC 7591 §2): an https URL, and not together with `jwks` (one source of keys).
    private static func readJWKSURI(_ reader: ObjectReader) -> String? {
        guard let uri = reader.string("jwks_uri") else { return nil }
        guard let components = URLComponents(string: uri), components.scheme == "https",
            components.host?.isEmpty == false, components.fragment == nil, components.user == nil
        else {
            reader.error("jwks_uri", "must be an https URL without fragment or user information")
            return nil
        }
        if reader.has("jwks") {
            reader.error(
                "jwks_uri", "cannot be combined with jwks: give the client's keys one way (RFC 7591 §2)")
        }
        return uri
    }

    /// `apple_app_ids` and `android_apps`, allowed only on a first-party client.
    private static func readAppAssociations(_ reader: ObjectReader, firstParty: Bool, sink: ProblemSink)
        -> ([String], [ClientMetadata.AndroidApp])
    {
        let appleAppIDs = reader.strings("apple_app_ids") ?? []
        for (index, id) in appleAppIDs.enumerated() where !isAppleAppID(id) {
            sink.error(
                "\(reader.memberPath("apple_app_ids"))[\(index)]",
                "must be TEAMID.bundle.id, like ABCDE12345.com.example.app")
        }
        let androidApps = readAndroidApps(reader, sink: sink)
        if !firstParty {
            // Both grant the app everything the site's own pages can do: a passkey assertion
            // it runs for this RP ID ends in a full browser session.
            if !appleAppIDs.isEmpty {
                reader.error(
                    "apple_app_ids",
                    "is allowed only on a first_party client: each app is published as webcredentials, "
                        + "so it shares this site's saved passwords and can sign in with its passkeys (full trust)"
                )
            }
            if !androidApps.isEmpty {
                reader.error(
                    "android_apps",
                    "is allowed only on a first_party client: each app becomes an allowed passkey origin, "
                        + "so it can sign in as any user of this server and get a full session (full trust)")
            }
        }
        return (appleAppIDs, androidApps)
    }

    private static func uris(_ reader: ObjectReader, _ key: String, native: Bool, required: Bool) -> [String]?
    {
        guard let list = reader.strings(key, required: required) else { return nil }
        if required && list.isEmpty { reader.error(key, "must list at least one URI") }
        for (index, uri) in list.enumerated() {
            if let problem = RegisteredRedirectURI.problem(with: uri, native: native) {
                reader.error("\(key)[\(index)]", problem)
            }
        }
        return list
    }

    private static func isAppleAppID(_ id: String) -> Bool {
        let parts = id.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, parts[0].count == 10,
            parts[0].allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) })
        else { return false }
        return parts[1].contains(".")
            && parts[1].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }
    }

    private static func readAndroidApps(_ reader: ObjectReader, sink: ProblemSink) -> [ClientMetadata
        .AndroidApp]
    {
        guard let value = reader.value("android_apps") else { return [] }
        guard case .array(let items) = value else {
            reader.error("android_apps", "must be an array of objects, found \(value.typeName)")
            return []
        }
        var apps: [ClientMetadata.AndroidApp] = []
        for (index, item) in items.enumerated() {
            guard
                let app = ObjectReader(
                    item, path: "\(reader.memberPath("android_apps"))[\(index)]", sink: sink)
            else { continue }
            let name = app.string("package_name", required: true)
            let fingerprints = app.strings("sha256_cert_fingerprints", required: true) ?? []
            for (i, fingerprint) in fingerprints.enumerated() where !isSHA256Fingerprint(fingerprint) {
                sink.error(
                    "\(app.memberPath("sha256_cert_fingerprints"))[\(i)]",
                    "must be 32 bytes in hex separated by colons, like 14:6D:E9:…")
            }
            app.reportUnknownMembers()
            if let name { apps.append(.init(packageName: name, sha256CertFingerprints: fingerprints)) }
        }
        return apps
    }

    private static func isSHA256Fingerprint(_ text: String) -> Bool {
        let bytes = text.split(separator: ":", omittingEmptySubsequences: false)
        return bytes.count == 32 && bytes.allSatisfy { $0.count == 2 && $0.allSatisfy(\.isHexDigit) }
    }
}
