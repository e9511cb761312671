import Foundation
import OIDC

/// The server's configuration, read from one JSON file (see docs/configuration.md).
///
/// Every value here has been validated by `ConfigurationLoader`; code that receives a
/// `Configuration` never re-checks it.
struct Configuration: Sendable, Equatable {
    /// The issuer identifier: an https URL (http only for localhost), no query or fragment.
    var issuer: String
    /// Host and port to listen on.
    var listen: ListenAddress
    /// PostgreSQL connection URL; `nil` means the embedded database under `dataDirectory`.
    var databaseURL: String?
    /// Folder for the embedded database and other local state.
    var dataDirectory: String
    /// Folder with the pages' JavaScript, CSS and images.
    var publicDirectory: String
    var tls: TLSFiles?
    var http: HTTPLimits
    var database: DatabaseSettings
    /// File holding the 256-bit key that encrypts signing keys at rest (base64url or 32 raw
    /// bytes); `nil` means the environment variable, or for the embedded database a file
    /// generated beside its data.
    var keyEncryptionKeyFile: String?
    var signingKeys = SigningKeySettings()
    var clients: [ClientMetadata]
    /// The APIs (resource servers) tokens may be requested for (RFC 8707); reloaded with the
    /// clients, which they name.
    var resources: [ProtectedResource] = []
    /// Sign in with Apple and other OpenID providers, in the order of their buttons.
    var upstreamProviders: [UpstreamProvider] = []
    var sessions = SessionSettings()
    var webAuthn = WebAuthnSettings()
    var passkeys = PasskeySettings()
    var signInThrottle = SignInThrottleSettings()
    var oauth = OAuthSettings()
    var mail = MailSettings()
    var emailVerification = EmailVerificationSettings()
    var signUp = SignUpSettings()
    var recovery = RecoverySettings()
    var passwordless = PasswordlessPolicy()
    /// Where `serve` writes its process id (for `clients reload`); `nil` means
    /// `<data_dir>/auth-server.pid`.
    var pidFile: String? = nil
    var maintenance = MaintenanceSettings()
    var audit = AuditSettings()
    var metrics = MetricsSettings()

    /// Who may read `/metrics`: requests from this machine, and these addresses or CIDR
    /// blocks (the client address, after `http.trusted_proxies`).
    struct MetricsSettings: Sendable, Equatable {
        var allowedAddresses: [String] = []
    }

    /// The periodic clean-up of expired rows that `serve` runs.
    struct MaintenanceSettings: Sendable, Equatable {
        var intervalSeconds = 300
        /// The share of a pass's time spent deleting (`Maintenance.Pacing`).
        var dutyCyclePercent = Maintenance.Pacing.defaultDutyCyclePercent
    }

    /// How long security events are kept before maintenance removes them.
    struct AuditSettings: Sendable, Equatable {
        var retentionDays = 365
    }

    struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
        var host: String
        var port: Int
        var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    struct TLSFiles: Sendable, Equatable {
        var certificateFile: String
        var privateKeyFile: String
    }

    struct HTTPLimits: Sendable, Equatable {
        var maxBodyBytes = 1_048_576
        var maxConnections = 4096
        /// Open connections one client address may hold (trusted proxies are exempt).
        var maxConnectionsPerAddress = 64
        /// How long an idle keep-alive connection stays open between requests.
        var keepAliveTimeoutSeconds = 10
        var workerThreads = 0  // 0: chosen from the number of cores
        /// Reverse proxies whose `X-Forwarded-For` names the client (addresses or CIDR
        /// blocks); empty: the header is ignored and the peer is the client.
        var trustedProxies: [String] = []
    }

    /// Key rotation timing. A new key is published this long before it signs, so that every
    /// client's cached JWKS already holds it; a retired key stays published this long after
    /// its last signature, so that the tokens it signed can still be verified.
    struct SigningKeySettings: Sendable, Equatable {
        var prePublicationSeconds = 3_600
        var retentionSeconds = 86_400
    }

    /// Browser sessions: an absolute lifetime, an idle timeout after the last request, and how
    /// recent a sign-in must be to change how the account signs in.
    struct SessionSettings: Sendable, Equatable {
        var lifetimeSeconds = 30 * 86_400
        var idleTimeoutSeconds = 7 * 86_400
        /// Adding or removing a passkey and setting, changing or removing the password need a
        /// sign-in (or re-authentication) at most this many seconds old.
        var reauthenticationSeconds = 300
    }

