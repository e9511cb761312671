import Foundation
import Testing

@testable import AuthServer

@Suite struct CommandLineTests {
    @Test func helpListsEveryCommand() throws {
        let result = try Executable.run(["--help"])
        #expect(result.status == 0)
        for command in ["serve --config FILE", "migrate --config FILE", "config check FILE"] {
            #expect(result.output.contains(command))
        }
    }

    @Test func unknownCommandIsAUsageError() throws {
        let result = try Executable.run(["frobnicate"])
        #expect(result.status == 2)
        #expect(result.error.contains("unknown command \"frobnicate\""))
    }

    @Test func serveWithoutConfigIsAUsageError() throws {
        let result = try Executable.run(["serve"])
        #expect(result.status == 2)
        #expect(result.error.contains("--config FILE is required"))
    }

    @Test func configCheckAcceptsTheExample() throws {
        let result = try Executable.run(["config", "check", "config/example.json"])
        #expect(result.status == 0, "\(result.output)\(result.error)")
        #expect(result.output.contains("config/example.json: ok (2 client(s))"))
    }

    @Test func configCheckPrintsEveryProblemAndFails() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bad-\(UUID().uuidString).json")
        try Data(#"{"issuer": "http://example.com", "clients": [{"client_id": "x"}], "extra": 1}"#.utf8)
            .write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try Executable.run(["config", "check", file.path])
        #expect(result.status == 1)
        #expect(
            result.output == """
                error: $.issuer: must use https (http only for localhost)
                error: $.clients[0].redirect_uris: is required
                error: $.clients[0].client_secret_hash: is required for client_secret_basic
                error: $.extra: is not a known setting

                """)
        #expect(result.error.contains("4 error(s)"))
    }

    @Test func configCheckOfAMissingFile() throws {
        let result = try Executable.run(["config", "check", "/nonexistent/config.json"])
        #expect(result.status == 1)
        #expect(result.output.contains("cannot read file /nonexistent/config.json"))
    }

    /// The README's run command in miniature: the embedded database is created on first
    /// start, the server answers, and SIGTERM stops everything cleanly.
    @Test func serveWithTheEmbeddedDatabaseStartsAndStopsOnSIGTERM() throws {
        let directory = URL(fileURLWithPath: "/tmp/auth-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try FreePort.next()
        let config = directory.appendingPathComponent("config.json")
        try Data(
            """
            {"issuer": "http://localhost:\(port)", "listen": "127.0.0.1:\(port)",
             "data_dir": "\(directory.appendingPathComponent("data").path)", "clients": []}
            """.utf8
        ).write(to: config)

        let process = Process()
        process.executableURL = Executable.url
        process.arguments = ["serve", "--config", config.path]
        let errorPipe = Pipe()
        process.standardError = errorPipe
        process.standardOutput = Pipe()
        try process.run()

        var ready = false
        for _ in 0..<240 where !ready {
            if let response = try? TestHTTPClient(port: port).get("/readyz"), response.status == 200 {
                ready = true
            } else {
                Thread.sleep(forTimeInterval: 0.25)
            }
        }
        #expect(ready, "server did not become ready")
        // Admin commands use the running embedded database and leave it running; a second
        // server on the same data folder is refused with the reason.
        let keys = try Executable.run(["keys", "list", "--config", config.path])
        #expect(keys.status == 0, "\(keys.error)")
        #expect(keys.output.contains("ES256") || keys.output.contains("RS256"), "\(keys.output)")
        let second = try Executable.run(["serve", "--config", config.path])
        #expect(second.status == 1)
        #expect(second.error.contains("is in use by process"), "\(second.error)")
        #expect(try TestHTTPClient(port: port).get("/readyz").status == 200)
        process.terminate()  // SIGTERM
        process.waitUntilExit()
        let log = String(decoding: errorPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(log)")
        #expect(log.contains("event=server.started"))
        let started = try #require(log.split(separator: "\n").first { $0.contains("event=server.started") })
        let build = BuildInfo.current
        for field in [
            "listen=127.0.0.1:\(port)", "version=\(build.version)", "commit=\(build.commit)",
            "swift=\(build.swift)",
            "openssl=\(build.openSSL)",
        ] {
            #expect(started.contains(" \(field)"), "\(started)")
        }
        #expect(log.contains("event=server.stopped"))
        #expect(
            FileManager.default.fileExists(
                atPath: directory.appendingPathComponent("data/postgres/PG_VERSION").path))
    }

}

