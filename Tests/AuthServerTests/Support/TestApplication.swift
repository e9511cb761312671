import Crypto
import Foundation
import HTTPServer
import Postgres
import Synchronization
import Testing

@testable import AuthServer

/// One throwaway PostgreSQL cluster per test process; each test gets its own database.
enum TestCluster {
    private static let state = Mutex<PostgresCluster?>(nil)
    private static let counter = Atomic<Int>(0)

    static func shared() throws -> PostgresCluster {
        try state.withLock { cluster in
            if let cluster { return cluster }
            let started = try PostgresCluster.temporary()
            cluster = started
            atexit { TestCluster.stopShared() }
            return started
        }
    }

    private static func stopShared() {
        state.withLock { cluster in
            try? cluster?.stop()
            cluster = nil
        }
    }

    /// A new, empty database on the shared cluster.
    static func freshDatabaseURL() throws -> String {
        let cluster = try shared()
        let name = "test_\(getpid())_\(counter.add(1, ordering: .relaxed).newValue)"
        try cluster.createDatabase(name)
        return cluster.url(database: name)
    }
}

/// The application wired as `serve` wires it, on an ephemeral port, with its own database.
final class TestApplication {
    let configuration: Configuration
    let database: Database
    let signingKeys: SigningKeyRing
    let server: HTTPServer
    /// A fixed test key-encryption key (32 bytes, base64url).
    static let keyEncryptionKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"
    let logBuffer = LogBuffer()
    var client: TestHTTPClient { TestHTTPClient(port: server.port) }

    /// Where the application's mail goes (unless the test passes another transport).
    let mailbox = DevelopmentMailbox()

    init(
        mailTransport: (any MailTransport)? = nil, system: TimeAndRandomness = .live,
        configure: (inout Configuration) -> Void = { _ in }
    ) throws {
        var configuration = Configuration(
            issuer: "http://localhost:8080", listen: .init(host: "127.0.0.1", port: 0),
            databaseURL: try TestCluster.freshDatabaseURL(), dataDirectory: "var", publicDirectory: "public",
            tls: nil, http: .init(), database: .init(), clients: [])
        configure(&configuration)
        self.configuration = configuration
        let buffer = logBuffer
        let log = Log(write: { line in buffer.append(line) })
        database = try Database.open(configuration, log: log)
        signingKeys = try database.signingKeys(
            configuration, environment: [ConfigurationLoader.keyEncryptionKeyVariable: Self.keyEncryptionKey])
        var application = Application(
            configuration: configuration, pool: database.pool, signingKeys: signingKeys, metrics: Metrics(),
            log: log)
        // Cheap Argon2id parameters keep the suite fast; the policy itself is tested in Crypto.
        application.passwordHasher = TestApplication.hasher
        application.mailTransport = mailTransport ?? mailbox
        application.system = system
        let app = application
        server = HTTPServer(
            configuration: ServeCommand.serverConfiguration(configuration),
            responder: app.makeRouter(),
            log: { line in log.raw(line) },
            onResponse: { request, context, status, duration in
                app.observe(request, context, status, duration)
            })
        try server.start()
        backchannelLogout = app.makeBackchannelLogoutWorker()
        backchannelLogout.start()
    }

    let backchannelLogout: BackchannelLogoutWorker

    static let hasher = PasswordHasher(
        parameters: .init(memoryKiB: 1_024, iterations: 1, parallelism: 1), maxConcurrent: 8)

    /// Runs SQL against the test's database (to age a challenge, count rows).
    @discardableResult
    func sql(_ query: PostgresQuery) throws -> PostgresRows { try database.pool.query(query) }

    deinit {
        backchannelLogout.stop()
        server.shutdown(gracePeriod: .seconds(5))
        server.waitUntilStopped()
        database.close()
    }
}

/// Log lines kept in memory, so tests can assert what was (and was not) logged.
final class LogBuffer: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var text: String { lines.withLock { $0.joined(separator: "\n") } }
}
