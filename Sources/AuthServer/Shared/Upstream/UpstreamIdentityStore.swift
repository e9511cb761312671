import Foundation
import Postgres

/// An identity at an upstream provider linked to an account: `(issuer, subject)` belongs to
/// exactly one account.
struct UpstreamIdentity: Sendable, Equatable {
    var id: UUID
    var accountID: UUID
    /// The configured provider id.
    var provider: String
    var issuer: String
    var subject: String
    /// The provider's address for the user, as it last reported it.
    var email: String?
    var emailVerified: Bool
    /// An address of Apple's private email relay: real and verified, but not the user's own.
    var isPrivateEmail: Bool
    /// False once the provider reports that mail to the address no longer arrives.
    var emailDeliverable = true
    /// The provider's refresh token, sealed (`SigningKeyRing.sealUpstreamToken`).
    var refreshTokenCiphertext: [UInt8]?
    var createdAt: Date
    var lastUsedAt: Date?
    /// The client id Apple issued the refresh token to (an app's bundle id); nil: the Services ID.
    var refreshTokenClientID: String? = nil
}

/// SQL for `upstream_identities`. Each function runs on the caller's connection, inside its
/// transaction when the caller has one.
enum UpstreamIdentityStore {
    enum InsertError: Error, Equatable {
        /// The identity is already linked (to this account or another).
        case alreadyLinked
    }

    static let columns = PostgresQuery.Fragment(
        """
        id, account_id, provider, issuer, subject, email, email_verified, is_private_email,
        email_deliverable, refresh_token_ciphertext, created_at, last_used_at, refresh_token_client_id
        """)

    static func identity(_ row: PostgresRow) throws -> UpstreamIdentity {
        UpstreamIdentity(
            id: try row.decode("id"), accountID: try row.decode("account_id"),
            provider: try row.decode("provider"), issuer: try row.decode("issuer"),
            subject: try row.decode("subject"), email: try row.decode("email", as: String?.self),
            emailVerified: try row.decode("email_verified"),
            isPrivateEmail: try row.decode("is_private_email"),
            emailDeliverable: try row.decode("email_deliverable"),
            refreshTokenCiphertext: try row.decode("refresh_token_ciphertext", as: [UInt8]?.self),
            createdAt: try row.decode("created_at"),
            lastUsedAt: try row.decode("last_used_at", as: Date?.self),
            refreshTokenClientID: try row.decode("refresh_token_client_id", as: String?.self))
    }

    static func find(issuer: String, subject: String, on db: some SQLExecutor) throws -> UpstreamIdentity? {
        try db.query(
            "SELECT \(columns) FROM upstream_identities WHERE issuer = \(issuer) AND subject = \(subject)"
        ).first.map(identity)
    }

    /// The account the identity is linked to, its row share-locked until the transaction ends:
    /// what a sign-in issues on the account's behalf commits before a change of the row (a
    /// disable, a deletion) begins, or waits for it and sees it. Nil when the identity is not linked.
    static func shareLinkedAccount(issuer: String, subject: String, on db: some SQLExecutor) throws -> UUID? {
        try db.query(
            """
            SELECT a.id FROM accounts a
            WHERE a.id = (SELECT account_id FROM upstream_identities WHERE issuer = \(issuer) AND subject = \(subject))
            FOR SHARE
            """
        ).first?.decode("id")
    }

    /// `find`, with the row locked (`FOR NO KEY UPDATE`) until the transaction ends: a sign-in
    /// holds the link while it issues, so an unlink (Apple's notifications, the account page)
    /// waits for the sign-in to commit (a notification then ends what it issued with the rest),
    /// or committed first and the sign-in finds no link.
    static func lockLinked(issuer: String, subject: String, on db: some SQLExecutor) throws -> UpstreamIdentity? {
        try db.query(
            """
            SELECT \(columns) FROM upstream_identities WHERE issuer = \(issuer) AND subject = \(subject)
            FOR NO KEY UPDATE
            """
        ).first.map(identity)
    }

    /// The account's identities, oldest first.
    static func list(accountID: UUID, on db: some SQLExecutor) throws -> [UpstreamIdentity] {
        try db.query(
            "SELECT \(columns) FROM upstream_identities WHERE account_id = \(accountID) ORDER BY created_at, id"
        ).map(identity)
    }

    static func count(accountID: UUID, on db: some SQLExecutor) throws -> Int {
        let count: Int64 =
            try db.query(
                "SELECT count(*) AS n FROM upstream_identities WHERE account_id = \(accountID)"
            ).first?.decode("n") ?? 0
        return Int(count)
    }

    /// Links the identity; `alreadyLinked` when its (issuer, subject) is linked already, to
    /// any account. Runs in a savepoint, so the caller's transaction survives the refusal.
    static func insert(_ identity: UpstreamIdentity, on db: some SQLExecutor) throws {
        try db.query("SAVEPOINT upstream_link")
        do {
            try db.query(
                """
                INSERT INTO upstream_identities (id, account_id, provider, issuer, subject, email,
                    email_verified, is_private_email, email_deliverable, refresh_token_ciphertext,
                    created_at, last_used_at)
                VALUES (\(identity.id), \(identity.accountID), \(identity.provider), \(identity.issuer),
                    \(identity.subject), \(identity.email), \(identity.emailVerified), \(identity.isPrivateEmail),
                    \(identity.emailDeliverable), \(identity.refreshTokenCiphertext), \(identity.createdAt),
                    \(identity.lastUsedAt))
                """)
            try db.query("RELEASE SAVEPOINT upstream_link")
        } catch let error as PostgresError where error.kind == .uniqueViolation {
            try db.query("ROLLBACK TO SAVEPOINT upstream_link")
            throw InsertError.alreadyLinked
        }
    }

    /// Unlinks one identity of the account; false when the account has no such identity.
    static func delete(id: UUID, accountID: UUID, on db: some SQLExecutor) throws -> Bool {
        try db.query("DELETE FROM upstream_identities WHERE id = \(id) AND account_id = \(accountID)")
            .affectedRows == 1
    }

    /// Records a sign-in through the identity and the provider's latest facts about the address.
    static func touch(
        id: UUID, email: String?, emailVerified: Bool, isPrivateEmail: Bool, at time: Date,
        on db: some SQLExecutor
    ) throws {
        try db.query(
            """
            UPDATE upstream_identities SET last_used_at = \(time), email = coalesce(\(email), email),
                email_verified = \(emailVerified), is_private_email = \(isPrivateEmail)
            WHERE id = \(id)
            """)
    }

    /// `clientID`: the client id the token was issued to, when not the Services ID (an app's bundle id).
    static func setRefreshToken(
        id: UUID, ciphertext: [UInt8]?, clientID: String? = nil, on db: some SQLExecutor
    )
        throws
    {
        try db.query(
            """
            UPDATE upstream_identities SET refresh_token_ciphertext = \(ciphertext),
                refresh_token_client_id = \(clientID)
            WHERE id = \(id)
            """)
    }

    static func setEmailDeliverable(id: UUID, _ deliverable: Bool, on db: some SQLExecutor) throws {
        try db.query("UPDATE upstream_identities SET email_deliverable = \(deliverable) WHERE id = \(id)")
    }
}
