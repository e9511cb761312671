import Crypto
import Foundation
import HTTPServer
import Postgres

/// One row of the account page's session list.
struct SessionSummary: Sendable, Equatable {
    var id: UUID
    var createdAt: Date
    var lastSeenAt: Date
    var amr: [String]
    var userAgent: String
    var clientAddress: String
}

/// Browser sessions in PostgreSQL. The cookie carries a random 256-bit token; only its
/// SHA-256 digest is stored, so a copy of the table signs nobody in.
struct SessionStore: Sendable {
    let pool: PostgresPool
    let settings: Configuration.SessionSettings
    let cookies: SessionCookies
    /// Draws the session ids and cookie tokens.
    var system = TimeAndRandomness.live

    /// Starts a session and returns the token for the cookie (never stored, never logged).
    func create(
        accountID: UUID, amr: [String], userAgent: String = "", clientAddress: String = "",
        replacing previousToken: String? = nil
    ) throws -> (token: String, session: CurrentSession) {
        guard let previousToken else {
            return try create(
                accountID: accountID, amr: amr, userAgent: userAgent, clientAddress: clientAddress, on: pool)
        }
        return try pool.withTransaction { connection in
            try create(
                accountID: accountID, amr: amr, userAgent: userAgent, clientAddress: clientAddress,
                replacing: previousToken, on: connection)
        }
    }

    /// Starts a session inside the caller's transaction (passkey sign-up, recovery). The
    /// session named by `previousToken` (the cookie the browser sent) ends in the same
    /// transaction, whoever it belonged to (password and passkey sign-in add an account
    /// instead: see `BrowserSessions`), with everything that ends with a session
    /// (back-channel logout, the tokens issued under it). `fromRecovery` marks the session a
    /// completed recovery opens (see `CurrentSession`). `authTime`: the database's time of the
    /// sign-in, when a statement of the same sign-in read it; the session starts at that time
    /// and its insert is queued (`SQLExecutor.queue`). Without it the session starts at the
    /// transaction's `now()`, read back from the insert.
    func create(
        accountID: UUID, amr: [String], userAgent: String, clientAddress: String, fromRecovery: Bool = false,
        replacing previousToken: String? = nil, authTime: Date? = nil, on db: some SQLExecutor
    ) throws -> (token: String, session: CurrentSession) {
        if let previousToken, !previousToken.isEmpty, previousToken.utf8.count <= 64 {
            try db.query(
                """
                UPDATE authentication_sessions SET revoked_at = now()
                WHERE token_digest = \(Self.digest(previousToken)) AND revoked_at IS NULL
                """)
        }
        let token = system.timeOrderedToken()
        let id = system.timeOrderedUUID()
        if let authTime {
            let expiresAt = authTime.addingTimeInterval(Double(settings.lifetimeSeconds))
            try db.queue(
                """
                INSERT INTO authentication_sessions
                    (id, account_id, token_digest, amr, auth_time, expires_at, idle_timeout_seconds, user_agent, client_address,
                     from_recovery)
                VALUES (\(id), \(accountID), \(Self.digest(token)), \(amr), \(authTime), \(expiresAt),
                        \(settings.idleTimeoutSeconds), \(String(userAgent.prefix(300))), \(clientAddress), \(fromRecovery))
                """)
            return (
                token,
                CurrentSession(
                    id: id, accountID: accountID, authTime: authTime, amr: amr, expiresAt: expiresAt,
                    fromRecovery: fromRecovery)
            )
        }
        let query: PostgresQuery = """
            INSERT INTO authentication_sessions
                (id, account_id, token_digest, amr, auth_time, expires_at, idle_timeout_seconds, user_agent, client_address,
                 from_recovery)
            VALUES (\(id), \(accountID), \(Self.digest(token)), \(amr), now(),
                    now() + make_interval(secs => \(settings.lifetimeSeconds)::float8), \(settings.idleTimeoutSeconds),
                    \(String(userAgent.prefix(300))), \(clientAddress), \(fromRecovery))
            RETURNING auth_time, expires_at
            """
        let rows = try db.query(query)
        guard let row = rows.first else {
            throw PostgresError(kind: .other, detail: "session insert returned no row")
        }
        return (
            token,
            CurrentSession(
                id: id, accountID: accountID, authTime: try row.decode("auth_time"), amr: amr,
                expiresAt: try row.decode("expires_at"), fromRecovery: fromRecovery)
        )
    }

