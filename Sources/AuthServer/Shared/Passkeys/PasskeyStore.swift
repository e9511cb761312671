import Crypto
import Foundation
import Postgres
import WebAuthnCore

/// A stored passkey (WebAuthn credential record) and what the account page shows of it.
struct PasskeyRecord: Sendable, Equatable {
    var id: UUID
    var accountID: UUID
    var credentialID: [UInt8]
    var publicKey: [UInt8]
    var signCount: Int64
    var backupEligible: Bool
    var backedUp: Bool
    var transports: [String]
    var aaguid: [UInt8]
    var name: String
    var createdAt: Date
    var lastUsedAt: Date?

    /// What an assertion is verified against: this passkey as stored, with its user handle.
    func stored(userHandle: [UInt8]) -> StoredCredential {
        StoredCredential(
            id: credentialID, publicKey: publicKey, signCount: UInt32(clamping: signCount),
            backupEligible: backupEligible, backedUp: backedUp, userHandle: userHandle)
    }
}

/// SQL for passkeys and the one-time rows of their ceremonies. Each one-time row is consumed
/// by a single conditional UPDATE, so it works once, only before it expires, and (for
/// registration) only for the account it was issued to, even with many instances racing.
enum PasskeyStore {
    /// The one column list of `passkey_credentials` that `record(_:)` reads, qualified by the
    /// table's name so that it also serves a statement that joins `accounts`.
    static let columns = PostgresQuery.Fragment(
        """
        passkey_credentials.id, passkey_credentials.account_id, passkey_credentials.credential_id,
        passkey_credentials.public_key, passkey_credentials.sign_count, passkey_credentials.backup_eligible,
        passkey_credentials.backed_up, passkey_credentials.transports, passkey_credentials.aaguid,
        passkey_credentials.name, passkey_credentials.created_at, passkey_credentials.last_used_at
        """)

    /// A row selected with `columns`.
    static func record(_ row: PostgresRow) throws -> PasskeyRecord {
        PasskeyRecord(
            id: try row.decode("id"), accountID: try row.decode("account_id"),
            credentialID: try row.decode("credential_id"), publicKey: try row.decode("public_key"),
            signCount: try row.decode("sign_count"), backupEligible: try row.decode("backup_eligible"),
            backedUp: try row.decode("backed_up"), transports: try row.decode("transports"),
            aaguid: try row.decode("aaguid"), name: try row.decode("name"),
            createdAt: try row.decode("created_at"),
            lastUsedAt: try row.decode("last_used_at", as: Date?.self))
    }

    enum InsertError: Error { case credentialExists }

    /// Stores a verified registration as passkey `id`; `credentialExists` when another passkey
    /// has its credential id.
    static func insert(
        _ registration: VerifiedRegistration, id: UUID = UUID.random(), accountID: UUID, name: String,
        on db: some SQLExecutor
    ) throws -> PasskeyRecord {
        do {
            let aaguid =
                registration.aaguid.count == 16 ? registration.aaguid : [UInt8](repeating: 0, count: 16)
            let rows = try db.query(
                """
                INSERT INTO passkey_credentials
                    (id, account_id, credential_id, public_key, algorithm, sign_count, backup_eligible, backed_up,
                     transports, aaguid, name)
                VALUES (\(id), \(accountID), \(registration.credentialID), \(registration.publicKey),
                        \(Int(registration.algorithm.rawValue)), \(Int(registration.signCount)),
                        \(registration.backupEligible), \(registration.backedUp), \(registration.transports), \(aaguid), \(name))
                RETURNING \(columns)
                """)
            guard let row = rows.first else {
                throw PostgresError(kind: .other, detail: "passkey insert returned no row")
            }
            return try record(row)
        } catch let error as PostgresError where error.kind == .uniqueViolation {
            throw InsertError.credentialExists
        }
    }

