import Crypto
import Foundation
import OIDC
import Postgres
import Testing

@testable import AuthServer

@Suite("Reloading clients: auth-server clients reload and SIGHUP")
struct ClientsReloadTests {
    static let secret = "reload-client-secret-with-plenty-of-entropy-0123456789"

    static func client(_ id: String) -> String {
        """
        {"client_id": "\(id)", "redirect_uris": ["https://\(id).example/cb"],
         "client_secret_hash": "\(ClientSecret.hash(secret))",
         "grant_types": ["client_credentials"]}
        """
    }

    static func config(port: Int, directory: URL, database: String, clients: [String], extra: String = "")
        -> String
    {
        """
        {"issuer": "http://localhost:\(port)", "listen": "127.0.0.1:\(port)", "database_url": "\(database)",
         "data_dir": "\(directory.path)", "clients": [\(clients.joined(separator: ","))]\(extra)}
        """
    }

    static func grant(port: Int, client: String) throws -> Int {
        let basic = "Basic " + Data("\(client):\(secret)".utf8).base64EncodedString()
        return try TestHTTPClient(port: port).post(
            "/token", form: [("grant_type", "client_credentials")],
            headers: [("Authorization", basic)]
        ).status
    }

    static func waitUntil(seconds: Double = 30, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return try condition()
    }

