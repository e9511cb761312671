import Foundation

/// What signing out writes.
protocol SignOutStore {
    /// Ends the session with its `session.signed_out` event, in one transaction.
    func endSession(_ session: CurrentSession, clientAddress: String) throws
}

struct PostgresSignOutStore: SignOutStore {
    let sessions: SessionStore

    func endSession(_ session: CurrentSession, clientAddress: String) throws {
        try sessions.signOut(session, clientAddress: clientAddress)
    }
}
