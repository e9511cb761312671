import Foundation
import Postgres
import Synchronization

/// Removes rows nothing can use any more: expired challenges, codes, sessions, tokens,
/// throttle windows, finished logout deliveries, and audit events past their retention.
///
/// Deletes go in batches of `batchSize` rows, each its own short statement, so no statement
/// holds locks for long on a busy table. Only one instance runs a pass at a time: the pass
/// holds a PostgreSQL advisory lock, and an instance that cannot take it skips its turn.
/// A pass runs its batches paced (`Pacing`; back to back at 100 %), so that a large
/// backlog takes a smaller share of the database's CPU for longer.
///
/// Each batch commits without waiting for its WAL record to reach the disk
/// (`synchronous_commit = off` for that statement only): a PostgreSQL crash can only undo the
/// last batches, whose rows are still expired, refused by every reader, and removed by the
/// next pass. Waiting for the flush took most of the time of a batch of access-token records.
enum Maintenance {
    /// Rows per statement. A batch of 5,000 expired sessions takes about 0.2 s, most of it the
    /// per-row cascades to their clients and reauthentication challenges; one of access-token
    /// records a few milliseconds. Larger batches also rescan less of a table's front, where
    /// the rows the previous batches deleted stay until vacuum.
    static let batchSize = 5_000
    /// `PostgresQuery.Fragment.asynchronousCommit` as text, for the statements built from the
    /// rules' table names and conditions.
    private static let asynchronousCommitText =
        "(SELECT set_config('synchronous_commit', 'off', true)) AS async_commit"
    /// The statement timeout of a pass's batches (10 minutes).
    static let passStatementTimeoutMilliseconds = 600_000
    /// `pg_try_advisory_lock` key of the maintenance pass ("authmnt" in ASCII).
    static let advisoryLockKey: Int64 = 0x6175_7468_6D6E_74

    /// One rule: rows of `table` matching `condition` go.
    struct Rule: Sendable {
        var table: String
        var condition: String
        /// The indexed timestamp column the batches walk in order (the condition's leading
        /// column unless given).
        var key: String

        init(table: String, condition: String, key: String? = nil) {
            self.table = table
            self.condition = condition
            self.key = key ?? String(condition.prefix { $0 != " " })
        }
    }

    /// Consumed codes stay a day past expiry so that a late replay still revokes what the
    /// code produced; access-token records until the tokens themselves expire; finished
    /// deliveries a week, for inspection; revoked sessions and families 30 days. The records
    /// that refuse a replay (client assertions, request objects, DPoP proofs) stay
    /// `OAuthStore.replayMargin` past the last moment a check could accept them: instances'
    /// clocks differ from PostgreSQL's.
    static let rules: [Rule] = [
        Rule(table: "passkey_registration_challenges", condition: "expires_at < now() - interval '1 hour'"),
        Rule(table: "passkey_authentication_challenges", condition: "expires_at < now() - interval '1 hour'"),
        Rule(
            table: "passkey_account_registrations",
            condition: "expires_at < now() - interval '1 hour' AND completed_at IS NULL"),
        // One indexed term per rule, never `a OR b`: an OR is served by a BitmapOr, which reads
        // every matching entry of each index before the batch's LIMIT applies (millions of
        // entries per batch on a large backlog); a single range stops after its batch.
        Rule(table: "authentication_sessions", condition: "expires_at < now() - interval '1 day'"),
        Rule(table: "authentication_sessions", condition: "revoked_at < now() - interval '30 days'"),
        Rule(table: "authentication_sessions", condition: "idle_expires_at < now() - interval '1 day'"),
        Rule(
            table: "sign_in_failures",
            condition:
                "window_started_at < now() - interval '1 day' AND locked_until < now() - interval '1 day'"),
        Rule(table: "authorization_requests", condition: "expires_at < now()"),
        Rule(table: "pushed_authorization_requests", condition: "expires_at < now() - interval '1 hour'"),
        Rule(table: "request_object_ids", condition: "expires_at < now() - \(OAuthStore.replayMarginSQL)"),
        Rule(table: "authorization_codes", condition: "expires_at < now() - interval '1 day'"),
        Rule(table: "access_tokens", condition: "expires_at < now() - interval '1 hour'"),
        Rule(table: "client_assertion_ids", condition: "expires_at < now() - \(OAuthStore.replayMarginSQL)"),
        Rule(table: "dpop_proofs", condition: "expires_at < now() - \(OAuthStore.replayMarginSQL)"),
        Rule(table: "email_changes", condition: "expires_at < now() - interval '1 hour'"),
        Rule(table: "email_change_undos", condition: "expires_at < now()"),
        Rule(table: "refresh_token_families", condition: "absolute_expires_at < now() - interval '1 day'"),
        Rule(table: "refresh_token_families", condition: "revoked_at < now() - interval '30 days'"),
        Rule(
            table: "backchannel_logout_deliveries",
            condition:
                "(delivered_at IS NOT NULL OR abandoned_at IS NOT NULL) AND created_at < now() - interval '7 days'",
            key: "created_at"),
        Rule(table: "email_verification_codes", condition: "expires_at < now() - interval '1 day'"),
        Rule(table: "recovery_codes", condition: "created_at < now() - interval '2 days'"),
        Rule(table: "recovery_sessions", condition: "expires_at < now() - interval '1 day'"),
        Rule(table: "recovery_attempts", condition: "window_started_at < now() - interval '2 days'"),
        Rule(table: "email_verification_guesses", condition: "window_started_at < now() - interval '2 days'"),
        Rule(table: "sign_up_attempts", condition: "window_started_at < now() - interval '2 days'"),
        Rule(table: "reauthentication_challenges", condition: "expires_at < now() - interval '1 hour'"),
        Rule(table: "authorization_challenge_sessions", condition: "expires_at < now() - interval '1 hour'"),
        Rule(table: "upstream_authorization_requests", condition: "expires_at < now() - interval '1 hour'"),
        Rule(table: "upstream_pending_links", condition: "expires_at < now() - interval '1 hour'"),
        Rule(table: "apple_notification_ids", condition: "expires_at < now()"),
        Rule(table: "related_origin_csrf_tokens", condition: "expires_at < now()"),
    ]

