import Foundation
import HTTPServer
import LoginPages
import Postgres

/// The account's linked upstream identities: listed, and unlinked unless the identity is the
/// account's last way to sign in (`CredentialPolicy.unlinkIdentity`).
struct AccountIdentitiesFlow {
    let services: AccountServices
    let store: any AccountIdentitiesStore

    init(services: AccountServices, store: (any AccountIdentitiesStore)? = nil) {
        self.services = services
        self.store = store ?? PostgresAccountIdentitiesStore(db: services.pool)
    }

    static let lastWayIn = APIError(
        status: .conflict, code: "last_credential",
        message: "This is your only way to sign in. Add a passkey or set a password first.")

    func list(session: CurrentSession) throws -> [UpstreamIdentity] {
        try store.identities(accountID: session.accountID)
    }

    /// The count and the removal in one transaction, under the account's lock, which passkey
    /// and password removals take too: two removals never both pass on a stale count.
    func unlink(session: CurrentSession, id: UUID, request: HTTPRequest) throws {
        let accountID = session.accountID
        let provider = try store.transaction { store -> String? in
            let held = try store.lockedWaysIn(accountID: accountID)
            guard let identity = held.identities.first(where: { $0.id == id }) else { return nil }
            guard
                CredentialPolicy.unlinkIdentity(
                    identities: held.identities.count, passkeys: held.passkeys, hasPassword: held.hasPassword)
                    == .allowed
            else { throw Self.lastWayIn }
            guard try store.delete(id: id, accountID: accountID) else { return nil }
            try store.record(
                AuditEvent(
                    kind: .upstreamUnlinked, actor: .user, accountID: accountID,
                    clientAddress: request.remoteAddress, detail: ["provider": identity.provider]))
            return identity.provider
        }
        guard provider != nil else { throw APIError.notFound }
        services.log.info("account.identities", ["step": "unlinked", "account": accountID.uuidString])
    }
}

/// What the identities of /account read and write.
protocol AccountIdentitiesStore {
    func transaction<T>(_ body: (any AccountIdentitiesStore) throws -> T) throws -> T
    func identities(accountID: UUID) throws -> [UpstreamIdentity]
    /// Locks the account, then counts its ways in.
    func lockedWaysIn(accountID: UUID) throws -> (
        identities: [UpstreamIdentity], passkeys: Int, hasPassword: Bool
    )
    /// Removes the link; Apple's refresh token it held is queued for revocation at Apple.
    func delete(id: UUID, accountID: UUID) throws -> Bool
    func record(_ event: AuditEvent) throws
}

struct PostgresAccountIdentitiesStore: AccountIdentitiesStore {
    let db: any SQLExecutor

    func transaction<T>(_ body: (any AccountIdentitiesStore) throws -> T) throws -> T {
        try db.transaction { connection in try body(PostgresAccountIdentitiesStore(db: connection)) }
    }

    func identities(accountID: UUID) throws -> [UpstreamIdentity] {
        try UpstreamIdentityStore.list(accountID: accountID, on: db)
    }

    func lockedWaysIn(accountID: UUID) throws -> (
        identities: [UpstreamIdentity], passkeys: Int, hasPassword: Bool
    ) {
        try AccountStore.lock(accountID: accountID, on: db)
        let passkeys: Int =
            try db.query("SELECT count(*) AS n FROM passkey_credentials WHERE account_id = \(accountID)")
            .first?.decode("n") ?? 0
        let hasPassword = try AccountStore.passwordHash(accountID: accountID, on: db) != nil
        return (try UpstreamIdentityStore.list(accountID: accountID, on: db), passkeys, hasPassword)
    }

    func delete(id: UUID, accountID: UUID) throws -> Bool {
        try UpstreamTokenRevocations.queue(accountID: accountID, identityID: id, on: db)
        return try UpstreamIdentityStore.delete(id: id, accountID: accountID, on: db)
    }

    func record(_ event: AuditEvent) throws {
        try AuditLog.record(event, on: db)
    }
}
