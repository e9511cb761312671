import Crypto
import Foundation
import OIDC
import Postgres
import Synchronization

/// The signing keys of this issuer, shared by every instance through PostgreSQL.
///
/// A key is published in JWKS from the moment it is created, signs from `activates_at`
/// until `retires_at`, and stays published until `expires_at`. Every instance reloads the
/// ring at least every `refreshInterval`, and since a rotation's pre-publication is far
/// longer than that, all instances switch to a new key at the same instant without a restart.
final class SigningKeyRing: Sendable {
    struct Key: Sendable {
        var kid: String
        var algorithm: JWSAlgorithm
        var publicJWK: JWK
        var createdAt: Date
        var activatesAt: Date
        var retiresAt: Date?
        var expiresAt: Date?
        var signer: JWSSigner

        func isSigning(at now: Date) -> Bool { activatesAt <= now && (retiresAt.map { now < $0 } ?? true) }
        func isPublished(at now: Date) -> Bool { expiresAt.map { now < $0 } ?? true }

        func state(at now: Date) -> String {
            if !isPublished(at: now) { return "expired" }
            if now < activatesAt { return "next" }
            return isSigning(at: now) ? "active" : "retired"
        }
    }

    enum KeyRingError: Error, CustomStringConvertible {
        case cannotDecrypt(kid: String)
        case noActiveKey(JWSAlgorithm)
        case corrupt(kid: String)

        var description: String {
            switch self {
            case .cannotDecrypt(let kid):
                "the key-encryption key does not open signing key \(kid): it is not the key these signing keys were stored with"
            case .noActiveKey(let algorithm): "no active \(algorithm.rawValue) signing key"
            case .corrupt(let kid): "signing key \(kid) is stored in an unreadable form"
            }
        }
    }

    /// The algorithms every issuer starts with: RS256 (required by OpenID Connect) and ES256.
    static let initialAlgorithms: [JWSAlgorithm] = [.RS256, .ES256]

    private let pool: PostgresPool
    private let keyEncryptionKey: SymmetricKey
    private let settings: Configuration.SigningKeySettings
    private let now: @Sendable () -> Date
    private let refreshInterval: TimeInterval
    private let cache = Mutex<(keys: [Key], loadedAt: Date)?>(nil)

    init(
        pool: PostgresPool, keyEncryptionKey: SymmetricKey, settings: Configuration.SigningKeySettings,
        refreshInterval: TimeInterval = 60, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.pool = pool
        self.keyEncryptionKey = keyEncryptionKey
        self.settings = settings
        self.refreshInterval = refreshInterval
        self.now = now
    }

    // MARK: - Reading

    /// The signer to use now for `algorithm`. A miss reads the database again before it
    /// fails: another instance may have just created the key (a clients reload).
    func signer(for algorithm: JWSAlgorithm) throws -> JWSSigner {
        func current() throws -> JWSSigner? {
            let at = now()
            return try keys().filter({ $0.algorithm == algorithm && $0.isSigning(at: at) })
                .max(by: { $0.activatesAt < $1.activatesAt })?.signer
        }
        if let signer = try current() { return signer }
        invalidate()
        guard let signer = try current() else { throw KeyRingError.noActiveKey(algorithm) }
        return signer
    }

    /// The key of the DPoP nonces (RFC 9449 §8): derived from the key-encryption key, which
    /// every instance of one issuer shares, so any instance accepts another's nonce.
    var dpopNonceKey: SymmetricKey {
        SymmetricKey(
            bytes: HMAC.authenticationCode(
                for: Array("auth-server dpop-nonce v1".utf8), using: keyEncryptionKey
            ).bytes)
    }

    /// The key that derives an upstream sign-in's nonce and PKCE verifier from its state, so
    /// that neither is stored: derived from the key-encryption key like `dpopNonceKey`.
    var upstreamStateKey: SymmetricKey {
        SymmetricKey(
            bytes: HMAC.authenticationCode(
                for: Array("auth-server upstream-state v1".utf8), using: keyEncryptionKey
            ).bytes)
    }

