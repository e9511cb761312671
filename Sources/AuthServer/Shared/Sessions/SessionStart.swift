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
}

extension SessionStore {
    /// Starts the session of `start`. Without a previous session it is one statement on `db`;
    /// ending the previous one joins it in one transaction (`db`'s own, when it is in one).
    func start(_ start: SessionStart, on db: any SQLExecutor) throws -> (
        token: String, session: CurrentSession
    ) {
        guard let previous = start.previousToken else {
            return try create(
                accountID: start.accountID, amr: start.amr, userAgent: start.userAgent,
                clientAddress: start.clientAddress, on: db)
        }
        return try db.transaction { connection in
            try create(
                accountID: start.accountID, amr: start.amr, userAgent: start.userAgent,
                clientAddress: start.clientAddress, replacing: previous, on: connection)
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
}
