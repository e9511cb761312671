import Foundation
import HTTPServer

/// How a new session is started: for whom, with which methods, from which client, and the
/// session the browser held before (its cookie's token), which ends with it.
struct SessionStart: Sendable {
    var accountID: UUID
    var amr: [String]
    var userAgent: String
    var clientAddress: String
    var previousToken: String?
    /// The browser's other accounts (the accounts cookie). When `addsAccount` is set, a sign-in
    /// as another account keeps them and the previous session (see `BrowserSessions`); without
    /// it the previous session ends, whoever it belonged to.
    var otherTokens: [String] = []
    var addsAccount = false
}

extension SessionStore {
    /// Starts the session of `start`. Without a previous session it is one statement on `db`;
    /// ending the previous one joins it in one transaction (`db`'s own, when it is in one).
    /// `authTime`: as in `create`, the database's time of the sign-in when the caller read it.
    func start(_ start: SessionStart, authTime: Date? = nil, on db: any SQLExecutor) throws -> (
        token: String, session: CurrentSession
    ) {
        if start.addsAccount {
            let browser = BrowserSessions(current: start.previousToken, others: start.otherTokens)
            return try db.transaction { connection in
                _ = try keepOthers(of: browser, signingIn: start.accountID, on: connection)
                return try create(
                    accountID: start.accountID, amr: start.amr, userAgent: start.userAgent,
                    clientAddress: start.clientAddress, authTime: authTime, on: connection)
            }
        }
        guard let previous = start.previousToken else {
            return try create(
                accountID: start.accountID, amr: start.amr, userAgent: start.userAgent,
                clientAddress: start.clientAddress, authTime: authTime, on: db)
        }
        return try db.transaction { connection in
            try create(
                accountID: start.accountID, amr: start.amr, userAgent: start.userAgent,
                clientAddress: start.clientAddress, replacing: previous, authTime: authTime, on: connection)
        }
    }
}

extension SessionStart {
    /// The session a sign-in starts for this request's browser.
    init(_ request: HTTPRequest, accountID: UUID, amr: [String], cookies: SessionCookies) {
        self.init(
            accountID: accountID, amr: amr, userAgent: request.headers["User-Agent"] ?? "",
            clientAddress: request.remoteAddress, previousToken: request.cookies[cookies.sessionName])
    }

    /// The session a sign-in adds to this request's browser: the browser's sessions of other
    /// accounts stay signed in; one of the same account is replaced.
    init(adding request: HTTPRequest, accountID: UUID, amr: [String], cookies: SessionCookies) {
        let browser = BrowserSessions(request, cookies: cookies)
        self.init(
            accountID: accountID, amr: amr, userAgent: request.headers["User-Agent"] ?? "",
            clientAddress: request.remoteAddress, previousToken: browser.current, otherTokens: browser.others,
            addsAccount: true)
    }
}