    /// The WebAuthn relying party. Unset values are derived from the issuer: the RP ID is its
    /// host, the name is its host, and the only allowed origin is the issuer's origin.
    struct WebAuthnSettings: Sendable, Equatable {
        var rpID: String?
        var rpName: String?
        /// Extra origins (other web origins under the RP ID, `android:apk-key-hash:…`).
        var additionalOrigins: [String] = []
        /// How long a modal ceremony's challenge stays usable.
        var challengeLifetimeSeconds = 300
        /// How long the conditional upgrade's challenge stays usable after a password sign-in.
        var upgradeChallengeLifetimeSeconds = 120
        /// Origins published at `/.well-known/webauthn` (WebAuthn Level 3 related origins),
        /// which may use this RP ID for passkeys although they are on other domains.
        var relatedOrigins: [String] = []
    }

    /// What the server does with the passkeys it stores.
    struct PasskeySettings: Sendable, Equatable {
        /// A passkey sign-in whose signature counter did not grow past the stored one (a
        /// possibly cloned authenticator) is signed in with an audit event (`warn`) or refused.
        var onCounterRegression = CounterRegressionPolicy.warn
    }

    enum CounterRegressionPolicy: String, Sendable, Equatable, CaseIterable {
        case warn, refuse

        /// Whether a verified passkey assertion may still sign in; `afterCounterRegression`
        /// is the verifier's clone signal (the counter did not grow past the stored one).
        func allowsSignIn(afterCounterRegression: Bool) -> Bool {
            !afterCounterRegression || self == .warn
        }
    }

    /// Lifetimes of what the OAuth endpoints issue, and the back-channel logout retries.
    struct OAuthSettings: Sendable, Equatable {
        /// Authorization codes are single use and short-lived (RFC 9700 §4.5: under a minute).
        var authorizationCodeLifetimeSeconds = 60
        var accessTokenLifetimeSeconds = 300
        var idTokenLifetimeSeconds = 300
        /// A refresh token unused this long expires (each rotation starts a new period).
        var refreshTokenIdleSeconds = 14 * 86_400
        /// No refresh token of a family outlives this, counted from the authorization.
        var refreshTokenAbsoluteSeconds = 90 * 86_400
        /// First retry of a failed back-channel logout delivery; doubles per attempt.
        var backchannelRetryBaseSeconds = 2
        var backchannelMaxAttempts = 8
        /// How often the delivery worker looks for due deliveries.
        var backchannelPollMilliseconds = 500
        /// How long a pushed request waits for its first /authorize (RFC 9126 §2.2 `expires_in`).
        var pushedRequestLifetimeSeconds = 60
        /// Every client must push its authorization requests (RFC 9126 §5).
        var requirePushedAuthorizationRequests = false
        /// Test-only: a client's `jwks_uri` may resolve to a loopback address.
        var jwksURIAllowLoopbackForTests = false
        /// Trusted roots for fetching `jwks_uri` (PEM); nil: the system's.
        var jwksURICAFile: String?
        /// `dpop_required_for_public_clients`: every public client's token request must carry
        /// a DPoP proof (RFC 9449), so its refresh tokens are useless without the app's key.
        var dpopRequiredForPublicClients = false
        /// `dpop_nonce_required`: DPoP proofs must carry a server-provided nonce (RFC 9449 §8),
        /// which limits how far ahead a stolen device could sign proofs.
        var dpopNonceRequired = false
    }

    /// Password checks allowed per window, per account and per client address, counted in
    /// PostgreSQL so that every instance sees the same numbers. Past its limit an account's
    /// password is locked for `lockoutSeconds`, twice as long at each further lock-out up to
    /// `maxLockoutSeconds`, and short again after `lockoutDecaySeconds` without one.
    struct SignInThrottleSettings: Sendable, Equatable {
        var accountMaxFailures = 10
        var addressMaxFailures = 100
        var windowSeconds = 900
        var lockoutSeconds = 60
        var maxLockoutSeconds = 900
        var lockoutDecaySeconds = 3_600
    }

    struct DatabaseSettings: Sendable, Equatable {
        var maxConnections = 10
        var statementTimeoutMilliseconds = 5_000
    }
}

extension Configuration {
    /// The pid file `serve` writes and `clients reload` reads.
    var resolvedPIDFile: String {
        pidFile
            ?? URL(fileURLWithPath: dataDirectory, isDirectory: true)
            .appendingPathComponent("auth-server.pid").path
    }

    /// `scheme://host[:port]` of the issuer: the origin the pages are served from.
    var issuerOrigin: String {
        guard let components = URLComponents(string: issuer), let scheme = components.scheme,
            let host = components.host
        else { return issuer }
        let hostPart = host.contains(":") ? "[\(host)]" : host
        return components.port.map { "\(scheme)://\(hostPart):\($0)" } ?? "\(scheme)://\(hostPart)"
    }

