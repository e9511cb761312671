import Crypto
import Foundation
import HTTPServer
import Postgres

/// The accounts signed in in one browser (an account chooser, as on large sites).
///
/// Every account keeps its own `authentication_sessions` row, found by the digest of its own
/// token and revocable alone. The browser holds the tokens in two HttpOnly cookies: the
/// session cookie names the *current* account (the one every other endpoint sees, unchanged),
/// and the accounts cookie lists the other accounts' tokens, most recently current first.
/// The list is bounded (`SessionCookies.maxAccounts` accounts in all); a sign-in that would
/// exceed it ends the least recently current session. The server never trusts the list: a
/// token counts only while its row is live, and the chooser names sessions by their public
/// id, never by token.
struct BrowserSessions: Sendable, Equatable {
    /// The current account's token (the session cookie).
    var current: String?
    /// The other accounts' tokens (the accounts cookie), most recently current first.
    var others: [String]

    /// Both cookies of the request. Malformed, repeated or surplus entries are dropped.
    init(_ request: HTTPRequest, cookies: SessionCookies) {
        self.init(
            current: request.cookies[cookies.sessionName],
            accountsCookie: request.cookies[cookies.accountsName])
    }

    init(current: String?, accountsCookie: String?) {
        let current = current.flatMap { Self.isPlausible($0) ? $0 : nil }
        self.current = current
        var seen: Set<String> = current.map { [$0] } ?? []
        var others: [String] = []
        for token in (accountsCookie ?? "").split(separator: ".").map(String.init)
        where Self.isPlausible(token) && seen.insert(token).inserted {
            others.append(token)
        }
        self.others = Array(others.prefix(SessionCookies.maxAccounts - 1))
    }

    init(current: String?, others: [String]) {
        self.current = current
        self.others = others
    }

    /// Every token the browser holds, the current one first.
    var all: [String] { (current.map { [$0] } ?? []) + others }

    /// A token can name a session only if it looks like one (32 random bytes, base64url).
    static func isPlausible(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= 64
            && token.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || $0 == 0x2D
                    || $0 == 0x5F
            }
    }

    /// The browser after `token` became current: the previous current account moves to the
    /// front of the list; `token` leaves it.
    func switching(to token: String) -> BrowserSessions {
        let rest = all.filter { $0 != token }
        return BrowserSessions(current: token, others: rest)
    }

    /// The browser after `token` was signed out. Signing out the current account makes the
    /// most recently current other account current (the chooser still lists them all).
    func removing(_ token: String) -> BrowserSessions {
        let rest = all.filter { $0 != token }
        return BrowserSessions(current: rest.first, others: Array(rest.dropFirst()))
    }

    /// The bound at a sign-in: of the browser's `live` sessions of other accounts (in the
    /// browser's order, most recently current first), those that stay beside the new account,
    /// and those beyond the bound, to be ended.
    static func bounded(_ live: [String]) -> (kept: [String], ended: [String]) {
        let kept = Array(live.prefix(SessionCookies.maxAccounts - 1))
        return (kept, Array(live.dropFirst(kept.count)))
    }

    /// The cookies that make the browser hold exactly this set.
    func cookies(_ cookies: SessionCookies) -> [Cookie] {
        [
            current.map(cookies.session) ?? cookies.expiredSession(),
            others.isEmpty ? cookies.expiredAccounts() : cookies.accounts(others),
        ]
    }
}

/// One account signed in in this browser, as the chooser shows it.
struct BrowserAccount: Sendable, Equatable {
    var sessionID: UUID
    var accountID: UUID
    /// The token of its session (never shown; it selects the cookie to set).
    var token: String
    var displayName: String
    var email: String
    var isCurrent: Bool
    var session: CurrentSession

    /// True when `hint` (an email address or the account id, as `login_hint`) names this account.
    func matches(hint: String) -> Bool {
        EmailAddress.normalize(hint) == EmailAddress.normalize(email)
            || hint.lowercased() == accountID.lowercased
    }
}

extension SessionCookies {
    /// Accounts per browser, the current one included. A bound keeps the cookie small and a
    /// shared computer from collecting sessions without end.
    static let maxAccounts = 5

    var accountsName: String { secure ? "__Host-accounts" : "accounts" }

    /// The other accounts' tokens, joined by `.` (never part of a base64url token).
    func accounts(_ tokens: [String]) -> Cookie {
        Cookie(
            name: accountsName, value: tokens.joined(separator: "."), path: "/", maxAge: lifetimeSeconds,
            secure: secure, httpOnly: true, sameSite: .lax)
    }