@Suite struct KeysCommandTests {
    @Test func listAndRotateThroughTheCommandLine() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "keys-\(UUID().uuidString).json")
        try Data(#"{"issuer": "https://id.example.com", "clients": []}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var environment = ProcessInfo.processInfo.environment
        environment["AUTH_SERVER_DATABASE_URL"] = try TestCluster.freshDatabaseURL()
        environment["AUTH_SERVER_KEY_ENCRYPTION_KEY"] = TestApplication.keyEncryptionKey

        let list = try Executable.run(["keys", "list", "--config", file.path], environment: environment)
        #expect(list.status == 0, "\(list.error)")
        let lines = list.output.split(separator: "\n")
        #expect(lines.first?.hasPrefix("KID") == true)
        #expect(lines.filter { $0.contains(" active ") }.count == 2)

        let rotate = try Executable.run(
            ["keys", "rotate", "--config", file.path, "--algorithm", "ES256"], environment: environment)
        #expect(rotate.status == 0, "\(rotate.error)")
        #expect(rotate.output.hasPrefix("added ES256 key "))

        let after = try Executable.run(["keys", "list", "--config", file.path], environment: environment)
        #expect(after.output.split(separator: "\n").filter { $0.contains(" next ") }.count == 1)

        var wrong = environment
        wrong["AUTH_SERVER_KEY_ENCRYPTION_KEY"] = String(repeating: "A", count: 43)
        let refused = try Executable.run(["keys", "list", "--config", file.path], environment: wrong)
        #expect(refused.status == 1)
        #expect(refused.error.contains("the key-encryption key does not open signing key"))

        let badAlgorithm = try Executable.run([
            "keys", "rotate", "--config", file.path, "--algorithm", "HS256",
        ])
        #expect(badAlgorithm.status == 2)
    }

    @Test func serveRefusesAnExternalDatabaseWithoutAKeyEncryptionKey() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "nokek-\(UUID().uuidString).json")
        // Loopback issuer and listen: the development mailbox does not stop serve first.
        try Data(#"{"issuer": "http://localhost:8080", "listen": "127.0.0.1:0", "clients": []}"#.utf8).write(
            to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var environment = ProcessInfo.processInfo.environment
        environment["AUTH_SERVER_DATABASE_URL"] = try TestCluster.freshDatabaseURL()
        environment.removeValue(forKey: "AUTH_SERVER_KEY_ENCRYPTION_KEY")
        let result = try Executable.run(["serve", "--config", file.path], environment: environment)
        #expect(result.status == 1)
        #expect(
            result.error.contains(
                "no key-encryption key: set key_encryption_key_file or AUTH_SERVER_KEY_ENCRYPTION_KEY"))
    }
}

@Suite struct WebAuthnToolTests {
    @Test func verifyReplaysACapturedAssertion() throws {
        let result = try Executable.run(
            program: "webauthn-tool", ["verify", "docs/examples/webauthn-authentication.json"])
        #expect(result.status == 0, "\(result.output)")
        let output = try #require(
            try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        #expect(output["verified"] as? Bool == true)
        #expect(output["new_sign_count"] as? Int == 78)
    }

    @Test func verifyReportsTheFailedStep() throws {
        let original = try String(
            contentsOfFile: "docs/examples/webauthn-authentication.json", encoding: .utf8)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "wa-\(UUID().uuidString).json")
        try original.replacingOccurrences(of: "\"rp_id\": \"localhost\"", with: "\"rp_id\": \"example.com\"")
            .write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try Executable.run(program: "webauthn-tool", ["verify", file.path])
        #expect(result.status == 1)
        #expect(result.output.contains("\"verified\" : false"))
        #expect(result.output.contains("rpIDHash") || result.output.contains("RP ID"))

        try Data("{\"ceremony\": \"dance\"}".utf8).write(to: file)
        #expect(try Executable.run(program: "webauthn-tool", ["verify", file.path]).status == 2)
    }

    @Test func inspectDecodesTheResponse() throws {
        let result = try Executable.run(
            program: "webauthn-tool", ["inspect", "docs/examples/webauthn-authentication.json"])
        #expect(result.status == 0)
        #expect(result.output.contains("webauthn.get"))
        #expect(result.output.contains("http://localhost:5000"))
    }
}
