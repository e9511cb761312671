import Foundation

/// What `LogoutFlow` reads and changes: the browser's sessions.
protocol LogoutStore: Sendable {
    /// The browser's live sessions, the current one first.
    func accounts(of browser: BrowserSessions) throws -> [BrowserAccount]
    /// Revokes the session with its `session.signed_out` audit event. The database queues the
    /// back-channel logout notifications in the same statement (the
    /// `authentication_sessions_ended` trigger), as it does for every other way a session ends.
    func endSession(_ session: CurrentSession, clientAddress: String, clientID: String?) throws
}

struct PostgresLogoutStore: LogoutStore {
    let sessions: SessionStore

    func accounts(of browser: BrowserSessions) throws -> [BrowserAccount] {
        try sessions.accounts(of: browser)
    }

    func endSession(_ session: CurrentSession, clientAddress: String, clientID: String?) throws {
        try sessions.signOut(session, clientAddress: clientAddress, clientID: clientID)
    }
}