    /// Audit events past `audit.retention_days`, the last rule of a pass.
    static func auditRule(retentionDays: Int) -> Rule {
        Rule(table: "audit_events", condition: "occurred_at < now() - interval '\(retentionDays) days'")
    }

    struct Removed: Sendable, Equatable {
        var table: String
        var rows: Int
    }

    /// What a pass does between two batches.
    struct Pacing: Sendable {
        /// Two fifths: a large backlog takes two and a half times as long and leaves the
        /// database most of the machine for requests meanwhile (bench/NOTES.md, scenario 10);
        /// a pass with a few batches due barely pauses.
        static let defaultDutyCyclePercent = 40
        /// The share of the pass's time spent in batches, 1…100: after a batch that took `t`,
        /// the pass pauses `t × (100 − p) / p` (50: as long as the batch took; 100: none).
        var dutyCyclePercent = defaultDutyCyclePercent
        /// Waits the pause (also called with a zero pause after every batch); false ends the
        /// pass there, with what it removed so far (a server shutting down).
        var pause: @Sendable (Duration) -> Bool = { pause in
            if pause > .zero { Thread.sleep(forTimeInterval: pause.seconds) }
            return true
        }

        func pauseLength(after batch: Duration) -> Duration {
            dutyCyclePercent >= 100
                ? .zero : batch * (Double(100 - dutyCyclePercent) / Double(dutyCyclePercent))
        }
    }

    /// Runs one pass; nil when another instance holds the lock.
    static func runOnce(
        pool: PostgresPool, auditRetentionDays: Int, batchSize: Int = batchSize, pacing: Pacing = Pacing()
    ) throws
        -> [Removed]?
    {
        try pool.withConnection { connection in
            guard
                try connection.query("SELECT pg_try_advisory_lock(\(advisoryLockKey)) AS locked").first?
                    .decode("locked", as: Bool.self) == true
            else { return nil }
            defer { _ = try? connection.query("SELECT pg_advisory_unlock(\(advisoryLockKey)) AS unlocked") }
            // A batch holds row locks on expired rows only, so it may take longer than a request
            // may: after millions of deletions on a table, the first batch of its next rule
            // visits every dead index entry once (marking it for later scans), which outlasts a
            // request's timeout on a large backlog. The connection goes back to the pool with
            // the pool's own timeout.
            try connection.query(
                PostgresQuery(stringLiteral: "SET statement_timeout = \(passStatementTimeoutMilliseconds)"))
            defer {
                let restored = PostgresConnection.milliseconds(pool.statementTimeout)
                _ = try? connection.query(PostgresQuery(stringLiteral: "SET statement_timeout = \(restored)"))
            }
            var removed: [Removed] = []
            for rule in rules + [auditRule(retentionDays: auditRetentionDays)] {
                let (rows, finished) = try deleteInKeyOrder(
                    rule, batchSize: batchSize, pacing: pacing, on: connection)
                // One figure per table, whatever the number of its rules.
                if let last = removed.indices.last, removed[last].table == rule.table {
                    removed[last].rows += rows
                } else {
                    removed.append(Removed(table: rule.table, rows: rows))
                }
                guard finished else { break }
            }
            return removed
        }
    }