    /// An upstream provider's refresh token sealed for `upstream_identities` (AES-256-GCM under
    /// the key-encryption key, bound to the identity's id): kept only to revoke it later.
    func sealUpstreamToken(_ token: String, identityID: UUID) throws -> [UInt8] {
        try AES.GCM.seal(
            Array(token.utf8), using: keyEncryptionKey, authenticating: Array(identityID.lowercased.utf8)
        )
        .combined
    }

    func openUpstreamToken(_ sealed: [UInt8], identityID: UUID) throws -> String {
        let box = try AES.GCM.SealedBox(combined: sealed)
        let plain = try AES.GCM.open(
            box, using: keyEncryptionKey, authenticating: Array(identityID.lowercased.utf8))
        return String(decoding: plain, as: UTF8.self)
    }

    /// The public keys to publish now: active, next and recently retired ones.
    func publishedJWKS() throws -> JWKS {
        let at = now()
        return JWKS(keys: try keys().filter { $0.isPublished(at: at) }.map(\.publicJWK))
    }

    /// Every key, newest first, whatever its state.
    func allKeys() throws -> [Key] { try load().sorted { $0.createdAt > $1.createdAt } }

    /// The cached keys, reloaded when older than the refresh interval.
    func keys() throws -> [Key] {
        let at = now()
        if let cached = cache.withLock({ $0 }), at.timeIntervalSince(cached.loadedAt) < refreshInterval,
            at >= cached.loadedAt
        {
            return cached.keys
        }
        let keys = try load()
        cache.withLock { $0 = (keys, at) }
        return keys
    }

    /// Forgets the cache, so that the next read sees the database.
    func invalidate() { cache.withLock { $0 = nil } }

    private func load() throws -> [Key] {
        let rows = try pool.query(
            """
            SELECT kid, algorithm, public_jwk, sealed_private_key, created_at, activates_at, retires_at, expires_at
            FROM signing_keys ORDER BY activates_at
            """)
        return try rows.map { row in
            let kid: String = try row.decode("kid")
            guard let algorithm = JWSAlgorithm(rawValue: try row.decode("algorithm")),
                let publicJWK = try? JSONDecoder().decode(
                    JWK.self, from: Data((try row.decode("public_jwk", as: String.self)).utf8))
            else { throw KeyRingError.corrupt(kid: kid) }
            let sealed: [UInt8] = try row.decode("sealed_private_key")
            let signer = try openSigner(kid: kid, algorithm: algorithm, sealed: sealed)
            return Key(
                kid: kid, algorithm: algorithm, publicJWK: publicJWK, createdAt: try row.decode("created_at"),
                activatesAt: try row.decode("activates_at"), retiresAt: try row.decode("retires_at"),
                expiresAt: try row.decode("expires_at"), signer: signer)
        }
    }

    private func openSigner(kid: String, algorithm: JWSAlgorithm, sealed: [UInt8]) throws -> JWSSigner {
        let plaintext: [UInt8]
        do {
            plaintext = try AES.GCM.open(
                AES.GCM.SealedBox(combined: sealed), using: keyEncryptionKey, authenticating: Array(kid.utf8))
        } catch {
            throw KeyRingError.cannotDecrypt(kid: kid)
        }
        guard let jwk = try? JSONDecoder().decode(JWK.self, from: Data(plaintext)),
            let privateKey = try? jwk.privateKey(),
            let signer = try? JWSSigner(privateKey: privateKey, algorithm: algorithm, keyID: kid)
        else { throw KeyRingError.corrupt(kid: kid) }
        return signer
    }

    // MARK: - Writing

    /// The algorithms that need a signing key: the initial ones, and every
    /// `id_token_signed_response_alg` a client names.
    static func algorithms(for clients: [ClientMetadata]) -> [JWSAlgorithm] {
        var algorithms = initialAlgorithms
        for name in clients.map(\.idTokenSignedResponseAlg) {
            if let algorithm = JWSAlgorithm(rawValue: name), !algorithms.contains(algorithm) {
                algorithms.append(algorithm)
            }
        }
        return algorithms
    }

