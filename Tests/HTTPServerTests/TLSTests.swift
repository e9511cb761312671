import Foundation
import Testing

@testable import HTTPServer

@Suite struct TLSTests {
    private func makeCertificate() throws -> (directory: URL, certificate: String, key: String) {
        let directory = try temporaryDirectory()
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let result = try run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-days", "1",
                "-subj", "/CN=localhost", "-keyout", key, "-out", certificate,
            ])
        #expect(result.status == 0)
        return (directory, certificate, key)
    }

    @Test func servesRequestsOverTLS() throws {
        let (directory, certificate, key) = try makeCertificate()
        defer { try? FileManager.default.removeItem(at: directory) }
        let router = Router()
        router.get("/hello") { _, _ in .text("secure hello") }
        router.post("/echo") { request, _ in HTTPResponse(body: request.body) }
        let (server, _) = try startServer(router) {
            $0.tls = .init(certificateFile: certificate, privateKeyFile: key)
        }
        defer { server.shutdown() }
        let url = "https://127.0.0.1:\(server.port)"
        // Two URLs in one curl run reuse the connection (keep-alive over TLS).
        let gets = try run("/usr/bin/curl", ["-sk", "--tlsv1.2", "\(url)/hello", "\(url)/hello"])
        #expect(gets.status == 0)
        #expect(gets.output == "secure hellosecure hello")
        let payload = String(repeating: "z", count: 100_000)
        let post = try run("/usr/bin/curl", ["-sk", "--tlsv1.2", "-d", payload, "\(url)/echo"])
        #expect(post.output == payload)
        let tls12Only = try run("/usr/bin/curl", ["-sk", "--tlsv1.2", "--tls-max", "1.2", "\(url)/hello"])
        #expect(tls12Only.output == "secure hello")
        // A plaintext request on the TLS port is not answered as HTTP.
        let plain = try RawClient(port: server.port)
        plain.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect((try? plain.readResponse()) == nil)
    }

    @Test func missingKeyFileFailsAtStart() throws {
        let (directory, certificate, _) = try makeCertificate()
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = HTTPServer(
            configuration: .init(
                port: 0, workerThreads: 1,
                tls: .init(
                    certificateFile: certificate,
                    privateKeyFile: directory.appendingPathComponent("none").path)),
            responder: Router(), log: { _ in })
        #expect(throws: HTTPServerError.self) { try server.start() }
    }

    /// `openssl s_client` offering exactly `options`; whether the handshake succeeded, and
    /// what it printed.
    private func handshake(port: Int, _ options: [String]) throws -> (ok: Bool, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments =
            ["s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost"] + options
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus == 0, String(decoding: data, as: UTF8.self))
    }

    @Test func legacyProtocolsAndWeakCiphersAreRefused() throws {
        let (directory, certificate, key) = try makeCertificate()
        defer { try? FileManager.default.removeItem(at: directory) }
        let router = Router()
        router.get("/hello") { _, _ in .text("secure hello") }
        let (server, _) = try startServer(router) {
            $0.tls = .init(certificateFile: certificate, privateKeyFile: key)
        }
        defer { server.shutdown() }
        // The client is told to allow anything (security level 0), so a refusal is the server's.
        for version in ["-tls1", "-tls1_1"] {
            let old = try handshake(port: server.port, [version, "-cipher", "ALL:@SECLEVEL=0"])
            #expect(!old.ok, "\(version) was accepted: \(old.output)")
        }
        // TLS 1.2 without forward secrecy or without an AEAD cipher.
        for cipher in [
            "ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA384", "AES128-GCM-SHA256", "AES128-SHA",
        ] {
            let weak = try handshake(port: server.port, ["-tls1_2", "-cipher", "\(cipher):@SECLEVEL=0"])
            #expect(!weak.ok, "\(cipher) was accepted: \(weak.output)")
        }
        let modern = try handshake(
            port: server.port, ["-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256"])
        #expect(modern.ok, "\(modern.output)")
        #expect(modern.output.contains("ECDHE-ECDSA-AES128-GCM-SHA256"))
        let chacha = try handshake(
            port: server.port, ["-tls1_2", "-cipher", "ECDHE-ECDSA-CHACHA20-POLY1305"])
        #expect(chacha.ok, "\(chacha.output)")
        let latest = try handshake(port: server.port, ["-tls1_3"])
        #expect(latest.ok, "\(latest.output)")
        #expect(latest.output.contains("TLSv1.3"))
    }
}
