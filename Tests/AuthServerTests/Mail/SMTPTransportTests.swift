import Foundation
import HTTPServer
import SMTP
import SMTPTestSupport
import Testing

@testable import AuthServer

@Suite("SMTP transport and the delivery queue")
struct SMTPTransportTests {
    static func settings(_ server: TinySMTPServer, timeout: Int = 5) -> SMTPSettings {
        var settings = SMTPSettings(host: "127.0.0.1", port: server.port, security: .none)
        settings.timeoutSeconds = timeout
        return settings
    }

    @Test func startTLSIsRequiredWhenConfigured() throws {
        let server = try TinySMTPServer()
        defer { server.stop() }
        var settings = Self.settings(server)
        settings.security = .starttls
        let transport = try SMTPTransport(
            settings: settings, from: try #require(MailAddress.parse("x@example.com")))
        #expect(throws: SMTPError.startTLSUnavailable) {
            try transport.deliver(OutgoingMail(to: "b@example.com", subject: "s", text: "t", html: "h"))
        }
    }

    @Test func theQueueRetriesTransientFailures() throws {
        let server = try TinySMTPServer(.init(rcptReplies: ["451 try later"]))
        defer { server.stop() }
        let buffer = LogBuffer()
        let log = Log(write: { buffer.append($0) })
        let transport = try SMTPTransport(
            settings: Self.settings(server), from: try #require(MailAddress.parse("no-reply@example.com")))
        let queue = MailDeliveryQueue(
            transport: transport, policy: .init(capacity: 10, maxAttempts: 3, retryBase: .milliseconds(50)),
            log: log)
        queue.start()
        defer { queue.stop() }
        Mailer(transport: queue, log: log).send(
            OutgoingMail(to: "grace@example.org", subject: "s", text: "secret body 654321", html: "h"))
        let received = server.waitFor(1)
        #expect(received.count == 1)
        #expect(received.first?.rcptTo == "<grace@example.org>")
        let deadline = Date().addingTimeInterval(10)
        while !buffer.text.contains("mail.delivered"), Date() < deadline { usleep(20_000) }
        #expect(buffer.text.contains("event=mail.retry"))
        #expect(buffer.text.contains("reason=rcptTo.451"))
        #expect(buffer.text.contains("domain=example.org"))
        #expect(!buffer.text.contains("grace@"))
        #expect(!buffer.text.contains("654321"))
    }

    @Test func theQueueDropsAfterAPermanentFailure() throws {
        let server = try TinySMTPServer(.init(rcptReplies: ["550 no", "250 ok"]))
        defer { server.stop() }
        let buffer = LogBuffer()
        let log = Log(write: { buffer.append($0) })
        let transport = try SMTPTransport(
            settings: Self.settings(server), from: try #require(MailAddress.parse("no-reply@example.com")))
        let queue = MailDeliveryQueue(
            transport: transport, policy: .init(capacity: 10, maxAttempts: 3, retryBase: .milliseconds(50)),
            log: log)
        queue.start()
        Mailer(transport: queue, log: log).send(
            OutgoingMail(to: "x@example.net", subject: "s", text: "t", html: "h"))
        let deadline = Date().addingTimeInterval(10)
        while !buffer.text.contains("mail.dropped"), Date() < deadline { usleep(20_000) }
        queue.stop()
        #expect(buffer.text.contains("event=mail.dropped"))
        #expect(buffer.text.contains("domain=example.net"))
        #expect(buffer.text.contains("attempts=1"))
        #expect(server.received.isEmpty)
    }

    @Test func aFullQueueRefusesWithoutBlocking() throws {
        let buffer = LogBuffer()
        let log = Log(write: { buffer.append($0) })
        // Not started: nothing drains it.
        let queue = MailDeliveryQueue(transport: DevelopmentMailbox(), policy: .init(capacity: 1), log: log)
        let mailer = Mailer(transport: queue, log: log)
        mailer.send(OutgoingMail(to: "a@example.com", subject: "s", text: "t", html: "h"))
        mailer.send(OutgoingMail(to: "b@example.com", subject: "s", text: "t", html: "h"))
        #expect(queue.pendingCount == 1)
        #expect(buffer.text.contains("reason=queue.full"))
    }
}
