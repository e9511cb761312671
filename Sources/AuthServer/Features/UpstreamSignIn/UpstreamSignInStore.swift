import Foundation
import Postgres

/// An authorization request sent to an upstream provider, as stored (digests only).
struct UpstreamRequestRecord: Sendable, Equatable {
    enum Purpose: String, Sendable { case signIn = "sign_in", link }

    var provider: String
    var purpose: Purpose
    /// For `link`: the account that asked.
    var accountID: UUID?
    var returnTo: String
    var uiLocales: String?
    var bindingDigest: [UInt8]
    var expiresAt: Date
}

/// An identity waiting until its user signs in to the account that holds its address.
struct UpstreamPendingLink: Sendable, Equatable {
    var accountID: UUID
    var claims: UpstreamClaims
    var returnTo: String
    var createdAt: Date
    var expiresAt: Date
    /// The id the identity gets once linked; Apple's refresh token waits under it in the
    /// revocation queue (`UpstreamTokenRevocations`) until the link takes it or expires.
    var identityID: UUID? = nil
}

/// What the upstream sign-in reads and writes besides the linking rule's tables.
protocol UpstreamSignInStore {
    /// Runs `body` in one transaction; the store it passes uses only that transaction.
    func transaction<T>(_ body: (any UpstreamSignInStore) throws -> T) throws -> T
    /// The executor of the linking rule's functions (`UpstreamAccounts`, `UpstreamIdentityStore`).
    var db: any SQLExecutor { get }

    func insertRequest(stateDigest: [UInt8], _ record: UpstreamRequestRecord) throws
    /// The request, unconsumed and unexpired, without using it (Apple's form_post first step).
    func peekRequest(stateDigest: [UInt8], now: Date) throws -> UpstreamRequestRecord?
    /// Uses the request once: nil when unknown or used (expiry is the caller's check).
    func consumeRequest(stateDigest: [UInt8]) throws -> UpstreamRequestRecord?

    func insertPendingLink(tokenDigest: [UInt8], _ link: UpstreamPendingLink) throws
    func pendingLink(tokenDigest: [UInt8], now: Date) throws -> UpstreamPendingLink?
    /// Uses the pending link once; nil when unknown, used or expired.
    func consumePendingLink(tokenDigest: [UInt8], now: Date) throws -> UpstreamPendingLink?

    /// The account's address and whether it is disabled; nil: no such account.
    func account(_ id: UUID) throws -> (email: String, disabled: Bool)?
    func record(_ event: AuditEvent) throws
}

struct PostgresUpstreamSignInStore: UpstreamSignInStore {
    let db: any SQLExecutor

    func transaction<T>(_ body: (any UpstreamSignInStore) throws -> T) throws -> T {
        try db.transaction { connection in try body(PostgresUpstreamSignInStore(db: connection)) }
    }

    private static let requestColumns = PostgresQuery.Fragment(
        "provider, purpose, account_id, return_to, ui_locales, binding_digest, expires_at")

    private static func request(_ row: PostgresRow) throws -> UpstreamRequestRecord? {
        guard let purpose = UpstreamRequestRecord.Purpose(rawValue: try row.decode("purpose")) else {
            return nil
        }
        return UpstreamRequestRecord(
            provider: try row.decode("provider"), purpose: purpose,
            accountID: try row.decode("account_id", as: UUID?.self), returnTo: try row.decode("return_to"),
            uiLocales: try row.decode("ui_locales", as: String?.self),
            bindingDigest: try row.decode("binding_digest"), expiresAt: try row.decode("expires_at"))
    }

    func insertRequest(stateDigest: [UInt8], _ record: UpstreamRequestRecord) throws {
        try db.query(
            """
            INSERT INTO upstream_authorization_requests
                (state_digest, provider, purpose, account_id, return_to, ui_locales, binding_digest, expires_at)
            VALUES (\(stateDigest), \(record.provider), \(record.purpose.rawValue), \(record.accountID),
                \(record.returnTo), \(record.uiLocales), \(record.bindingDigest), \(record.expiresAt))
            """)
    }