    /// Deletes the rows of `rule` in batches taken in the order of its key, each batch starting
    /// where the last one ended. A batch that took "any `batchSize` matching rows" would read
    /// again, every time, the rows earlier batches deleted (dead until vacuum, at the front of
    /// the table or the index): quadratic in the backlog, and on tens of millions of expired
    /// rows a single batch outlasted the statement timeout.
    /// Returns the rows deleted, and false for `finished` when the pacing's pause ended the pass.
    private static func deleteInKeyOrder(
        _ rule: Rule, batchSize: Int, pacing: Pacing, on connection: PostgresConnection
    ) throws -> (rows: Int, finished: Bool) {
        var total = 0
        var after = "-infinity"
        let clock = ContinuousClock()
        while true {
            let started = clock.now
            let row = try connection.query(
                PostgresQuery(
                    stringLiteral: """
                        WITH removed AS (
                            DELETE FROM \(rule.table) USING \(asynchronousCommitText)
                            WHERE \(rule.table).ctid = ANY(ARRAY(
                                SELECT ctid FROM \(rule.table)
                                WHERE (\(rule.condition)) AND \(rule.key) >= '\(after)'::timestamptz
                                ORDER BY \(rule.key) LIMIT \(batchSize)))
                            RETURNING \(rule.table).\(rule.key))
                        SELECT count(*) AS removed, max(\(rule.key))::text AS last FROM removed
                        """)
            ).first
            let count = try row?.decode("removed", as: Int.self) ?? 0
            total += count
            // The last key deleted, as PostgreSQL printed it: digits, separators and a zone.
            guard count == batchSize, let last = try row?.decode("last", as: String?.self),
                last.allSatisfy({ $0.isNumber || " :.+-".contains($0) })
            else { return (total, pacing.pause(.zero)) }
            after = last
            guard pacing.pause(pacing.pauseLength(after: clock.now - started)) else { return (total, false) }
        }
    }

}

/// Runs `Maintenance` every `interval_seconds` on a background thread (started by `serve`,
/// stopped at shutdown). The first pass runs one interval after start; a stop ends a pass
/// under way after its current batch.
final class MaintenanceWorker: Sendable {
    private let pool: PostgresPool
    private let settings: Configuration
    private let log: Log
    private let stopped = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    init(pool: PostgresPool, configuration: Configuration, log: Log) {
        self.pool = pool
        self.settings = configuration
        self.log = log
    }

    func start() {
        let thread = Thread { [self] in
            while true {
                _ = wake.wait(timeout: .now() + .seconds(settings.maintenance.intervalSeconds))
                if stopped.load(ordering: .relaxed) { break }
                runPass()
                if stopped.load(ordering: .relaxed) { break }
            }
            finished.signal()
        }
        thread.name = "maintenance"
        thread.start()
    }

    func runPass() {
        // The pause waits on the semaphore `stop` signals, so a stop cuts it short.
        let pacing = Maintenance.Pacing(dutyCyclePercent: settings.maintenance.dutyCyclePercent) {
            [self] pause in
            if pause > .zero, !stopped.load(ordering: .relaxed) {
                _ = wake.wait(timeout: .now() + .nanoseconds(Int(pause.seconds * 1e9)))
            }
            return !stopped.load(ordering: .relaxed)
        }
        do {
            guard
                let removed = try Maintenance.runOnce(
                    pool: pool, auditRetentionDays: settings.audit.retentionDays, pacing: pacing)
            else {
                log.info("maintenance.pass", ["step": "lock", "reason": "heldByAnotherInstance"])
                return
            }
            let summary = removed.filter { $0.rows > 0 }.map { "\($0.table):\($0.rows)" }.joined(
                separator: ",")
            let step = stopped.load(ordering: .relaxed) ? "stopped" : "done"
            log.info("maintenance.pass", ["step": step, "removed": summary.isEmpty ? "none" : summary])
        } catch {
            log.warning("maintenance.pass", ["step": "purge", "reason": ServeCommand.describe(error)])
        }
    }

    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        wake.signal()
        finished.wait()
    }
}