    /// Whether cookies must be `Secure` and may carry the `__Host-` prefix.
    var usesHTTPS: Bool { issuer.lowercased().hasPrefix("https://") }

    var relyingPartyID: String { webAuthn.rpID ?? URLComponents(string: issuer)?.host ?? "localhost" }
    var relyingPartyName: String { webAuthn.rpName ?? relyingPartyID }
    /// The issuer, the configured extra origins, the related origins, and the
    /// `android:apk-key-hash:` origin of every Android app a client declares (what Credential
    /// Manager reports as the origin of a passkey ceremony run by that app).
    var allowedWebAuthnOrigins: Set<String> {
        Set([issuerOrigin] + webAuthn.additionalOrigins + webAuthn.relatedOrigins + androidAppOrigins)
    }

    /// `android:apk-key-hash:<base64url of the SHA-256 certificate fingerprint>` per app.
    var androidAppOrigins: [String] {
        clients.flatMap { client in
            client.androidApps.flatMap { app in
                app.sha256CertFingerprints.compactMap { AndroidFingerprint.apkKeyHashOrigin($0) }
            }
        }
    }
}

/// One OAuth client, described with the metadata names of RFC 7591 and OpenID Connect
/// Dynamic Client Registration so that an admin can copy them from any provider's docs.
struct ClientMetadata: Sendable, Equatable {
    enum ApplicationType: String, Sendable, Equatable { case web, native }
    enum AuthMethod: String, Sendable, Equatable, CaseIterable {
        case clientSecretBasic = "client_secret_basic"
        case clientSecretPost = "client_secret_post"
        case privateKeyJWT = "private_key_jwt"
        case none
    }

    var clientID: String
    var clientName: String?
    var applicationType: ApplicationType = .web
    var redirectURIs: [String]
    var postLogoutRedirectURIs: [String] = []
    var tokenEndpointAuthMethod: AuthMethod = .clientSecretBasic
    var clientSecretHash: String?
    var grantTypes: [String] = ["authorization_code"]
    var responseTypes: [String] = ["code"]
    var scope: [String] = ["openid", "profile", "email"]
    var idTokenSignedResponseAlg: String = "RS256"
    var backchannelLogoutURI: String?
    var backchannelLogoutSessionRequired = false
    /// Public keys for `private_key_jwt`, kept as the JSON text of a JWK Set.
    var jwks: String?
    var requirePKCE = true
    var firstParty = false
    /// `refresh_tokens_without_offline_access`: a confidential client gets refresh tokens
    /// without `offline_access`, valid only as long as the browser session.
    var refreshTokensWithoutOfflineAccess = false
    /// `first_party_password_step`: the authorization challenge endpoint takes a password
    /// from this first-party native app (see `OAuthClient.firstPartyPasswordStep`).
    var firstPartyPasswordStep = false
    var appleAppIDs: [String] = []
    var androidApps: [AndroidApp] = []
    /// `require_pushed_authorization_requests` (RFC 9126 §6).
    var requirePushedAuthorizationRequests = false
    /// `require_signed_request_object` (RFC 9101 §10.5).
    var requireSignedRequestObject = false
    /// `jwks_uri` (RFC 7591 §2): an https URL of the client's public keys.
    var jwksURI: String?
    /// `profile`: `standard` or `fapi2`.
    var profile = "standard"
    /// `dpop_bound_access_tokens` (RFC 9449 §5.2): token requests must carry a DPoP proof.
    var dpopBoundAccessTokens = false

    struct AndroidApp: Sendable, Equatable {
        var packageName: String
        var sha256CertFingerprints: [String]
    }

    /// A client that cannot keep a secret (RFC 6749 §2.1).
    var isPublic: Bool { tokenEndpointAuthMethod == .none }
}

/// Android signing-certificate fingerprints as Android tools print them
/// (`AB:CD:…`, 32 bytes in hex, colon separated).
enum AndroidFingerprint {
    static func bytes(_ fingerprint: String) -> [UInt8]? {
        let hex = fingerprint.replacingOccurrences(of: ":", with: "")
        guard hex.utf8.count == 64 else { return nil }
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }

    /// The WebAuthn origin of an app signed with this certificate.
    static func apkKeyHashOrigin(_ fingerprint: String) -> String? {
        guard let bytes = bytes(fingerprint) else { return nil }
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return "android:apk-key-hash:" + text
    }
}
