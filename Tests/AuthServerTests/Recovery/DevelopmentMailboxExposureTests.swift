import Foundation
import Testing

@testable import AuthServer

/// The development mailbox shows every mailed recovery and verification code: whoever reads
/// it can recover any account with a verified address. It must never face the network.
@Suite struct DevelopmentMailboxExposureTests {
    private func mailboxWithACode(_ configure: (inout Configuration) -> Void = { _ in }) throws
        -> TestApplication
    {
        let app = try TestApplication(configure: configure)
        try app.mailbox.deliver(
            OutgoingMail(to: "victim@example.com", subject: "code", text: "123456", html: ""))
        return app
    }

    @Test func devMailboxIsHiddenFromAClientForwardedByATrustedProxy() throws {
        let app = try mailboxWithACode { $0.http.trustedProxies = ["127.0.0.1", "::1"] }
        let reply = try TestAgent(app).send("GET", "/dev/mail", headers: [("X-Forwarded-For", "203.0.113.7")])
        #expect(reply.status == 404)
        #expect(!reply.text.contains("123456"))
    }

    @Test func devMailboxIsHiddenFromAClientForwardedByAnUntrustedLoopbackProxy() throws {
        let app = try mailboxWithACode()
        for header in [
            ("X-Forwarded-For", "203.0.113.7"), ("Forwarded", "for=203.0.113.7"),
            ("X-Real-IP", "203.0.113.7"),
        ] {
            let reply = try TestAgent(app).send("GET", "/dev/mail", headers: [header])
            #expect(reply.status == 404, "\(header.0)")
            #expect(!reply.text.contains("123456"))
        }
    }

    @Test func devMailboxStillAnswersTheMachineItself() throws {
        let app = try mailboxWithACode()
        let reply = try TestAgent(app).send("GET", "/dev/mail")
        #expect(reply.status == 200)
        #expect(reply.text.contains("123456"))
    }

    private func writeConfig(_ json: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "devmail-\(UUID().uuidString).json")
        try Data(json.utf8).write(to: file)
        return file
    }

    @Test(arguments: [
        (
            #"{"issuer": "https://id.example.com", "listen": "127.0.0.1:0", "clients": []}"#,
            "issuer https://id.example.com is not a loopback URL"
        ),
        (
            #"{"issuer": "http://localhost:8080", "listen": "0.0.0.0:8080", "clients": []}"#,
            "listen 0.0.0.0:8080 is not a loopback address"
        ),
        (
            #"{"issuer": "https://id.example.com", "listen": "127.0.0.1:0", "clients": [], "mail": {"transport": "development"}}"#,
            "issuer https://id.example.com is not a loopback URL"
        ),
    ])
    func serveRefusesTheDevelopmentMailboxOffLoopback(config: String, reason: String) throws {
        let file = try writeConfig(config)
        defer { try? FileManager.default.removeItem(at: file) }
        var environment = ProcessInfo.processInfo.environment
        // Nothing listens on port 1: without the refusal, serve would stop at the database.
        environment["AUTH_SERVER_DATABASE_URL"] = "postgresql://127.0.0.1:1/none"
        let serve = try Executable.run(["serve", "--config", file.path], environment: environment)
        #expect(serve.status == 1)
        #expect(serve.error.contains("error: $.mail: the development mailbox"), "\(serve.error)")
        #expect(serve.error.contains(reason), "\(serve.error)")
        #expect(!serve.error.contains("database"), "\(serve.error)")

        let check = try Executable.run(["config", "check", file.path])
        #expect(check.status == 1)
        #expect(check.output.contains("error: $.mail: the development mailbox"), "\(check.output)")
        #expect(check.output.contains(reason), "\(check.output)")
    }

    @Test func configCheckAcceptsTheDevelopmentMailboxOnLoopbackAndSMTPAnywhere() throws {
        for config in [
            #"{"issuer": "http://localhost:8080", "listen": "127.0.0.1:8080", "clients": []}"#,
            #"{"issuer": "http://[::1]:8080", "listen": "[::1]:8080", "clients": []}"#,
            #"{"issuer": "https://id.example.com", "listen": "0.0.0.0:443", "clients": [], "mail": {"transport": "smtp", "smtp": {"host": "smtp.example.com"}}}"#,
        ] {
            let file = try writeConfig(config)
            defer { try? FileManager.default.removeItem(at: file) }
            let check = try Executable.run(["config", "check", file.path])
            #expect(check.status == 0, "\(config): \(check.output)")
        }
    }
}