    func peekRequest(stateDigest: [UInt8], now: Date) throws -> UpstreamRequestRecord? {
        try db.query(
            """
            SELECT \(Self.requestColumns) FROM upstream_authorization_requests
            WHERE state_digest = \(stateDigest) AND consumed_at IS NULL AND expires_at > \(now)
            """
        ).first.flatMap(Self.request)
    }

    func consumeRequest(stateDigest: [UInt8]) throws -> UpstreamRequestRecord? {
        try db.query(
            """
            UPDATE upstream_authorization_requests SET consumed_at = now()
            WHERE state_digest = \(stateDigest) AND consumed_at IS NULL
            RETURNING \(Self.requestColumns)
            """
        ).first.flatMap(Self.request)
    }

    private static let linkColumns = PostgresQuery.Fragment(
        """
        account_id, provider, issuer, subject, email, email_verified, is_private_email, name, return_to,
        created_at, expires_at, identity_id
        """)

    private static func link(_ row: PostgresRow) throws -> UpstreamPendingLink {
        UpstreamPendingLink(
            accountID: try row.decode("account_id"),
            claims: UpstreamClaims(
                provider: try row.decode("provider"), issuer: try row.decode("issuer"),
                subject: try row.decode("subject"), email: try row.decode("email", as: String?.self),
                emailVerified: try row.decode("email_verified"),
                isPrivateEmail: try row.decode("is_private_email"),
                name: try row.decode("name", as: String?.self)),
            returnTo: try row.decode("return_to"), createdAt: try row.decode("created_at"),
            expiresAt: try row.decode("expires_at"),
            identityID: try row.decode("identity_id", as: UUID?.self))
    }

    func insertPendingLink(tokenDigest: [UInt8], _ link: UpstreamPendingLink) throws {
        let claims = link.claims
        try db.query(
            """
            INSERT INTO upstream_pending_links (token_digest, account_id, provider, issuer, subject, email,
                email_verified, is_private_email, name, return_to, created_at, expires_at, identity_id)
            VALUES (\(tokenDigest), \(link.accountID), \(claims.provider), \(claims.issuer), \(claims.subject),
                \(claims.email), \(claims.emailVerified), \(claims.isPrivateEmail), \(claims.name), \(link.returnTo),
                \(link.createdAt), \(link.expiresAt), \(link.identityID))
            """)
    }

    func pendingLink(tokenDigest: [UInt8], now: Date) throws -> UpstreamPendingLink? {
        try db.query(
            """
            SELECT \(Self.linkColumns) FROM upstream_pending_links
            WHERE token_digest = \(tokenDigest) AND consumed_at IS NULL AND expires_at > \(now)
            """
        ).first.map(Self.link)
    }

    func consumePendingLink(tokenDigest: [UInt8], now: Date) throws -> UpstreamPendingLink? {
        try db.query(
            """
            UPDATE upstream_pending_links SET consumed_at = now()
            WHERE token_digest = \(tokenDigest) AND consumed_at IS NULL AND expires_at > \(now)
            RETURNING \(Self.linkColumns)
            """
        ).first.map(Self.link)
    }

    func account(_ id: UUID) throws -> (email: String, disabled: Bool)? {
        guard
            let row = try db.query(
                """
                SELECT coalesce(e.email, '') AS email, a.disabled_at IS NOT NULL AS disabled
                FROM accounts a LEFT JOIN account_emails e ON e.account_id = a.id
                WHERE a.id = \(id) LIMIT 1
                """
            ).first
        else { return nil }
        return (try row.decode("email"), try row.decode("disabled"))
    }

    func record(_ event: AuditEvent) throws {
        try AuditLog.record(event, on: db)
    }
}
