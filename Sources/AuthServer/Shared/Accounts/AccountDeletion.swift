import Foundation
import Postgres

/// Deleting an account: the one list of every table that names it, used by the operator's
/// `users delete` and by the account holder's own deletion alike, so the two never drift.
///
/// Runs inside the caller's transaction. Most rows go by `ON DELETE CASCADE`; the rest carry
/// the id or an address without a foreign key (the session's client list, a completed passkey
/// sign-up, the throttle counters keyed by its addresses, a first-party sign-up in progress) and
/// are deleted here. Audit events are kept for the operator, but under a random anonymous id
/// with their client address and personal details removed, so that nothing left names the
/// person (GDPR Art. 17; App Store Review Guideline 5.1.1(v)).
enum AccountDeletion {
    /// What the deletion leaves for the caller to do after the commit.
    struct Outcome: Sendable, Equatable {
        /// The id the account's audit events now carry.
        var anonymousID: UUID
        /// The verified address the goodbye mail goes to; nil when none was verified.
        var verifiedEmail: String?
        /// Back-channel logout deliveries queued: for the clients the live sessions signed in
        /// to, and for the clients that hold the account's tokens outside them.
        var logoutsQueued: Int
        /// The revocations of Apple refresh tokens queued in the deletion's transaction
        /// (`UpstreamTokenRevocations`), sent by `UpstreamRevocationWorker` once it has committed.
        var revocations: [UUID]
    }

    /// Detail members an anonymised audit event keeps: they describe what happened, never who.
    /// Names, addresses, passkey names and ids of other accounts are removed.
    static let keptDetail = [
        "method", "reason", "ceremony", "via", "retry_after", "sessions_revoked", "fields", "by",
    ]

