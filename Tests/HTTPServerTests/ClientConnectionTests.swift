import Foundation
import Testing

@testable import HTTPServer

/// The outgoing TLS connection (used for mail submission), against this module's own TLS
/// server on 127.0.0.1 with a self-signed certificate.
@Suite struct ClientConnectionTests {
    private func makeCertificate(subjectAltName: String) throws -> (
        directory: URL, certificate: String, key: String
    ) {
        let directory = try temporaryDirectory()
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let result = try run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-days", "1",
                "-subj", "/CN=localhost", "-addext", "subjectAltName=\(subjectAltName)", "-keyout", key,
                "-out",
                certificate,
            ])
        #expect(result.status == 0)
        return (directory, certificate, key)
    }

    private func tlsServer(_ certificate: String, _ key: String) throws -> HTTPServer {
        let router = Router()
        router.get("/hello") { _, _ in .text("secure hello") }
        return try startServer(router) { $0.tls = .init(certificateFile: certificate, privateKeyFile: key) }
            .server
    }

    private func get(_ connection: ClientConnection) throws -> String {
        try connection.write(
            Array("GET /hello HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8))
        return try connection.readLine()
    }

    @Test(arguments: ["localhost", "127.0.0.1"])
    func verifiesTheCertificateAgainstTheGivenRootsAndName(host: String) throws {
        let (directory, certificate, key) = try makeCertificate(subjectAltName: "DNS:localhost,IP:127.0.0.1")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try tlsServer(certificate, key)
        defer { server.shutdown() }
        let connection = try ClientConnection(host: host, port: server.port, timeout: .seconds(5))
        try connection.startTLS(try TLSClientContext(caFile: certificate))
        #expect(connection.isTLS)
        #expect(try get(connection) == "HTTP/1.1 200 OK")
        connection.close()
    }

    @Test func refusesACertificateForAnotherName() throws {
        let (directory, certificate, key) = try makeCertificate(subjectAltName: "DNS:mail.example.com")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try tlsServer(certificate, key)
        defer { server.shutdown() }
        let connection = try ClientConnection(host: "127.0.0.1", port: server.port, timeout: .seconds(5))
        #expect {
            try connection.startTLS(try TLSClientContext(caFile: certificate))
        } throws: { error in
            (error as? ClientConnectionError).map { "\($0)".contains("certificate verification failed") }
                ?? false
        }
    }

    @Test func refusesACertificateOutsideTheSystemRoots() throws {
        let (directory, certificate, key) = try makeCertificate(subjectAltName: "DNS:localhost")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try tlsServer(certificate, key)
        defer { server.shutdown() }
        let connection = try ClientConnection(host: "localhost", port: server.port, timeout: .seconds(5))
        #expect {
            try connection.startTLS(try TLSClientContext())
        } throws: { error in
            (error as? ClientConnectionError).map { "\($0)".contains("certificate verification failed") }
                ?? false
        }
    }

    @Test func reportsARefusedConnection() throws {
        // A port that was just free: nothing listens there.
        let server = try startServer(Router()).server
        let port = server.port
        server.shutdown()
        server.waitUntilStopped()
        #expect(throws: ClientConnectionError.self) {
            try ClientConnection(host: "127.0.0.1", port: port, timeout: .seconds(2))
        }
    }
}