    @Test func aRunningServerSwapsItsClientsAndRefusesABadFile() throws {
        let directory = URL(fileURLWithPath: "/tmp/auth-reload-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let database = try TestCluster.freshDatabaseURL()
        let port = try FreePort.next()
        let configFile = directory.appendingPathComponent("config.json")
        func write(_ clients: [String], extra: String = "") throws {
            try Data(
                Self.config(
                    port: port, directory: directory, database: database, clients: clients, extra: extra
                ).utf8
            )
            .write(to: configFile)
        }
        try write([Self.client("svc-a")])
        var environment = ProcessInfo.processInfo.environment
        environment["AUTH_SERVER_KEY_ENCRYPTION_KEY"] = TestApplication.keyEncryptionKey

        // No server yet: reload explains and fails.
        let early = try Executable.run(
            ["clients", "reload", "--config", configFile.path], environment: environment)
        #expect(early.status == 1)
        #expect(early.error.contains("no running server found"))

        let logFile = directory.appendingPathComponent("serve.log")
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        let process = Process()
        process.executableURL = Executable.url
        process.arguments = ["serve", "--config", configFile.path]
        process.environment = environment
        process.standardError = try FileHandle(forWritingTo: logFile)
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }
        func log() -> String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }
        let pidFile = directory.appendingPathComponent("auth-server.pid")
        #expect(
            Self.waitUntil(seconds: 60) {
                (try? TestHTTPClient(port: port).get("/readyz").status) == 200
                    && PIDFile.read(pidFile.path) == process.processIdentifier
            }, "\(log())")
        #expect(try Self.grant(port: port, client: "svc-a") == 200)
        #expect(try Self.grant(port: port, client: "svc-b") == 401)

        // A valid file with a new client and a changed setting that needs a restart.
        try write(
            [Self.client("svc-a"), Self.client("svc-b")], extra: #", "sessions": {"lifetime_seconds": 3600}"#)
        let reload = try Executable.run(
            ["clients", "reload", "--config", configFile.path], environment: environment)
        #expect(reload.status == 0, "\(reload.error)")
        #expect(reload.output.contains("sent SIGHUP to the server (pid \(process.processIdentifier))"))
        #expect(try Self.waitUntil { try Self.grant(port: port, client: "svc-b") == 200 }, "\(log())")
        #expect(Self.waitUntil { log().contains("setting=sessions reason=needsRestart") }, "\(log())")

        // An invalid file: the command refuses it and leaves the server alone.
        try write([Self.client("svc-a"), #"{"client_id": "svc-c"}"#])
        let refused = try Executable.run(
            ["clients", "reload", "--config", configFile.path], environment: environment)
        #expect(refused.status == 1)
        #expect(refused.output.contains("error: $.clients[1].redirect_uris: is required"))
        #expect(refused.error.contains("the running server was not changed"))

        // The same file delivered by a bare SIGHUP: the server logs every problem and keeps
        // the clients it has.
        #expect(kill(process.processIdentifier, SIGHUP) == 0)
        #expect(Self.waitUntil { log().contains("reason=keptPreviousConfiguration") }, "\(log())")
        #expect(log().contains("path=$.clients[1].redirect_uris"))
        #expect(try Self.grant(port: port, client: "svc-a") == 200)
        #expect(try Self.grant(port: port, client: "svc-b") == 200)

        let pool = PostgresPool(url: database, maxConnections: 1)
        defer { pool.close() }
        #expect(
            try pool.query(
                "SELECT count(*) FROM audit_events WHERE event = 'clients.reloaded' AND actor = 'admin'"
            )
            .first?.decode(0, as: Int.self) == 1)

        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(!FileManager.default.fileExists(atPath: pidFile.path))
    }

    /// With the embedded database, the commands share the running server's cluster.
    @Test func commandsWorkBesideAServerOnTheEmbeddedDatabase() throws {
        let directory = URL(fileURLWithPath: "/tmp/auth-embedded-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try FreePort.next()
        let configFile = directory.appendingPathComponent("config.json")
        try Data(
            """
            {"issuer": "http://localhost:\(port)", "listen": "127.0.0.1:\(port)",
             "data_dir": "\(directory.appendingPathComponent("data").path)", "clients": []}
            """.utf8
        ).write(to: configFile)
        let process = Process()
        process.executableURL = Executable.url
        process.arguments = ["serve", "--config", configFile.path]
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
            }
        }
        #expect(
            Self.waitUntil(seconds: 60) { (try? TestHTTPClient(port: port).get("/readyz").status) == 200 })
        let list = try Executable.run(["users", "list", "--config", configFile.path])
        #expect(list.status == 0, "\(list.error)")
        #expect(list.output.hasPrefix("ID"))
        #expect(try Executable.run(["clients", "reload", "--config", configFile.path]).status == 0)
        #expect((try? TestHTTPClient(port: port).get("/readyz").status) == 200)
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    /// An Android app added by a reload may use passkeys at once: its apk-key-hash origin is
    /// accepted by the passkey ceremonies without a restart.
    @Test func reloadedAndroidAppsArePasskeyOrigins() throws {
        let app = try TestApplication()
        let clients = ReloadableClients(app.configuration)
        let services = AccountServices(
            configuration: app.configuration, pool: app.database.pool, log: Log(write: { _ in }),
            hasher: TestApplication.hasher, clients: clients)
        let fingerprint = (0..<32).map { String(format: "%02X", $0) }.joined(separator: ":")
        let origin = try #require(AndroidFingerprint.apkKeyHashOrigin(fingerprint))
        #expect(!services.registrationVerifier.allowedOrigins.contains(origin))
        var changed = app.configuration
        var client = ClientMetadata(clientID: "android", redirectURIs: ["com.example.app:/callback"])
        client.androidApps = [.init(packageName: "com.example.app", sha256CertFingerprints: [fingerprint])]
        changed.clients.append(client)
        clients.replace(clientsOf: changed)
        #expect(services.registrationVerifier.allowedOrigins.contains(origin))
        #expect(services.authenticationVerifier.allowedOrigins.contains(origin))
        #expect(services.authenticationVerifier.allowedOrigins.contains(app.configuration.issuerOrigin))
    }

    @Test func changedSettingsNameTheirKeys() throws {
        let base = try #require(
            ConfigurationLoader.check(
                data: Data(#"{"issuer": "https://id.example.com", "clients": []}"#.utf8)
            )
            .configuration)
        var changed = base
        changed.clients = [ClientMetadata(clientID: "x", redirectURIs: ["https://x.example/cb"])]
        #expect(ConfigurationReload.changedSettings(base, changed).isEmpty)
        changed.oauth.accessTokenLifetimeSeconds = 60
        changed.issuer = "https://other.example.com"
        #expect(ConfigurationReload.changedSettings(base, changed) == ["issuer", "oauth"])
    }
}