    /// The condition every query that reads `authentication_sessions` as signed in applies:
    /// not revoked, within the absolute lifetime (however recently used), and not idle too long.
    /// `idle_expires_at` is `last_seen_at + idle_timeout_seconds`, kept by a trigger on every
    /// write of either (migration 0026), so the purge can find idle sessions by an index.
    static let live = "revoked_at IS NULL AND expires_at > now() AND idle_expires_at > now()"

    /// What /authorize needs in one round trip: the live session (if the token names one), the
    /// database's time, and the scopes its account consented to for `consentClientID`.
    struct Lookup: Sendable {
        var session: CurrentSession?
        var now: Date
        var consentedScopes: [String]?
    }

    /// The live session for a cookie token: not revoked, not expired, not idle too long.
    /// A lookup moves the idle deadline at most once a minute, with a second statement: the
    /// other lookups only read, so they write no row version and wait for no WAL flush.
    func session(token: String) throws -> CurrentSession? {
        guard !token.isEmpty, token.utf8.count <= 64 else { return nil }
        return try lookUp(token: token, consentClientID: nil).session
    }

    /// The session (as `session(token:)`), the time, and the account's consent for a client.
    func lookUp(token: String?, consentClientID: String?) throws -> Lookup {
        // A missing or implausible token matches no row; the time and nothing else come back.
        let digest = token.flatMap { !$0.isEmpty && $0.utf8.count <= 64 ? Self.digest($0) : nil }
        let rows = try pool.query(
            """
            SELECT now() AS now, live.id, live.account_id, live.auth_time, live.amr, live.expires_at, live.from_recovery,
                   live.last_seen_at < now() - interval '1 minute' AS stale,
                   (SELECT c.scopes FROM consents c
                    WHERE c.account_id = live.account_id AND c.client_id = \(consentClientID)) AS consented_scopes
            FROM (SELECT 1) AS one LEFT JOIN (
                SELECT id, account_id, auth_time, amr, expires_at, last_seen_at, from_recovery FROM authentication_sessions
                WHERE token_digest = \(digest) AND \(raw: Self.live)
                  AND NOT EXISTS (
                      SELECT 1 FROM accounts a
                      WHERE a.id = authentication_sessions.account_id AND a.disabled_at IS NOT NULL)
            ) AS live ON true
            """)
        guard let row = rows.first else {
            throw PostgresError(kind: .other, detail: "session lookup returned no row")
        }
        var lookup = Lookup(session: nil, now: try row.decode("now"), consentedScopes: nil)
        guard let id: UUID = try row.decode("id") else { return lookup }
        lookup.session = CurrentSession(
            id: id, accountID: try row.decode("account_id"), authTime: try row.decode("auth_time"),
            amr: try row.decode("amr"), expiresAt: try row.decode("expires_at"),
            fromRecovery: try row.decode("from_recovery"))
        lookup.consentedScopes = try row.decode("consented_scopes")
        if try row.decode("stale", as: Bool.self) {
            // Committed without waiting for the disk: a move lost in a PostgreSQL crash only
            // brings the idle deadline forward.
            try pool.query(
                """
                UPDATE authentication_sessions SET last_seen_at = now()
                FROM \(.asynchronousCommit)
                WHERE id = \(id) AND last_seen_at < now() - interval '1 minute'
                """)
        }
        return lookup
    }

    /// The session named by the request's session cookie, if it is live.
    func current(_ request: HTTPRequest) throws -> CurrentSession? {
        guard let token = request.cookies[cookies.sessionName] else { return nil }
        return try session(token: token)
    }

    /// Revokes one of the account's sessions; false when there is no such live session.
    func revoke(id: UUID, accountID: UUID) throws -> Bool {
        try pool.query(
            """
            UPDATE authentication_sessions SET revoked_at = now()
            WHERE id = \(id) AND account_id = \(accountID) AND revoked_at IS NULL
            """
        ).affectedRows == 1
    }