    /// Deletes the account; nil when there is no such account, or when `session` (the account
    /// holder's own, which asked for the deletion) has ended. `clients`: the configured ones,
    /// whose back-channel logout URIs are told.
    static func run(
        accountID: UUID, anonymousID: UUID, session: CurrentSession? = nil, clients: [ClientMetadata] = [],
        on db: some SQLExecutor
    ) throws -> Outcome? {
        // 1. The account's row, locked: a concurrent sign-in or credential change waits. Then
        //    the asking session, held live: a password change that ended it meanwhile is waited
        //    for and refuses the deletion.
        guard try db.query("SELECT id FROM accounts WHERE id = \(accountID) FOR UPDATE").first != nil else {
            return nil
        }
        if let session, try !SessionStore.holdLive(session, on: db) { return nil }
        let emails: [(normalized: String, email: String, verified: Bool, shared: Bool)] = try db.query(
            """
            SELECT normalized_email, email, verified_at IS NOT NULL AS verified,
                   EXISTS (SELECT 1 FROM account_emails o
                           WHERE o.normalized_email = e.normalized_email AND o.account_id <> e.account_id) AS shared
            FROM account_emails e WHERE account_id = \(accountID) ORDER BY created_at, id
            """
        ).map {
            (try $0.decode("normalized_email"), try $0.decode("email"), try $0.decode("verified"), try $0.decode("shared"))
        }
        // The counters kept under an address that another account holds too (its owner, or a
        // squatter who signed up with it unverified) are that account's as well, and stay.
        let soleAddresses = emails.filter { !$0.shared }.map(\.normalized)
        // 2. Apple's refresh tokens, queued for revocation at Apple after the commit.
        let revocations = try UpstreamTokenRevocations.queue(accountID: accountID, on: db)
        // 3. Back-channel logout (OpenID Connect Back-Channel Logout 1.0 §2.5) for every live
        //    session, queued by the session-end trigger before `session_clients` goes; older
        //    finished deliveries are no longer needed.
        //    Every delivery of the account is locked first: the worker records an attempt that
        //    ends meanwhile only after this commit, and then finds the account gone.
        try db.query(
            """
            WITH held AS (
                SELECT id, delivered_at, abandoned_at FROM backchannel_logout_deliveries
                WHERE account_id = \(accountID) FOR UPDATE)
            DELETE FROM backchannel_logout_deliveries d USING held
            WHERE d.id = held.id AND (held.delivered_at IS NOT NULL OR held.abandoned_at IS NOT NULL)
            """)
        try db.query(
            "UPDATE authentication_sessions SET revoked_at = now() WHERE account_id = \(accountID) AND revoked_at IS NULL"
        )
        //    A client that holds the account's live tokens outside those sessions (a token
        //    exchange, offline access after its session ended) is told too, by a logout token
        //    that names the subject only (§2.4), unless it requires a session id.
        let told = clients.filter { $0.backchannelLogoutURI != nil && !$0.backchannelLogoutSessionRequired }
        try db.query(
            """
            INSERT INTO backchannel_logout_deliveries (id, client_id, uri, account_id, session_id)
            SELECT gen_random_uuid(), c.client_id, c.uri, \(accountID), NULL
            FROM unnest(\(told.map(\.clientID))::text[], \(told.map { $0.backchannelLogoutURI ?? "" })::text[])
                AS c (client_id, uri)
            WHERE NOT EXISTS (SELECT 1 FROM backchannel_logout_deliveries d
                              WHERE d.account_id = \(accountID) AND d.client_id = c.client_id)
              AND (EXISTS (SELECT 1 FROM refresh_token_families f
                           WHERE f.account_id = \(accountID) AND f.client_id = c.client_id
                             AND f.revoked_at IS NULL AND f.absolute_expires_at > now())
                   OR EXISTS (SELECT 1 FROM access_tokens t
                              WHERE t.account_id = \(accountID) AND t.client_id = c.client_id
                                AND t.expires_at > now()))
            """)
        let queued: Int =
            try db.query(
                "SELECT count(*) AS n FROM backchannel_logout_deliveries WHERE account_id = \(accountID)"
            ).first?.decode("n") ?? 0
        // 4. Rows that name the account or its addresses (those it alone holds) without a
        //    foreign key.
        try db.query("DELETE FROM session_clients WHERE account_id = \(accountID)")
        try db.query("DELETE FROM passkey_account_registrations WHERE prospective_account_id = \(accountID)")
        try db.query("DELETE FROM sign_in_failures WHERE scope = 'account' AND subject = ANY(\(soleAddresses))")
        try db.query(
            """
            DELETE FROM recovery_attempts
            WHERE scope IN ('start_email', 'verify_email') AND subject = ANY(\(soleAddresses))
            """)
        try db.query(
            """
            DELETE FROM email_verification_guesses
            WHERE (scope = 'account' AND subject = \(accountID.lowercased))
               OR (scope = 'address' AND subject = ANY(\(soleAddresses)))
            """)
        try db.query("DELETE FROM sign_up_attempts WHERE scope = 'email' AND subject = ANY(\(soleAddresses))")
        try db.query(
            "DELETE FROM authorization_challenge_sessions WHERE lower(sign_up_email) = ANY(\(soleAddresses))")
        // 5. Tokens, then the account (its addresses, credentials, sessions, codes, consents,
        //    upstream links and pending email changes go with it).
        try db.query(
            """
            DELETE FROM refresh_tokens WHERE family_id IN
                (SELECT id FROM refresh_token_families WHERE account_id = \(accountID))
            """)
        try db.query("DELETE FROM access_tokens WHERE account_id = \(accountID)")
        try db.query("DELETE FROM accounts WHERE id = \(accountID)")
        // 6. Audit events: kept under the anonymous id, without client address or personal
        //    detail; other accounts' events that named this one name the anonymous id instead.
        try db.query(
            """
            UPDATE audit_events
            SET account_id = \(anonymousID), client_address = '',
                detail = COALESCE((SELECT jsonb_object_agg(key, value) FROM jsonb_each(detail)
                                   WHERE key = ANY(\(keptDetail))), '{}'::jsonb)
            WHERE account_id = \(accountID)
            """)
        //    `verified_by` is the one member that names another account (an address released
        //    when this account verified it); its index holds only the events that carry it.
        try db.query(
            """
            UPDATE audit_events
            SET detail = jsonb_set(detail, '{verified_by}', to_jsonb(\(anonymousID.lowercased)::text))
            WHERE detail ? 'verified_by' AND detail ->> 'verified_by' = \(accountID.lowercased)
            """)
        return Outcome(
            anonymousID: anonymousID, verifiedEmail: emails.first { $0.verified }?.email,
            logoutsQueued: queued, revocations: revocations)
    }
}
