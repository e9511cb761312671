import Foundation

/// What `LogoutFlow` changes: the session it ends.
protocol LogoutStore: Sendable {
    /// Revokes the session with its `session.signed_out` audit event. The database queues the
    /// back-channel logout notifications in the same statement (the
    /// `authentication_sessions_ended` trigger), as it does for every other way a session ends.
    func endSession(_ session: CurrentSession, clientAddress: String, clientID: String?) throws
}

struct PostgresLogoutStore: LogoutStore {
    let sessions: SessionStore

    func endSession(_ session: CurrentSession, clientAddress: String, clientID: String?) throws {
        try sessions.signOut(session, clientAddress: clientAddress, clientID: clientID)
    }
}
