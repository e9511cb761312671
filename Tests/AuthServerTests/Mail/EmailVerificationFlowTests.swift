import Foundation
import LoginPages
import Testing

@testable import AuthServer

/// `EmailVerificationFlow.verify` against an in-memory `EmailVerificationStore` and a fixed
/// clock: the order of its steps and its decisions, without a database.
@Suite struct EmailVerificationFlowTests {
    /// One account holding one address with one live code; records the flow's calls.
    final class MemoryStore: EmailVerificationStore {
        let email = AccountEmail(id: UUID(), accountID: UUID(), email: "someone@example.com", verifiedAt: nil)
        let salt = [UInt8](repeating: 3, count: 16)
        lazy var code = VerificationCodeRecord(
            id: UUID(), salt: salt, digest: VerificationCode.digest(salt: salt, code: "123456"), attempts: 0,
            consumed: false, expired: false, email: email)
        var elsewhere = false
        var losers: [UUID] = []
        var calls: [String] = []
        var events: [AuditEvent] = []

        var target: VerificationTarget {
            VerificationTarget(
                codeID: code.id, accountID: email.accountID, normalizedEmail: "someone@example.com")
        }

        func transaction<T>(_ body: (any EmailVerificationStore) throws -> T) throws -> T {
            calls.append("begin")
            defer { calls.append("end") }
            return try body(self)
        }
        func primaryEmail(accountID: UUID, lock: Bool) throws -> AccountEmail? {
            calls.append("primaryEmail")
            return accountID == email.accountID ? email : nil
        }
        func newestTarget(accountEmailID: UUID) throws -> VerificationTarget? {
            calls.append("newestTarget")
            return target
        }
        func codeID(linkDigest: [UInt8]) throws -> UUID? {
            calls.append("codeID")
            return code.id
        }
        func target(codeID: UUID) throws -> VerificationTarget? {
            calls.append("target")
            return codeID == code.id ? target : nil
        }
        func spendGuess(accountID: UUID, normalizedEmail: String, settings: EmailVerificationSettings) throws
            -> VerificationGuessBudget.Decision
        {
            calls.append("spendGuess")
            return .allowed
        }
        func lockHolders(normalizedEmail: String) throws { calls.append("lockHolders") }
        func lockedCode(id: UUID) throws -> VerificationCodeRecord? {
            calls.append("lockedCode")
            return code
        }
        func countWrongGuess(codeID: UUID) throws { calls.append("countWrongGuess") }
        func verifiedElsewhere(normalizedEmail: String, besides accountID: UUID) throws -> Bool {
            calls.append("verifiedElsewhere")
            return elsewhere
        }
        func consumeCode(id: UUID) throws { calls.append("consumeCode") }
        func markVerified(accountEmailID: UUID) throws -> Date? {
            calls.append("markVerified")
            return nil
        }
        func release(normalizedEmail: String, keeping accountEmailID: UUID) throws -> [UUID] {
            calls.append("release")
            return losers
        }
        func record(_ event: AuditEvent) throws { events.append(event) }

        func lastCodeAge(accountEmailID: UUID) throws -> Double? { fatalError("not used") }
        func replaceCode(
            id: UUID, accountEmailID: UUID, salt: [UInt8], digest: [UInt8], linkDigest: [UInt8],
            lifetimeSeconds: Int
        ) throws { fatalError("not used") }
        func verifiedHolder(accountEmailID: UUID, besides accountID: UUID) throws -> String? {
            fatalError("not used")
        }
        func currentCodeID(accountEmailID: UUID) throws -> UUID? { fatalError("not used") }
        func isConsumedAndVerified(linkDigest: [UInt8]) throws -> Bool { fatalError("not used") }
    }

    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func flow(_ store: MemoryStore) throws -> EmailVerificationFlow {
        let system = TimeAndRandomness(now: { now }, randomBytes: { [UInt8](repeating: 1, count: $0) })
        return EmailVerificationFlow(services: try .offline(system: system), store: store)
    }

    @Test func theRightCodeVerifiesReleasesTheOtherHoldersAndAuditsBoth() throws {
        let store = MemoryStore()
        let loser = UUID()
        store.losers = [loser]
        let outcome = try Self.flow(store).verify(
            .code("123 456", codeID: nil, accountID: store.email.accountID), clientAddress: "192.0.2.1",
            language: .en)
        var verified = store.email
        verified.verifiedAt = Self.now
        #expect(outcome == .verified(verified))
        #expect(
            store.calls == [
                "begin", "primaryEmail", "newestTarget", "spendGuess", "lockHolders", "lockedCode",
                "verifiedElsewhere", "consumeCode", "markVerified", "release", "end",
            ])
        #expect(store.events.map(\.kind) == [.emailVerified, .emailAddressReleased])
        #expect(store.events.first?.detail == ["via": "code"])
        #expect(store.events.last?.accountID == loser)
        #expect(store.events.last?.detail == ["verified_by": store.email.accountID.uuidString.lowercased()])
    }

    @Test func aWrongCodeCountsOnTheCodeAndVerifiesNothing() throws {
        let store = MemoryStore()
        let outcome = try Self.flow(store).verify(
            .code("654321", codeID: store.code.id, accountID: nil), clientAddress: "192.0.2.1", language: .en)
        #expect(outcome == .invalid)
        #expect(store.calls.suffix(3) == ["lockedCode", "countWrongGuess", "end"])
        #expect(store.events.isEmpty)
    }

    @Test func aLinkSpendsNoGuessButCannotWinAnAddressVerifiedElsewhere() throws {
        let store = MemoryStore()
        store.elsewhere = true
        let outcome = try Self.flow(store).verify(
            .link(token: "t"), clientAddress: "192.0.2.1", language: .en)
        #expect(outcome == .invalid)
        #expect(!store.calls.contains("spendGuess"))
        #expect(!store.calls.contains("consumeCode"))
        #expect(store.events.isEmpty)
    }

    @Test func anExhaustedCodeIsExpiredBeforeItIsCompared() throws {
        let store = MemoryStore()
        store.code.attempts = 5
        let outcome = try Self.flow(store).verify(
            .code("123456", codeID: store.code.id, accountID: nil), clientAddress: "192.0.2.1", language: .en)
        #expect(outcome == .expired)
        #expect(!store.calls.contains("countWrongGuess"))
        #expect(!store.calls.contains("consumeCode"))
    }
}
