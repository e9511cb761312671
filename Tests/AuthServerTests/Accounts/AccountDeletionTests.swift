import Foundation
import Postgres
import Synchronization
import Testing

@testable import AuthServer

/// The shared deletion against a real database: what it leaves for after the commit, and what
/// it leaves of the account's audit trail.
@Suite("AccountDeletion: one list of what an account deletion removes")
struct AccountDeletionTests {
    static func account(_ app: TestApplication, email: String) throws -> UUID {
        let id = UUID()
        try app.database.pool.transaction { db in
            try AccountStore.insertAccount(
                id: id, displayName: "Ada Lovelace", email: EmailAddress(email)!,
                userHandle: (0..<32).map { _ in UInt8.random(in: 0...255) }, on: db)
            try db.query("UPDATE account_emails SET verified_at = now() WHERE account_id = \(id)")
        }
        return id
    }

    static func link(_ app: TestApplication, accountID: UUID, subject: String, token: [UInt8]?) throws {
        try app.database.pool.transaction { db in
            try UpstreamIdentityStore.insert(
                UpstreamIdentity(
                    id: UUID(), accountID: accountID, provider: "apple", issuer: "https://appleid.apple.com",
                    subject: subject, email: "relay@privaterelay.appleid.com", emailVerified: true,
                    isPrivateEmail: true, refreshTokenCiphertext: token, createdAt: Date(), lastUsedAt: nil),
                on: db)
        }
    }

