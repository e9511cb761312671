import Foundation
import Postgres

/// Apple's refresh tokens to revoke at Apple (Apple requires it when an account is deleted;
/// unlinking Apple asks for the same). The revocation is queued in the transaction that ends
/// the link, the token still sealed under its identity's id, so that it survives a restart and
/// Apple being unreachable; `UpstreamRevocationWorker` sends it after the commit.
enum UpstreamTokenRevocations {
    /// A queued revocation, as claimed for an attempt.
    struct Pending: Sendable, Equatable {
        var id: UUID
        var identityID: UUID
        var issuer: String
        /// The client id Apple issued the token to; nil: the Services ID.
        var clientID: String?
        var tokenCiphertext: [UInt8]
        /// Attempts so far, this one included.
        var attempts: Int
    }

    /// Attempts before a revocation is given up: with the back-channel retry base doubling up
    /// to an hour between attempts, about ten hours of the provider being unreachable.
    static let maxAttempts = 20

    /// Queues the revocation of the refresh tokens that the account's Apple identities (or the
    /// one identity `identityID`) hold, in the caller's transaction, before the identities go.
    /// Returns the ids of the queued revocations.
    @discardableResult
    static func queue(accountID: UUID, identityID: UUID? = nil, on db: some SQLExecutor) throws -> [UUID] {
        try db.query(
            """
            INSERT INTO upstream_token_revocations (id, identity_id, issuer, client_id, token_ciphertext)
            SELECT gen_random_uuid(), id, issuer, refresh_token_client_id, refresh_token_ciphertext
            FROM upstream_identities
            WHERE account_id = \(accountID) AND (\(identityID)::uuid IS NULL OR id = \(identityID))
              AND issuer = \(UpstreamProvider.appleIssuer) AND refresh_token_ciphertext IS NOT NULL
            RETURNING id
            """
        ).map { try $0.decode("id") }
    }

    /// Queues the revocation of a token that no identity holds, sealed under `identityID`: a
    /// sign-in refused after Apple redeemed its code (due now), or a link waiting for proof of
    /// control (due `notBefore`, when the link has expired unused; the link takes the token
    /// back with `take`).
    @discardableResult
    static func queue(
        sealed: [UInt8], identityID: UUID, clientID: String?, id: UUID, notBefore: Date? = nil,
        on db: some SQLExecutor
    ) throws -> UUID {
        try db.query(
            """
            INSERT INTO upstream_token_revocations (id, identity_id, issuer, client_id, token_ciphertext,
                                                    next_attempt_at)
            VALUES (\(id), \(identityID), \(UpstreamProvider.appleIssuer), \(clientID), \(sealed),
                    coalesce(\(notBefore)::timestamptz, now()))
            """)
        return id
    }

    /// Takes back the token queued under `identityID` (the identity has just been linked and
    /// keeps it): the sealed token, and the revocation is gone; nil when none was queued.
    static func take(identityID: UUID, on db: some SQLExecutor) throws -> [UInt8]? {
        try db.query(
            "DELETE FROM upstream_token_revocations WHERE identity_id = \(identityID) RETURNING token_ciphertext"
        ).first?.decode("token_ciphertext")
    }

    /// Claims up to ten due revocations (or only those of `ids`) for a minute
    /// (`FOR UPDATE SKIP LOCKED`: another instance skips them) and counts the attempt.
    static func claimDue(ids: [UUID]? = nil, on db: some SQLExecutor) throws -> [Pending] {
        try db.query(
            """
            UPDATE upstream_token_revocations SET attempts = attempts + 1, next_attempt_at = now() + interval '60 seconds'
            WHERE id IN (
                SELECT id FROM upstream_token_revocations
                WHERE next_attempt_at <= now() AND (\(ids)::uuid[] IS NULL OR id = ANY(\(ids)::uuid[]))
                ORDER BY next_attempt_at LIMIT 10 FOR UPDATE SKIP LOCKED)
            RETURNING id, identity_id, issuer, client_id, token_ciphertext, attempts
            """
        ).map {
            Pending(
                id: try $0.decode("id"), identityID: try $0.decode("identity_id"),
                issuer: try $0.decode("issuer"),
                clientID: try $0.decode("client_id", as: String?.self),
                tokenCiphertext: try $0.decode("token_ciphertext"), attempts: try $0.decode("attempts"))
        }
    }

