import Foundation

/// Signing out of this browser: the session ends on the server (with everything that ends
/// with it), and the routes expire its cookie.
struct SignOutFlow {
    let services: AccountServices
    let store: any SignOutStore

    init(services: AccountServices, store: (any SignOutStore)? = nil) {
        self.services = services
        self.store = store ?? PostgresSignOutStore(sessions: services.sessions)
    }

    /// For the JSON API: a failure answers as an `APIError`.
    func signOut(_ session: CurrentSession, clientAddress: String) throws(APIError) {
        try services.guarded("signout") { try end(session, clientAddress: clientAddress) }
    }

    /// For the form post: a failure reaches the router as it is.
    func end(_ session: CurrentSession, clientAddress: String) throws {
        try store.endSession(session, clientAddress: clientAddress)
    }
}