    func expiredAccounts() -> Cookie {
        Cookie.expired(name: accountsName, path: "/", secure: secure, httpOnly: true, sameSite: .lax)
    }
}

extension SessionStore {
    /// The live sessions among `tokens`, in their order, with their accounts' names and emails
    /// (disabled accounts left out). One statement.
    func accounts(of browser: BrowserSessions, on db: (any SQLExecutor)? = nil) throws -> [BrowserAccount] {
        let tokens = browser.all
        guard !tokens.isEmpty else { return [] }
        let digests = tokens.map { Hex.encode(Self.digest($0)) }
        let rows = try (db ?? pool).query(
            """
            SELECT s.id, s.account_id, encode(s.token_digest, 'hex') AS digest, s.auth_time, s.amr, s.expires_at,
                   s.from_recovery, a.display_name,
                   COALESCE((SELECT e.email FROM account_emails e WHERE e.account_id = a.id
                             ORDER BY e.created_at, e.id LIMIT 1), '') AS email
            FROM authentication_sessions s JOIN accounts a ON a.id = s.account_id
            WHERE s.token_digest = ANY(ARRAY(SELECT decode(h, 'hex') FROM unnest(\(digests)::text[]) AS h))
              AND a.disabled_at IS NULL AND \(raw: Self.live)
            """)
        var byDigest: [String: BrowserAccount] = [:]
        for row in rows {
            let digest: String = try row.decode("digest")
            guard let index = digests.firstIndex(of: digest) else { continue }
            let id: UUID = try row.decode("id")
            let accountID: UUID = try row.decode("account_id")
            byDigest[digest] = BrowserAccount(
                sessionID: id, accountID: accountID, token: tokens[index],
                displayName: try row.decode("display_name"), email: try row.decode("email"),
                isCurrent: tokens[index] == browser.current,
                session: CurrentSession(
                    id: id, accountID: accountID, authTime: try row.decode("auth_time"),
                    amr: try row.decode("amr"),
                    expiresAt: try row.decode("expires_at"), fromRecovery: try row.decode("from_recovery")))
        }
        // One account, one entry: should two live sessions of an account be listed, the first wins.
        var seen: Set<UUID> = []
        return digests.compactMap { byDigest[$0] }.filter { seen.insert($0.accountID).inserted }
    }

    /// What a sign-in as `accountID` does to the browser's other sessions, inside the sign-in's
    /// transaction: a session of the same account ends (signing in again replaces it, as it
    /// always did); sessions of other accounts stay, up to the bound; the least recently current
    /// beyond it end. Returns the tokens kept, in order.
    func keepOthers(of browser: BrowserSessions, signingIn accountID: UUID, on db: some SQLExecutor) throws
        -> [String]
    {
        let tokens = browser.all
        guard !tokens.isEmpty else { return [] }
        let digests = tokens.map { Hex.encode(Self.digest($0)) }
        try db.query(
            """
            UPDATE authentication_sessions SET revoked_at = now()
            WHERE token_digest = ANY(ARRAY(SELECT decode(h, 'hex') FROM unnest(\(digests)::text[]) AS h))
              AND account_id = \(accountID) AND revoked_at IS NULL
            """)
        let live = try accounts(of: browser, on: db).filter { $0.accountID != accountID }.map(\.token)
        let (kept, ended) = BrowserSessions.bounded(live)
        if !ended.isEmpty {
            let endedDigests = ended.map { Hex.encode(Self.digest($0)) }
            try db.query(
                """
                UPDATE authentication_sessions SET revoked_at = now()
                WHERE token_digest = ANY(ARRAY(SELECT decode(h, 'hex') FROM unnest(\(endedDigests)::text[]) AS h))
                  AND revoked_at IS NULL
                """)
        }
        return kept
    }

    /// The accounts cookie after a sign-in as `accountID`: the browser's live sessions of
    /// other accounts (those `keepOthers` kept).
    func accountsCookie(afterSignInOf accountID: UUID, _ request: HTTPRequest) throws -> Cookie {
        let browser = BrowserSessions(request, cookies: cookies)
        let live = try accounts(of: browser).filter { $0.accountID != accountID }.map(\.token)
        let kept = BrowserSessions.bounded(live).kept
        return kept.isEmpty ? cookies.expiredAccounts() : cookies.accounts(kept)
    }
}