    /// Done with the revocation: revoked, or given up.
    static func remove(_ id: UUID, on db: some SQLExecutor) throws {
        try db.query("DELETE FROM upstream_token_revocations WHERE id = \(id)")
    }

    static func retry(_ id: UUID, delaySeconds: Int, on db: some SQLExecutor) throws {
        try db.query(
            """
            UPDATE upstream_token_revocations
            SET next_attempt_at = now() + make_interval(secs => \(delaySeconds)::float8)
            WHERE id = \(id)
            """)
    }
}

/// Sends the queued revocations of `UpstreamTokenRevocations` from a background thread. Any
/// instance may run it (a due row is claimed with `FOR UPDATE SKIP LOCKED` and leased for a
/// minute). A failure is retried with the back-channel logout's backoff, doubling up to an hour
/// between attempts, until `UpstreamTokenRevocations.maxAttempts`.
final class UpstreamRevocationWorker: Sendable {
    private let pool: PostgresPool
    private let configuration: Configuration
    private let keys: SigningKeyRing
    private let log: Log
    private let now: @Sendable () -> Date
    private let thread = PollingThread()

    init(
        pool: PostgresPool, configuration: Configuration, keys: SigningKeyRing, log: Log,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        (self.pool, self.configuration, self.keys, self.log, self.now) = (pool, configuration, keys, log, now)
    }

    func start() {
        thread.start(
            name: "upstream-revocation",
            idleSeconds: { [configuration] in Double(configuration.oauth.backchannelPollMilliseconds) / 1000
            },
            pass: { [self] in (try? runOnce())?.attempted ?? 0 })
    }

    func stop() { thread.stop() }

    /// Claims and attempts the due revocations (or only those of `ids`): how many were attempted
    /// and how many the provider revoked.
    @discardableResult
    func runOnce(ids: [UUID]? = nil) throws -> (attempted: Int, revoked: Int) {
        let pending = try UpstreamTokenRevocations.claimDue(ids: ids, on: pool)
        var revoked = 0
        for revocation in pending where try attempt(revocation) { revoked += 1 }
        return (pending.count, revoked)
    }

    private func attempt(_ revocation: UpstreamTokenRevocations.Pending) throws -> Bool {
        let outcome: String
        do {
            guard revocation.issuer == UpstreamProvider.appleIssuer,
                let provider = configuration.appleProvider,
                let clientID = revocation.clientID ?? provider.apple?.servicesID
            else { throw AppleClient.Failure.unavailable("no apple provider with that client id configured") }
            let token = try keys.openUpstreamToken(
                revocation.tokenCiphertext, identityID: revocation.identityID)
            try AppleClient.shared.revoke(
                token: token, clientID: clientID, provider: provider,
                now: now())
            try UpstreamTokenRevocations.remove(revocation.id, on: pool)
            log.info(
                "upstream.apple_revoke", ["identity": revocation.identityID.lowercased, "event": "revoked"])
            return true
        } catch {
            outcome = "\(error)"
        }
        if revocation.attempts >= UpstreamTokenRevocations.maxAttempts {
            try UpstreamTokenRevocations.remove(revocation.id, on: pool)
            log.warning(
                "upstream.apple_revoke",
                ["identity": revocation.identityID.lowercased, "event": "abandoned", "reason": outcome])
            return false
        }
        let delay = configuration.oauth.backchannelRetryBaseSeconds << min(revocation.attempts - 1, 16)
        try UpstreamTokenRevocations.retry(revocation.id, delaySeconds: min(delay, 3_600), on: pool)
        log.warning(
            "upstream.apple_revoke",
            [
                "identity": revocation.identityID.lowercased, "event": "retry",
                "attempt": String(revocation.attempts), "reason": outcome,
            ])
        return false
    }
}
