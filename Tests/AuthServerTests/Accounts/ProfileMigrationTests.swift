import Foundation
import Postgres
import Testing

@testable import AuthServer

/// migrations/0015_profile.sql on a database that already holds accounts, and its triggers.
@Suite("Profile migration and the updated_at triggers")
struct ProfileMigrationTests {
    /// A database migrated up to (not including) 0015, with one account created a year ago.
    static func databaseBeforeProfiles() throws -> (PostgresPool, URL) {
        let all = try Database.migrationsDirectory()
        let earlier = FileManager.default.temporaryDirectory.appendingPathComponent(
            "migrations-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: earlier, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: all.path)
        where name.hasSuffix(".sql") && name < "0015" {
            try FileManager.default.copyItem(
                at: all.appendingPathComponent(name), to: earlier.appendingPathComponent(name))
        }
        let pool = PostgresPool(url: try TestCluster.freshDatabaseURL(), maxConnections: 2)
        _ = try Migrator(directory: earlier).migrate(pool)
        try pool.query(
            """
            INSERT INTO accounts (id, display_name, webauthn_user_handle, created_at)
            VALUES (\(UUID()), 'Old Account', \(Array(repeating: UInt8(7), count: 32)), now() - interval '1 year')
            """)
        return (pool, all)
    }

    @Test func existingAccountsGetTheirCreationTime() throws {
        let (pool, all) = try Self.databaseBeforeProfiles()
        defer { pool.close() }
        #expect(try Migrator(directory: all).migrate(pool).contains("0015_profile.sql"))
        let row = try #require(
            try pool.query(
                "SELECT created_at = profile_updated_at AS same, given_name IS NULL AS unset FROM accounts"
            ).first)
        #expect(try row.decode("same", as: Bool.self))
        #expect(try row.decode("unset", as: Bool.self))
    }

    @Test func theTableRefusesWhatTheRulesRefuse() throws {
        let (pool, all) = try Self.databaseBeforeProfiles()
        defer { pool.close() }
        _ = try Migrator(directory: all).migrate(pool)
        for statement: PostgresQuery in [
            "UPDATE accounts SET given_name = ''", "UPDATE accounts SET picture = 'http://example.com/a.png'",
            "UPDATE accounts SET picture = 'https://@example.com/'", "UPDATE accounts SET locale = 'ja_JP'",
            "UPDATE accounts SET preferred_username = repeat('u', 65)",
            "UPDATE accounts SET family_name = repeat('x', 201)",
        ] {
            #expect(throws: PostgresError.self) { try pool.query(statement) }
        }
    }

    @Test func releasedClaimsMoveUpdatedAtAndOtherColumnsDoNot() throws {
        let (pool, all) = try Self.databaseBeforeProfiles()
        defer { pool.close() }
        _ = try Migrator(directory: all).migrate(pool)
        func moved(_ statement: PostgresQuery) throws -> Bool {
            try pool.query("UPDATE accounts SET profile_updated_at = created_at")
            try pool.query(statement)
            return try pool.query(
                "SELECT profile_updated_at > created_at + interval '1 day' AS moved FROM accounts"
            )
            .first?.decode("moved") ?? false
        }
        let id: UUID = try #require(try pool.query("SELECT id FROM accounts").first?.decode("id"))
        #expect(try moved("UPDATE accounts SET display_name = 'New'"))
        #expect(try moved("UPDATE accounts SET locale = 'en'"))
        #expect(try moved("UPDATE accounts SET locale = NULL"))
        #expect(try !moved("UPDATE accounts SET locale = NULL"))
        #expect(try !moved("UPDATE accounts SET disabled_at = now()"))
        #expect(try !moved("UPDATE accounts SET password_sign_ins = password_sign_ins + 1"))
        #expect(
            try moved(
                "INSERT INTO account_emails (id, account_id, email, normalized_email) VALUES (\(UUID()), \(id), 'a@example.com', 'a@example.com')"
            ))
        #expect(try moved("UPDATE account_emails SET verified_at = now()"))
        #expect(try !moved("UPDATE account_emails SET verified_at = verified_at"))
        // The address released to the account that verified it first.
        #expect(try moved("DELETE FROM account_emails"))
        // Deleting the account deletes its addresses through the cascade without an error.
        try pool.query(
            "INSERT INTO account_emails (id, account_id, email, normalized_email) VALUES (\(UUID()), \(id), 'b@example.com', 'b@example.com')"
        )
        try pool.query("DELETE FROM accounts")
        #expect(
            try pool.query("SELECT count(*) AS n FROM account_emails").first?.decode("n", as: Int.self) == 0)
    }
}
