import Crypto
import Foundation
import HTTPServer
import Postgres
import Testing
import WebAuthnCore

@testable import AuthServer

/// The passkey-management flow against an in-memory store and a fixed clock and random
/// source: no database, no server.
@Suite("Passkey management flow")
struct PasskeyManagementFlowTests {
    /// Records what the flow asks of its store; answers from its fields.
    final class MemoryStore: PasskeyManagementStore {
        var account: AccountSummary?
        var held: (passkeys: Int, hasPassword: Bool) = (0, false)
        var challenges: [(id: UUID, challenge: [UInt8], accountID: UUID, lifetimeSeconds: Int)] = []
        var inTransaction = false
        var countedInTransaction = false
        var deleted: [UUID] = []

        func transaction<T>(_ body: (any PasskeyManagementStore) throws -> T) throws -> T {
            inTransaction = true
            defer { inTransaction = false }
            return try body(self)
        }
        func account(_ id: UUID) throws -> AccountSummary? { account }
        func passkeys(accountID: UUID) throws -> [PasskeyRecord] { [] }
        func createRegistrationChallenge(id: UUID, challenge: [UInt8], accountID: UUID, lifetimeSeconds: Int)
        {
            challenges.append((id, challenge, accountID, lifetimeSeconds))
        }
        func consumeRegistrationChallenge(id: UUID, accountID: UUID) throws -> (
            challenge: [UInt8], conditional: Bool
        )? { nil }
        func insert(_ registration: VerifiedRegistration, id: UUID, accountID: UUID, name: String) throws
            -> PasskeyRecord
        { throw PasskeyStore.InsertError.credentialExists }
        func rename(id: UUID, accountID: UUID, name: String) throws -> Bool { false }
        func lockedCredentials(accountID: UUID) throws -> (passkeys: Int, hasPassword: Bool) {
            countedInTransaction = inTransaction
            return held
        }
        func passkeyName(id: UUID, accountID: UUID) throws -> String? { "Passkey" }
        func delete(id: UUID, accountID: UUID) throws -> Bool {
            deleted.append(id)
            return true
        }
        func record(_ event: AuditEvent) throws {}
    }

    static let accountID = UUID(uuidString: "6F1C2B8E-2D4A-4C35-9B0E-1F2A3B4C5D6E")!
    static let session = CurrentSession(
        id: UUID(uuidString: "0B7E4E8A-9C1D-4F2B-8A3C-5D6E7F8091A2")!, accountID: accountID,
        authTime: Date(timeIntervalSince1970: 1_800_000_000), amr: ["pwd"],
        expiresAt: Date(timeIntervalSince1970: 1_800_086_400))

    static func flow(_ store: MemoryStore) -> PasskeyManagementFlow {
        let configuration = Configuration(
            issuer: "http://localhost:8080", listen: .init(host: "127.0.0.1", port: 0),
            databaseURL: "postgresql://localhost/unused", dataDirectory: "var", publicDirectory: "public",
            tls: nil, http: .init(), database: .init(), clients: [])
        // Every random byte is 7; the clock stands still.
        let system = TimeAndRandomness(
            now: { Date(timeIntervalSince1970: 1_800_000_060) },
            randomBytes: { [UInt8](repeating: 7, count: $0) })
        let services = AccountServices(
            configuration: configuration, pool: PostgresPool(url: configuration.databaseURL!),
            log: Log(write: { _ in }), hasher: TestApplication.hasher, system: system)
        return PasskeyManagementFlow(services: services, store: store)
    }

    @Test func theChallengeAndItsIdComeFromTheInjectedSource() throws {
        let store = MemoryStore()
        store.account = AccountSummary(
            id: Self.accountID, displayName: "Ann", email: "ann@example.com", userHandle: [1, 2, 3],
            hasPassword: true, createdAt: Date(timeIntervalSince1970: 1_700_000_000))
        let started = try Self.flow(store).registrationStart(session: Self.session)
        let stored = try #require(store.challenges.first)
        #expect(stored.challenge == [UInt8](repeating: 7, count: 32))
        #expect(stored.id == started.challengeID)
        #expect(stored.accountID == Self.accountID)
        #expect(started.options.challenge == Base64URL.encode(stored.challenge))
        #expect(started.options.authenticatorSelection?.userVerification == .required)
    }

    @Test func theLastCredentialIsRefusedBeforeAnythingIsDeleted() throws {
        let store = MemoryStore()
        store.held = (passkeys: 1, hasPassword: false)
        let request = HTTPRequest(method: .delete, target: "/api/passkeys/x")
        #expect(throws: PasskeyManagementFlow.lastCredential) {
            try Self.flow(store).delete(session: Self.session, id: UUID(), request: request)
        }
        #expect(store.countedInTransaction)
        #expect(store.deleted.isEmpty)
    }
}