    /// Creates a key, active at once, for each of `algorithms` that has no key signing now:
    /// on a new database, and for a client whose `id_token_signed_response_alg` has none yet
    /// (`serve` start-up and clients reload), so that no token request fails for want of a
    /// key. Safe when several instances start together: an advisory lock serialises them and
    /// only the first one creates anything. Returns the new keys' ids.
    @discardableResult
    func ensureSigningKeys(for algorithms: [JWSAlgorithm] = SigningKeyRing.initialAlgorithms) throws
        -> [String]
    {
        let at = now()
        let created = try pool.withTransaction { connection -> [String] in
            try connection.query("SELECT pg_advisory_xact_lock(\(Self.advisoryLockKey))")
            var created: [String] = []
            for algorithm in algorithms {
                let signing = try connection.query(
                    """
                    SELECT count(*) AS n FROM signing_keys
                    WHERE algorithm = \(algorithm.rawValue) AND activates_at <= \(at)
                      AND (retires_at IS NULL OR retires_at > \(at))
                    """)
                guard try signing.first?.decode("n", as: Int.self) == 0 else { continue }
                created.append(try insertKey(algorithm, activatesAt: at, on: connection))
            }
            return created
        }
        invalidate()
        return created
    }

    /// Adds a new key for each algorithm, published now and signing after the pre-publication
    /// period; the keys it replaces retire at that moment and stay published for the retention period.
    func rotate(_ algorithms: [JWSAlgorithm]? = nil) throws -> [Key] {
        let at = now()
        let activatesAt = at.addingTimeInterval(TimeInterval(settings.prePublicationSeconds))
        let expiresAt = activatesAt.addingTimeInterval(TimeInterval(settings.retentionSeconds))
        let kids = try pool.withTransaction { connection -> [String] in
            try connection.query("SELECT pg_advisory_xact_lock(\(Self.advisoryLockKey))")
            var targets = algorithms ?? []
            if algorithms == nil {
                let rows = try connection.query(
                    "SELECT DISTINCT algorithm FROM signing_keys ORDER BY algorithm")
                targets = try rows.compactMap { JWSAlgorithm(rawValue: try $0.decode("algorithm")) }
                if targets.isEmpty { targets = Self.initialAlgorithms }
            }
            var kids: [String] = []
            for algorithm in targets {
                try connection.execute(
                    """
                    UPDATE signing_keys SET retires_at = \(activatesAt), expires_at = \(expiresAt)
                    WHERE algorithm = \(algorithm.rawValue) AND retires_at IS NULL
                    """)
                kids.append(try insertKey(algorithm, activatesAt: activatesAt, on: connection))
            }
            return kids
        }
        invalidate()
        return try allKeys().filter { kids.contains($0.kid) }
    }

    private func insertKey(_ algorithm: JWSAlgorithm, activatesAt: Date, on connection: PostgresConnection)
        throws
        -> String
    {
        let privateKey: SigningPrivateKey
        switch algorithm {
        case .RS256, .PS256: privateKey = .rsa(try RSA.Signing.PrivateKey(keySize: 2048))
        case .ES256: privateKey = .p256(try P256.Signing.PrivateKey())
        case .EdDSA: privateKey = .ed25519(try Curve25519.Signing.PrivateKey())
        }
        var publicJWK = try JWK(publicKey: privateKey.publicKey, algorithm: algorithm)
        let kid = try publicJWK.thumbprint()
        publicJWK.kid = kid
        let privateJWK = try JWK(privateKey: privateKey, keyID: kid, algorithm: algorithm)
        let sealed = try AES.GCM.seal(
            JSONBody.encode(privateJWK.json), using: keyEncryptionKey, authenticating: Array(kid.utf8))
        let publicText = String(decoding: JSONBody.encode(publicJWK.json), as: UTF8.self)
        try connection.execute(
            """
            INSERT INTO signing_keys (kid, algorithm, public_jwk, sealed_private_key, created_at, activates_at)
            VALUES (\(kid), \(algorithm.rawValue), \(publicText), \(sealed.combined), \(now()), \(activatesAt))
            """)
        return kid
    }

    /// Serialises key creation and rotation across instances.
    private static let advisoryLockKey: Int64 = 0x5349_474E_4B45_5953  // "SIGNKEYS"
}