    /// A deletion touches every table that names the account, each through an index: with
    /// sequential scans priced out, none is left in the deletion's statistics, the cascades and
    /// triggers included. A table read from end to end grows with everyone else's traffic
    /// (30 M audit events at bench/seed --scale 1.0), and a deletion that outlasts the
    /// statement timeout fails: the holder could not delete the account.
    @Test func deletingAnAccountReadsNoTableFromEndToEnd() throws {
        let app = try TestApplication()
        let id = try Self.account(app, email: "ada@example.com")
        try Self.link(app, accountID: id, subject: "apple-1", token: [1, 2, 3])
        // A connection of its own: the statistics view also shows a backend's counts not yet
        // flushed from its earlier transactions.
        let connection = try PostgresConnection(url: try #require(app.configuration.databaseURL))
        defer { connection.close() }
        let scanned: [String] = try connection.withTransaction { db in
            try db.query("SET LOCAL enable_seqscan = off")
            _ = try AccountDeletion.run(accountID: id, anonymousID: UUID(), on: db)
            return try db.query(
                "SELECT relname FROM pg_stat_xact_user_tables WHERE seq_scan > 0 ORDER BY relname"
            ).map { try $0.decode("relname") }
        }
        #expect(scanned == [])
    }

    /// The back-channel logout worker posts a delivery, and records the answer while the
    /// account's deletion is under way: its statements done, its commit not yet. The record
    /// goes with the account, as one that ends after the commit does; before, the worker still
    /// saw the account, kept the delivered row, and it named the deleted account for a week.
    @Test func aDeliveryThatEndsDuringTheDeletionGoesWithTheAccount() throws {
        let app = try TestApplication()
        let id = try Self.account(app, email: "edsger@example.com")
        let delivery = UUID()
        try app.database.pool.transaction { db in
            try AuditLog.record(AuditEvent(kind: .passkeyAdded, actor: .user, accountID: id), on: db)
            // In flight: claimed by the worker (and not due again for an hour).
            try db.query(
                """
                INSERT INTO backchannel_logout_deliveries (id, client_id, uri, account_id, session_id, attempts, next_attempt_at)
                VALUES (\(delivery), 'web-app', 'https://rp.example/backchannel', \(id), \(UUID()), 1,
                        now() + interval '1 hour')
                """)
        }
        // The deletion waits at its last statement, on an audit event this connection holds.
        let holder = try PostgresConnection(url: try #require(app.configuration.databaseURL))
        defer { holder.close() }
        try holder.query("BEGIN")
        try holder.query("SELECT 1 FROM audit_events WHERE account_id = \(id) FOR UPDATE")
        let pool = app.database.pool
        let deletion = Background {
            _ = try pool.transaction {
                try AccountDeletion.run(accountID: id, anonymousID: UUID(), on: $0)
            }
        }
        #expect(try Self.waitForLock(app, statement: "UPDATE audit_events"))
        // The worker records the answer: done at once, or waiting for the deletion's commit.
        let store = PostgresBackchannelLogoutStore(db: app.database.pool)
        let recorded = Background { try store.markDelivered(delivery, status: 200) }
        _ = try Self.waitForLock(app, statement: "UPDATE backchannel_logout_deliveries", seconds: 2)
        try holder.query("ROLLBACK")
        try deletion.wait()
        try recorded.wait()
        #expect(
            try app.sql("SELECT id FROM backchannel_logout_deliveries WHERE account_id = \(id)").count == 0)
    }

    /// A throwing body run on a thread of its own; `wait()` rethrows what it threw.
    final class Background: Sendable {
        private let failure = Mutex<(any Error)?>(nil)
        private let done = DispatchSemaphore(value: 0)

        init(_ body: @escaping @Sendable () throws -> Void) {
            Thread { [self] in
                do { try body() } catch { failure.withLock { $0 = error } }
                done.signal()
            }.start()
        }

        func wait() throws {
            done.wait()
            if let error = failure.withLock({ $0 }) { throw error }
        }
    }

    /// Whether a statement that starts with `statement` waits for a lock within `seconds`.
    static func waitForLock(_ app: TestApplication, statement: String, seconds: Double = 10) throws -> Bool {
        try app.lockWaiters(like: statement + "%", seconds: seconds)
    }

    /// The Apple refresh token is queued for revocation in the deletion's transaction, still
    /// sealed under its identity's id; an identity without one queues nothing.
    @Test func queuesTheUpstreamTokensToRevokeAndRemovesTheLinks() throws {
        let app = try TestApplication()
        let id = try Self.account(app, email: "ada@example.com")
        try Self.link(app, accountID: id, subject: "apple-1", token: [1, 2, 3])
        try Self.link(app, accountID: id, subject: "apple-2", token: nil)
        let anonymous = UUID()
        let outcome = try app.database.pool.transaction {
            try AccountDeletion.run(accountID: id, anonymousID: anonymous, on: $0)
        }
        #expect(outcome?.anonymousID == anonymous)
        #expect(outcome?.verifiedEmail == "ada@example.com")
        let queued = try app.sql("SELECT id, identity_id, token_ciphertext FROM upstream_token_revocations")
        #expect(queued.count == 1)
        #expect(try outcome?.revocations == queued.map { try $0.decode("id", as: UUID.self) })
        #expect(try queued.first?.decode("token_ciphertext", as: [UInt8].self) == [1, 2, 3])
        #expect(try app.sql("SELECT 1 FROM upstream_identities").isEmpty)
        #expect(try app.sql("SELECT 1 FROM accounts WHERE id = \(id)").isEmpty)
        let again = try app.database.pool.transaction {
            try AccountDeletion.run(accountID: id, anonymousID: UUID(), on: $0)
        }
        #expect(again == nil)
    }

    @Test func auditEventsStayUnderTheAnonymousIdWithoutPersonalDetail() throws {
        let app = try TestApplication()
        let id = try Self.account(app, email: "grace@example.com")
        let other = try Self.account(app, email: "alan@example.com")
        try app.database.pool.transaction { db in
            try AuditLog.record(
                AuditEvent(
                    kind: .passkeyAdded, actor: .user, accountID: id, clientAddress: "203.0.113.9",
                    detail: ["ceremony": "modal", "name": "Grace's iPhone"]), on: db)
            try AuditLog.record(
                AuditEvent(
                    kind: .emailAddressReleased, actor: .system, accountID: other,
                    detail: ["verified_by": id.lowercased]), on: db)
        }
        let anonymous = UUID()
        _ = try app.database.pool.transaction {
            try AccountDeletion.run(accountID: id, anonymousID: anonymous, on: $0)
        }
        let rows = try app.sql(
            "SELECT account_id, client_address, detail::text AS detail FROM audit_events WHERE event = 'passkey.added'"
        )
        #expect(rows.count == 1)
        #expect(try rows[0].decode("account_id", as: UUID.self) == anonymous)
        #expect(try rows[0].decode("client_address", as: String.self) == "")
        #expect(try rows[0].decode("detail", as: String.self) == #"{"ceremony": "modal"}"#)
        let released = try app.sql(
            "SELECT detail->>'verified_by' AS by FROM audit_events WHERE event = 'email.address_released'")
        #expect(try released[0].decode("by", as: String.self) == anonymous.lowercased)
        #expect(
            try app.sql("SELECT 1 FROM audit_events WHERE detail::text LIKE \("%" + id.lowercased + "%")")
                .isEmpty)
    }

    @Test func theAdoptionReportCountsOneAccountFewerAndKeepsPastSignIns() throws {
        let app = try TestApplication()
        let id = try Self.account(app, email: "kept@example.com")
        _ = try Self.account(app, email: "other@example.com")
        try app.database.pool.transaction { db in
            try AccountStore.setPassword(accountID: id, hash: "$argon2id$placeholder", on: db)
            try AuditLog.record(
                AuditEvent(
                    kind: .signInSucceeded, actor: .user, accountID: id, clientAddress: "198.51.100.7",
                    detail: ["method": "password"]), on: db)
        }
        let before = try AdoptionReport.load(on: app.database.pool)
        _ = try app.database.pool.transaction {
            try AccountDeletion.run(accountID: id, anonymousID: UUID(), on: $0)
        }
        let after = try AdoptionReport.load(on: app.database.pool)
        #expect(after.passwordOnly == before.passwordOnly - 1)
        #expect(after.passkeyOnly == before.passkeyOnly)
        #expect(after.last7Days.passwordSignIns == before.last7Days.passwordSignIns)
        #expect(after.last7Days.passwordSignIns == 1)
    }
}