    /// A passkey by credential id, with its account's user handle and whether an operator
    /// disabled the account.
    static func find(credentialID: [UInt8], on db: some SQLExecutor) throws -> (
        PasskeyRecord, userHandle: [UInt8], accountDisabled: Bool
    )? {
        let rows = try db.query(
            """
            SELECT \(columns), a.webauthn_user_handle, a.disabled_at IS NOT NULL AS account_disabled
            FROM passkey_credentials JOIN accounts a ON a.id = passkey_credentials.account_id
            WHERE passkey_credentials.credential_id = \(credentialID)
            """)
        guard let row = rows.first else { return nil }
        return (try record(row), try row.decode("webauthn_user_handle"), try row.decode("account_disabled"))
    }

    static func list(accountID: UUID, on db: some SQLExecutor) throws -> [PasskeyRecord] {
        try db.query(
            """
            SELECT \(columns) FROM passkey_credentials WHERE account_id = \(accountID) ORDER BY created_at, id
            """
        ).map(record)
    }

    /// The stored counter only grows: a lower value (a replayed or cloned authenticator, or
    /// two sign-ins racing) never lowers the maximum seen.
    static func recordUse(id: UUID, signCount: UInt32, backedUp: Bool, on db: some SQLExecutor) throws {
        try db.queue(
            """
            UPDATE passkey_credentials
            SET sign_count = GREATEST(sign_count, \(Int(signCount))), backed_up = \(backedUp), last_used_at = now()
            WHERE id = \(id)
            """)
    }

    static func rename(id: UUID, accountID: UUID, name: String, on db: some SQLExecutor) throws -> Bool {
        try db.query(
            "UPDATE passkey_credentials SET name = \(name) WHERE id = \(id) AND account_id = \(accountID)"
        )
        .affectedRows == 1
    }

    static func delete(id: UUID, accountID: UUID, on db: some SQLExecutor) throws -> Bool {
        try db.query("DELETE FROM passkey_credentials WHERE id = \(id) AND account_id = \(accountID)")
            .affectedRows == 1
    }

    /// Whether any of the account's passkeys has signed in at least once: the condition for
    /// removing the password.
    static func hasUsedPasskey(accountID: UUID, on db: some SQLExecutor) throws -> Bool {
        try db.query(
            "SELECT EXISTS (SELECT 1 FROM passkey_credentials WHERE account_id = \(accountID) AND last_used_at IS NOT NULL) AS used"
        ).first?.decode("used") ?? false
    }

    // MARK: - One-time rows

    /// Stores registration challenge `id` (drawn by the caller) for `accountID`, usable once
    /// within `lifetimeSeconds`.
    static func createRegistrationChallenge(
        id: UUID, challenge: [UInt8], accountID: UUID, conditional: Bool, lifetimeSeconds: Int,
        on db: some SQLExecutor
    ) throws {
        try db.query(
            """
            INSERT INTO passkey_registration_challenges (id, account_id, challenge, conditional, expires_at)
            VALUES (\(id), \(accountID), \(challenge), \(conditional), now() + make_interval(secs => \(lifetimeSeconds)::float8))
            """)
    }

    /// Consumes a registration challenge issued to `accountID`; nil when unknown, expired,
    /// already used or issued to another account.
    static func consumeRegistrationChallenge(id: UUID, accountID: UUID, on db: some SQLExecutor) throws -> (
        challenge: [UInt8], conditional: Bool
    )? {
        let rows = try db.query(
            """
            UPDATE passkey_registration_challenges SET consumed_at = now()
            WHERE id = \(id) AND consumed_at IS NULL AND expires_at > now() AND account_id = \(accountID)
            RETURNING challenge, conditional
            """)
        guard let row = rows.first else { return nil }
        return (try row.decode("challenge"), try row.decode("conditional"))
    }

    struct AccountRegistration: Sendable {
        var id: UUID
        var prospectiveAccountID: UUID
        var userHandle: [UInt8]
        var challenge: [UInt8]
    }
}
