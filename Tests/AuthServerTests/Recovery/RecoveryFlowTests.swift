import Crypto
import Foundation
import Testing
import WebAuthnCore

@testable import AuthServer

/// `RecoveryFlow.verify` against an in-memory `RecoveryStore` and a fixed random source: the
/// steps and their order, without a database.
@Suite struct RecoveryFlowTests {
    /// Records what the flow asked of it; only what `verify` uses is implemented.
    final class MemoryStore: RecoveryStore {
        var codes: [RecoveryCodeRecord] = []
        var codeAccount = UUID()
        var calls: [String] = []
        var sessions: [(id: UUID, accountID: UUID, token: String)] = []
        var inTransaction = false

        func transaction<T>(_ body: (any RecoveryStore) throws -> T) throws -> T {
            inTransaction = true
            defer { inTransaction = false }
            return try body(self)
        }

        func countRequest(
            _ step: RecoveryThrottle.Step, email: String, client: String,
            settings: Configuration.RecoverySettings
        ) throws -> Int? {
            calls.append("countRequest \(email)")
            return nil
        }

        func recentCodes(normalizedEmail: String) throws -> [RecoveryCodeRecord] {
            calls.append("recentCodes \(normalizedEmail)")
            return codes
        }

        func consumeCode(id: UUID, maxAttempts: Int) throws -> UUID? {
            calls.append("consumeCode inTransaction=\(inTransaction)")
            return codeAccount
        }

        func countWrongCode(normalizedEmail: String) throws {
            calls.append("countWrongCode \(normalizedEmail)")
        }

        func createSession(id: UUID, accountID: UUID, token: String, lifetimeSeconds: Int) throws {
            calls.append("createSession inTransaction=\(inTransaction)")
            sessions.append((id, accountID, token))
        }

        func target(normalizedEmail: String) throws -> RecoveryTarget? { fatalError("not used") }
        func probeCodes(normalizedEmail: String) throws { fatalError("not used") }
        func insertCode(
            id: UUID, accountID: UUID, normalizedEmail: String, salt: [UInt8], digest: [UInt8],
            lifetimeSeconds: Int
        ) throws { fatalError("not used") }
        func liveSession(token: String) throws -> RecoverySession? { fatalError("not used") }
        func completeSession(token: String) throws -> RecoverySession? { fatalError("not used") }
        func createPasskeyChallenge(id: UUID, sessionID: UUID, challenge: [UInt8], lifetimeSeconds: Int)
            throws
        {
            fatalError("not used")
        }
        func consumePasskeyChallenge(id: UUID, sessionID: UUID) throws -> [UInt8]? { fatalError("not used") }
        func account(_ id: UUID) throws -> AccountSummary? { fatalError("not used") }
        func passkeys(accountID: UUID) throws -> [PasskeyRecord] { fatalError("not used") }
        func addPasskey(_ registration: VerifiedRegistration, accountID: UUID, name: String) throws -> Bool {
            fatalError("not used")
        }
        func setPassword(accountID: UUID, hash: String) throws { fatalError("not used") }
        func endSessions(accountID: UUID, keep: UUID?, reason: SignOutEverywhere.Reason) throws -> Int {
            fatalError("not used")
        }
        func openSession(
            accountID: UUID, amr: [String], userAgent: String, clientAddress: String,
            replacing previousToken: String?
        ) throws -> (token: String, session: CurrentSession) { fatalError("not used") }
        func record(_ event: AuditEvent) throws { fatalError("not used") }
    }

    static let salt = [UInt8](repeating: 7, count: 16)

    /// A flow whose random source yields only 0x2A bytes, over `store`; no database is reached.
    static func flow(_ store: MemoryStore) throws -> RecoveryFlow {
        let system = TimeAndRandomness(
            now: { Date(timeIntervalSince1970: 0) }, randomBytes: { [UInt8](repeating: 0x2A, count: $0) })
        return RecoveryFlow(services: try .offline(system: system), store: store)
    }

    static func code(_ code: String, expired: Bool = false, consumed: Bool = false) -> RecoveryCodeRecord {
        RecoveryCodeRecord(
            id: UUID(), salt: salt, digest: RecoveryCode.digest(code, salt: salt), attempts: 0,
            expired: expired,
            consumed: consumed)
    }

    @Test func theRightCodeOpensASessionWithADrawnTokenInOneTransaction() throws {
        let store = MemoryStore()
        store.codes = [Self.code("12345678")]
        let token = try Self.flow(store).verify(
            email: " Someone@Example.COM ", code: "1234-5678", clientAddress: "192.0.2.1")
        #expect(token == Base64URL.encode([UInt8](repeating: 0x2A, count: 32)))
        #expect(store.sessions.map(\.accountID) == [store.codeAccount])
        #expect(store.sessions.map(\.token) == [token])
        #expect(
            store.calls == [
                "countRequest someone@example.com", "recentCodes someone@example.com",
                "consumeCode inTransaction=true", "createSession inTransaction=true",
            ])
    }

    @Test func aWrongCodeCountsAgainstTheAddressAndOpensNothing() throws {
        let store = MemoryStore()
        store.codes = [Self.code("12345678")]
        #expect(throws: APIError.recoveryCodeInvalid) {
            try Self.flow(store).verify(
                email: "someone@example.com", code: "87654321", clientAddress: "192.0.2.1")
        }
        #expect(store.calls.last == "countWrongCode someone@example.com")
        #expect(store.sessions.isEmpty)
    }

    @Test func aUsedCodeIsInvalidAndAnExpiredOneSaysSo() throws {
        let store = MemoryStore()
        store.codes = [Self.code("12345678", consumed: true)]
        #expect(throws: APIError.recoveryCodeInvalid) {
            try Self.flow(store).verify(
                email: "someone@example.com", code: "12345678", clientAddress: "192.0.2.1")
        }
        store.codes = [Self.code("12345678", expired: true)]
        #expect(throws: APIError.recoveryCodeExpired) {
            try Self.flow(store).verify(
                email: "someone@example.com", code: "12345678", clientAddress: "192.0.2.1")
        }
        #expect(store.sessions.isEmpty)
        #expect(!store.calls.contains { $0.hasPrefix("countWrongCode") })
    }
}
