import Foundation
import Postgres
import Testing

@testable import AuthServer

/// The linking rule against a real database: an upstream identity never takes over an account
/// through an address alone.
@Suite("Upstream identities: which account a sign-in belongs to")
struct UpstreamAccountsTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func claims(subject: String = "sub-1", email: String? = "ada@example.com", verified: Bool = true)
        -> UpstreamClaims
    {
        UpstreamClaims(
            provider: "corp", issuer: "https://id.example.com", subject: subject, email: email,
            emailVerified: verified, isPrivateEmail: false, name: "Ada")
    }

    static func account(_ app: TestApplication, email: String, verified: Bool) throws -> UUID {
        let id = UUID()
        try app.database.pool.transaction { db in
            try AccountStore.insertAccount(
                id: id, displayName: "Local", email: EmailAddress(email)!,
                userHandle: (0..<32).map { _ in UInt8.random(in: 0...255) },
                on: db)
            if verified {
                try db.query("UPDATE account_emails SET verified_at = now() WHERE account_id = \(id)")
            }
        }
        return id
    }

    @Test func aVerifiedAddressHeldByAnAccountRequiresProofNotALink() throws {
        let app = try TestApplication()
        let local = try Self.account(app, email: "Ada@Example.com", verified: true)
        let decision = try app.database.pool.transaction {
            try UpstreamAccounts.decide(Self.claims(), on: $0)
        }
        #expect(decision == .proveControl(accountID: local))
        // The provider does not vouch for the address: a new account, never the existing one.
        let unverified = try app.database.pool.transaction {
            try UpstreamAccounts.decide(Self.claims(verified: false), on: $0)
        }
        #expect(unverified == .create)
        #expect(
            try app.sql("SELECT count(*) AS n FROM upstream_identities").first?.decode("n", as: Int64.self)
                == 0)
    }

    @Test func anUnverifiedLocalAddressIsNotProofOfAnything() throws {
        let app = try TestApplication()
        let squatter = try Self.account(app, email: "ada@example.com", verified: false)
        let decision = try app.database.pool.transaction {
            try UpstreamAccounts.decide(Self.claims(), on: $0)
        }
        #expect(decision == .create)
        let created = try app.database.pool.transaction {
            try UpstreamAccounts.createAccount(
                Self.claims(), userHandle: Array(repeating: 9, count: 32), at: Self.now, on: $0)
        }
        #expect(created.accountID != squatter)
        // The new account holds the address verified; the squatter lost its unverified claim.
        let holders = try app.sql(
            "SELECT account_id, verified_at IS NOT NULL AS verified FROM account_emails WHERE normalized_email = 'ada@example.com'"
        )
        #expect(holders.count == 1)
        #expect(try holders.first?.decode("account_id", as: UUID.self) == created.accountID)
        #expect(try holders.first?.decode("verified", as: Bool.self) == true)
        // The identity now signs in to it, whatever address it reports later.
        let again = try app.database.pool.transaction {
            try UpstreamAccounts.decide(Self.claims(email: "other@example.com"), on: $0)
        }
        #expect(again == .signIn(accountID: created.accountID, identityID: created.identityID))
    }

    @Test func anIdentityBelongsToOneAccount() throws {
        let app = try TestApplication()
        let first = try Self.account(app, email: "one@example.com", verified: true)
        let second = try Self.account(app, email: "two@example.com", verified: true)
        _ = try app.database.pool.transaction {
            try UpstreamAccounts.link(Self.claims(), accountID: first, at: Self.now, on: $0)
        }
        #expect(throws: UpstreamIdentityStore.InsertError.alreadyLinked) {
            try app.database.pool.transaction {
                try UpstreamAccounts.link(Self.claims(), accountID: second, at: Self.now, on: $0)
            }
        }
        let identities = try app.database.pool.transaction {
            try UpstreamIdentityStore.list(accountID: first, on: $0)
        }
        #expect(identities.map(\.subject) == ["sub-1"] && identities.first?.emailVerified == true)
        #expect(
            try app.database.pool.transaction { try UpstreamIdentityStore.count(accountID: second, on: $0) }
                == 0)
        // Deleting the account deletes its links.
        try app.sql("DELETE FROM accounts WHERE id = \(first)")
        #expect(
            try app.sql("SELECT count(*) AS n FROM upstream_identities").first?.decode("n", as: Int64.self)
                == 0)
    }
}
