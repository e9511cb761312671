import Foundation
import Testing

@testable import AuthServer

/// The operator's flows over an in-memory store: what each command writes and in which
/// order, without a database.
@Suite struct AdminFlowTests {
    /// Records every call; `disabled`, `taken` and `revoked` script the answers.
    final class RecordingStore: AdminStore {
        var calls: [String] = []
        var events: [AuditEvent] = []
        var disabled = false
        var taken: Set<String> = []
        var revoked: [UUID] = []

        func transaction<T>(_ body: (any AdminStore) throws -> T) throws -> T {
            calls.append("begin")
            defer { calls.append("end") }
            return try body(self)
        }
        func resolve(_ reference: AdminFlow.AccountReference) throws -> UUID? { nil }
        func list(_ filter: AdminFlow.ListFilter) throws -> [AccountListing] { [] }
        func details(accountID: UUID) throws -> AccountDetails? { nil }
        func sessions(accountID: UUID) throws -> [SessionListing] { [] }
        func email(accountID: UUID) throws -> String? { "ada@example.com" }
        func markDisabled(accountID: UUID) throws -> Bool {
            calls.append("markDisabled")
            defer { disabled = true }
            return !disabled
        }
        func markEnabled(accountID: UUID) throws -> Bool { false }
        func revokeSessions(accountID: UUID) throws -> Int {
            calls.append("revokeSessions")
            return 2
        }
        func revokeSessions(accountID: UUID?, sessionID: UUID?) throws -> [UUID] { revoked }
        func revokeAllTokens(accountID: UUID, reason: String) throws {
            calls.append("revokeAllTokens \(reason)")
        }
        func signOutEverywhere(accountID: UUID) throws -> Int { 0 }
        func insertAccount(id: UUID, displayName: String, email: EmailAddress, userHandle: [UInt8]) throws {
            if taken.contains(email.normalized) { throw AccountStore.CreateError.emailTaken }
            calls.append("insertAccount \(email.normalized)")
        }
        func setPassword(accountID: UUID, hash: String) throws { calls.append("setPassword") }
        func savepoint(_ body: () throws -> Void) throws -> Bool {
            do {
                try body()
                return true
            } catch AccountStore.CreateError.emailTaken {
                return false
            }
        }
        func deleteAccount(accountID: UUID) throws -> Bool { false }
        func record(_ event: AuditEvent) throws {
            calls.append("record \(event.kind.rawValue)")
            events.append(event)
        }
        func auditEvents(_ query: AuditQuery) throws -> [AuditRecord] { [] }
    }

    @Test func disablingEndsSessionsAndTokensWithOneEventInOneTransaction() throws {
        let store = RecordingStore()
        let flow = AdminFlow(store: store)
        let id = UUID()
        #expect(try flow.disable(accountID: id))
        #expect(
            store.calls == [
                "begin", "markDisabled", "revokeSessions", "revokeAllTokens account_disabled",
                "record account.disabled", "end",
            ])
        #expect(store.events.first?.detail == ["sessions_revoked": "2"])
        #expect(store.events.first?.accountID == id)

        // Already disabled: nothing else happens.
        store.calls = []
        #expect(try !flow.disable(accountID: id))
        #expect(store.calls == ["begin", "markDisabled", "end"])
    }

    @Test func anImportWithATakenAddressReportsEveryDuplicate() throws {
        let store = RecordingStore()
        store.taken = ["b@example.com", "c@example.com"]
        let entries = ["a", "b", "c"].map {
            AccountImport.Entry(
                email: EmailAddress("\($0)@example.com")!, name: $0, passwordHash: "$argon2id$v=19$x$y$z")
        }
        let outcome = try AdminFlow(store: store).importAccounts(entries)
        #expect(
            outcome
                == .refused(problems: [
                    "[1].email: an account with b@example.com already exists",
                    "[2].email: an account with c@example.com already exists",
                ]))
        store.taken = []
        #expect(try AdminFlow(store: store).importAccounts(entries) == .imported(count: 3))
    }

    @Test func revokingCountsSessionsPerAccount() throws {
        let store = RecordingStore()
        let (first, second) = (UUID(), UUID())
        store.revoked = [first, second, first]
        #expect(try AdminFlow(store: store).revokeSessions(accountID: nil, sessionID: nil) == 3)
        #expect(
            Dictionary(uniqueKeysWithValues: store.events.map { ($0.accountID!, $0.detail["count"]!) })
                == [first: "2", second: "1"])
    }

    @Test func anAccountIsNamedByIdOrByNormalizedAddress() {
        let id = UUID()
        #expect(AdminFlow.AccountReference(id.uuidString) == .id(id))
        #expect(AdminFlow.AccountReference(id.lowercased) == .id(id))
        #expect(
            AdminFlow.AccountReference("Ada@Example.COM")
                == .email(normalized: EmailAddress.normalize("Ada@Example.COM")))
    }
}
