import Foundation
import Postgres

/// The database the server uses: the configured `database_url`, or a private PostgreSQL
/// cluster under `data_dir/postgres` that is started here and stopped with the server.
final class Database: Sendable {
    static let embeddedDatabaseName = "auth"

    let pool: PostgresPool
    let url: String
    private let cluster: PostgresCluster?

    private init(pool: PostgresPool, url: String, cluster: PostgresCluster?) {
        self.pool = pool
        self.url = url
        self.cluster = cluster
    }

    /// Opens (and for the embedded default, starts) the database and applies migrations.
    ///
    /// When the embedded database is already running, started by a `serve` process, the
    /// admin commands connect to it (and leave it running); `serve` itself refuses, because
    /// the first server stops the embedded database when it exits.
    static func open(_ configuration: Configuration, log: Log, shareRunningEmbedded: Bool = true) throws
        -> Database
    {
        var cluster: PostgresCluster?
        let url: String
        if let configured = configuration.databaseURL {
            url = configured
        } else if let running = PostgresCluster.runningServer(dataDirectory: embeddedDirectory(configuration))
        {
            guard shareRunningEmbedded else {
                throw StartupError(
                    "the embedded database in \(embeddedDirectory(configuration).path) is in use by process "
                        + "\(running.pid); stop that server, or set database_url to share one PostgreSQL")
            }
            url = "postgresql://postgres@127.0.0.1:\(running.port)/\(embeddedDatabaseName)"
        } else {
            let directory = embeddedDirectory(configuration)
            log.info("database.embedded.starting", ["data_dir": directory.path])
            let started = try PostgresCluster.start(
                dataDirectory: directory,
                logFile: directory.deletingLastPathComponent().appendingPathComponent("postgres.log"))
            do {
                try started.createDatabase(embeddedDatabaseName)
            } catch let error as PostgresError where error.sqlState == "42P04" {
                // Already created on an earlier run.
            }
            url = started.url(database: embeddedDatabaseName)
            cluster = started
        }
        let pool = PostgresPool(
            url: url, maxConnections: configuration.database.maxConnections,
            statementTimeout: .milliseconds(configuration.database.statementTimeoutMilliseconds))
        let database = Database(pool: pool, url: url, cluster: cluster)
        do {
            let applied = try Migrator(directory: try migrationsDirectory()).migrate(pool) { line in
                log.info("database.migration", ["detail": line])
            }
            log.info("database.migrated", ["applied": String(applied.count)])
        } catch {
            database.close()
            throw error
        }
        return database
    }

    /// The signing keys, created on first start and for every algorithm a client names
    /// (`SigningKeyRing.ensureSigningKeys`); fails clearly when the key-encryption key cannot
    /// open the keys already stored.
    func signingKeys(_ configuration: Configuration, environment: [String: String]) throws -> SigningKeyRing {
        let ring = SigningKeyRing(
            pool: pool, keyEncryptionKey: try KeyEncryptionKey.load(configuration, environment: environment),
            settings: configuration.signingKeys)
        try ring.ensureSigningKeys(for: SigningKeyRing.algorithms(for: configuration.clients))
        _ = try ring.keys()
        return ring
    }

    static func embeddedDirectory(_ configuration: Configuration) -> URL {
        URL(fileURLWithPath: configuration.dataDirectory, isDirectory: true)
            .appendingPathComponent("postgres", isDirectory: true)
    }

    func close() {
        pool.close()
        try? cluster?.stop()
    }

    /// `AUTH_SERVER_MIGRATIONS`, else `migrations/` in the working directory, else the
    /// checkout that holds the executable (`.build/<config>/auth-server`).
    static func migrationsDirectory() throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["AUTH_SERVER_MIGRATIONS"] {
            return URL(fileURLWithPath: path, isDirectory: true)
        }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let candidates = [
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(
                "migrations"),
            executable.deletingLastPathComponent().appendingPathComponent("../../../migrations").standardized,
            executable.deletingLastPathComponent().appendingPathComponent("../../migrations").standardized,
            executable.deletingLastPathComponent().appendingPathComponent("../share/auth-server/migrations")
                .standardized,
        ]
        var isDirectory: ObjCBool = false
        for candidate in candidates
        where FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory)
            && isDirectory.boolValue
        {
            return candidate
        }
        throw StartupError("cannot find the migrations folder; set AUTH_SERVER_MIGRATIONS")
    }
}

/// A start-up failure with a message meant for the operator.
struct StartupError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