    /// Records a re-authentication: the session's `auth_time` moves to now, `amr` becomes
    /// `amr`, and a session opened by a recovery counts as an ordinary one from now on. False
    /// when the session ended meanwhile.
    static func reauthenticate(_ session: CurrentSession, amr: [String], on db: some SQLExecutor) throws
        -> Bool
    {
        try db.query(
            """
            UPDATE authentication_sessions SET auth_time = now(), amr = \(amr), from_recovery = false
            WHERE id = \(session.id) AND account_id = \(session.accountID) AND revoked_at IS NULL
            """
        ).affectedRows == 1
    }

    /// Whether the session is still live, its row share-locked until the caller's transaction
    /// ends: a change that the session asked for then commits before anything that ends the
    /// session (a password change, sign-out everywhere), which waits and sees it, or finds the
    /// session ended and is refused.
    static func holdLive(_ session: CurrentSession, on db: some SQLExecutor) throws -> Bool {
        try !db.query(
            """
            SELECT 1 FROM authentication_sessions
            WHERE id = \(session.id) AND account_id = \(session.accountID) AND \(raw: live)
            FOR SHARE
            """
        ).isEmpty
    }

    /// Ends every live session of the account but `keep` (none when nil); returns how many.
    /// Setting `revoked_at` fires the trigger that queues back-channel logout.
    static func revokeAll(accountID: UUID, except keep: UUID?, on db: some SQLExecutor) throws -> Int {
        try db.query(
            """
            UPDATE authentication_sessions SET revoked_at = now()
            WHERE account_id = \(accountID) AND revoked_at IS NULL AND (\(keep)::uuid IS NULL OR id <> \(keep))
            """
        ).affectedRows
    }

    /// Ends the signed-in user's own session (sign-out button, RP-initiated logout) with its
    /// `session.signed_out` event, in one transaction.
    func signOut(_ session: CurrentSession, clientAddress: String, clientID: String? = nil) throws {
        try pool.withTransaction { connection in
            try connection.query(
                """
                UPDATE authentication_sessions SET revoked_at = now()
                WHERE id = \(session.id) AND account_id = \(session.accountID) AND revoked_at IS NULL
                """)
            try AuditLog.record(
                AuditEvent(
                    kind: .signedOut, actor: .user, accountID: session.accountID, clientID: clientID,
                    clientAddress: clientAddress), on: connection)
        }
    }

    /// The account's live sessions, most recently used first.
    func list(accountID: UUID) throws -> [SessionSummary] { try Self.list(accountID: accountID, on: pool) }

    static func list(accountID: UUID, on db: some SQLExecutor) throws -> [SessionSummary] {
        try db.query(
            """
            SELECT id, created_at, last_seen_at, amr, user_agent, client_address FROM authentication_sessions
            WHERE account_id = \(accountID) AND \(raw: live)
            ORDER BY last_seen_at DESC, created_at DESC
            """
        ).map { row in
            SessionSummary(
                id: try row.decode("id"), createdAt: try row.decode("created_at"),
                lastSeenAt: try row.decode("last_seen_at"), amr: try row.decode("amr"),
                userAgent: try row.decode("user_agent"), clientAddress: try row.decode("client_address"))
        }
    }

    /// A session's row key (`authentication_sessions.token_digest`), from its cookie's token.
    static func digest(_ token: String) -> [UInt8] { TimeOrderedToken.key(token) }
}

/// Cookie names and attributes. Under https the names carry the `__Host-` prefix, which
/// makes browsers insist on `Secure`, `Path=/` and no `Domain`, so a sibling subdomain
/// cannot plant or overwrite them.
struct SessionCookies: Sendable {
    let secure: Bool
    let lifetimeSeconds: Int

    init(configuration: Configuration) {
        secure = configuration.usesHTTPS
        lifetimeSeconds = configuration.sessions.lifetimeSeconds
    }

    var sessionName: String { secure ? "__Host-session" : "session" }
    var csrfName: String { secure ? "__Host-csrf" : "csrf" }

    func session(_ token: String) -> Cookie {
        Cookie(
            name: sessionName, value: token, path: "/", maxAge: lifetimeSeconds, secure: secure,
            httpOnly: true, sameSite: .lax)
    }

    func expiredSession() -> Cookie {
        Cookie.expired(name: sessionName, path: "/", secure: secure, httpOnly: true, sameSite: .lax)
    }

    func csrf(_ token: String) -> Cookie {
        Cookie(name: csrfName, value: token, path: "/", secure: secure, httpOnly: true, sameSite: .lax)
    }
}
