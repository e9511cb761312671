import Foundation

/// What `LogoutFlow` reads and changes: the browser's session.
protocol LogoutStore: Sendable {
    /// The live session the cookie token names, if any.
    func session(token: String?) throws -> CurrentSession?
    /// Revokes the session with its `session.signed_out` audit event. The database queues the
    /// back-channel logout notifications in the same statement (the
    /// `authentication_sessions_ended` trigger), as it does for every other way a session ends.
    func endSession(_ session: CurrentSession, clientAddress: String, clientID: String?) throws
}

struct PostgresLogoutStore: LogoutStore {
    let sessions: SessionStore

    func session(token: String?) throws -> CurrentSession? {
        guard let token else { return nil }
        return try sessions.session(token: token)
    }

    func endSession(_ session: CurrentSession, clientAddress: String, clientID: String?) throws {
        try sessions.signOut(session, clientAddress: clientAddress, clientID: clientID)
    }
}
