import Crypto
import Foundation
import Postgres
import Testing

@testable import AuthServer

@Suite("auth-server users create and import")
struct UsersCommandTests {
    static let scryptHash =
        "$scrypt$ln=4,r=8,p=1$c2FsdHNhbHRzYWx0MTIzNA$DtTSzp0w16wJzKoZYr9I37rzkRqBophypg89icJpfBs"
    static let pbkdf2Hash =
        "$pbkdf2-sha256$i=1000$c2FsdHNhbHRzYWx0MTIzNA$cg9lGvfHqXWvIDFqXduiAMETmgyLu9tdRcFchIuHJ90"
    static let importedPassword = "imported passphrase"

    /// A config file on a fresh test database, and that database's URL.
    static func config() throws -> (path: String, url: String) {
        let url = try TestCluster.freshDatabaseURL()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "users-\(UUID().uuidString).json")
        let json = #"{"issuer": "http://localhost:8080", "database_url": "\#(url)", "clients": []}"#
        try Data(json.utf8).write(to: file)
        return (file.path, url)
    }

    static func count(_ url: String, _ query: PostgresQuery) throws -> Int {
        let pool = PostgresPool(url: url, maxConnections: 1)
        defer { pool.close() }
        return try pool.query(query).first?.decode(0) ?? -1
    }

    @Test func helpDescribesBothSubcommands() throws {
        let result = try Executable.run(["users", "--help"])
        #expect(result.status == 0)
        #expect(result.output.contains("users create --config FILE --email EMAIL --name NAME"))
        #expect(result.output.contains("users import --config FILE USERS.json"))
    }

    @Test func createReadsThePasswordFromStandardInput() throws {
        let (path, url) = try Self.config()
        let created = try Executable.run(
            ["users", "create", "--config", path, "--email", "Admin@Example.com", "--name", "Admin"],
            input: "a long passphrase\n")
        #expect(created.status == 0, "\(created.error)")
        #expect(created.output.contains("created account"))
        #expect(
            try Self.count(
                url, "SELECT count(*) FROM account_emails WHERE normalized_email = 'admin@example.com'") == 1)
        let hash = try Self.count(
            url, "SELECT count(*) FROM password_credentials WHERE password_hash LIKE '$argon2id$%'")
        #expect(hash == 1)

        let duplicate = try Executable.run(
            ["users", "create", "--config", path, "--email", "admin@example.com", "--name", "Again"],
            input: "a long passphrase\n")
        #expect(duplicate.status == 1)
        #expect(duplicate.error.contains("already exists"))

        let empty = try Executable.run(
            ["users", "create", "--config", path, "--email", "b@example.com", "--name", "B"], input: "")
        #expect(empty.status == 1)
        #expect(empty.error.contains("password refused"))
        let weak = try Executable.run(
            ["users", "create", "--config", path, "--email", "b@example.com", "--name", "B"], input: "short\n"
        )
        #expect(weak.status == 1)
        #expect(try Self.count(url, "SELECT count(*) FROM accounts") == 1)
    }

    @Test func importIsAllOrNothingAndReportsEveryBadEntry() throws {
        let (path, url) = try Self.config()
        #expect(try Executable.run(["migrate", "--config", path]).status == 0)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "import-\(UUID().uuidString).json")
        let bad = """
            [
              {"email": "ok@example.com", "name": "Ok", "password_hash": "\(Self.scryptHash)"},
              {"email": "not-an-email", "name": "Bad", "password_hash": "\(Self.scryptHash)"},
              {"email": "x@example.com", "name": "X", "password_hash": "md5:abc"},
              {"email": "OK@example.com", "name": "Dup", "password_hash": "\(Self.pbkdf2Hash)"}
            ]
            """
        try Data(bad.utf8).write(to: file)
        let refused = try Executable.run(["users", "import", "--config", path, file.path])
        #expect(refused.status == 1)
        #expect(refused.error.contains("[1].email"))
        #expect(refused.error.contains("[2].password_hash"))
        #expect(refused.error.contains("[3].email: duplicates entry [0]"))
        #expect(!refused.error.contains("[0]."))
        #expect(try Self.count(url, "SELECT count(*) FROM accounts") == 0)

        let good = """
            [
              {"email": "scrypt@example.com", "name": "S", "password_hash": "\(Self.scryptHash)"},
              {"email": "pbkdf2@example.com", "name": "P", "password_hash": "\(Self.pbkdf2Hash)"}
            ]
            """
        try Data(good.utf8).write(to: file)
        let imported = try Executable.run(["users", "import", "--config", path, file.path])
        #expect(imported.status == 0, "\(imported.error)")
        #expect(try Self.count(url, "SELECT count(*) FROM accounts") == 2)

        // A second import that collides with an existing account writes nothing.
        let again = """
            [
              {"email": "new@example.com", "name": "N", "password_hash": "\(Self.scryptHash)"},
              {"email": "scrypt@example.com", "name": "S", "password_hash": "\(Self.scryptHash)"}
            ]
            """
        try Data(again.utf8).write(to: file)
        let collided = try Executable.run(["users", "import", "--config", path, file.path])
        #expect(collided.status == 1)
        #expect(collided.error.contains("[1].email: an account with scrypt@example.com already exists"))
        #expect(try Self.count(url, "SELECT count(*) FROM accounts") == 2)
    }

    @Test(arguments: [scryptHash, pbkdf2Hash])
    func importedHashesBecomeArgon2idAtTheNextSignIn(_ hash: String) throws {
        let app = try TestApplication()
        let (id, email) = try Self.importedAccount(app, hash: hash)
        #expect(try TestAgent(app).signIn(email: email, password: "wrong password").status == 401)
        #expect(try AccountStore.passwordHash(accountID: id, on: app.database.pool) == hash)
        #expect(try TestAgent(app).signIn(email: email, password: Self.importedPassword).status == 200)
        let upgraded = try #require(try AccountStore.passwordHash(accountID: id, on: app.database.pool))
        #expect(upgraded.hasPrefix("$argon2id$"))
        #expect(try TestAgent(app).signIn(email: email, password: Self.importedPassword).status == 200)
    }

    /// An account as `users import` leaves it: its password hash from elsewhere, which its
    /// next sign-in replaces with an Argon2id one.
    static func importedAccount(_ app: TestApplication, hash: String = scryptHash) throws -> (UUID, String) {
        let email = TestAgent.uniqueEmail("imported")
        let address = try #require(EmailAddress(email))
        let id = UUID()
        try app.database.pool.withTransaction { connection in
            try AccountStore.insertAccount(
                id: id, displayName: "Imported", email: address, userHandle: SecureRandom.bytes(count: 32),
                on: connection)
            try AccountStore.setPassword(accountID: id, hash: hash, on: connection)
        }
        return (id, email)
    }
}
