import Foundation
import HTTPServer
import SMTPTestSupport
import Testing

@testable import SMTP

@Suite("SMTP client and MIME")
struct SMTPClientTests {
    static func settings(_ server: TinySMTPServer, timeout: Int = 5) -> SMTPSettings {
        var settings = SMTPSettings(host: "127.0.0.1", port: server.port, security: .none)
        settings.timeoutSeconds = timeout
        return settings
    }

    @Test func sendsWithAuthPlainAndDotStuffing() throws {
        let server = try TinySMTPServer()
        defer { server.stop() }
        var settings = Self.settings(server)
        settings.username = "mailer"
        settings.password = "pa55"
        let message = "Subject: x\r\n\r\n.leading dot\nbare LF line\r\n..two dots\r\n"
        try SMTPClient(settings: settings).send(
            message: message, sender: "no-reply@example.com", recipient: "ada@example.org")
        let received = try #require(server.waitFor(1).first)
        #expect(received.mailFrom == "<no-reply@example.com>")
        #expect(received.rcptTo == "<ada@example.org>")
        #expect(received.auth == Data("\0mailer\0pa55".utf8).base64EncodedString())
        #expect(received.data == "Subject: x\r\n\r\n.leading dot\r\nbare LF line\r\n..two dots\r\n")
    }

    @Test func aRejectedRecipientIsAPermanentTypedError() throws {
        let server = try TinySMTPServer(.init(rcptReplies: ["550 no such user"]))
        defer { server.stop() }
        #expect(throws: SMTPError.unexpectedReply(step: "rcptTo", code: 550)) {
            try SMTPClient(settings: Self.settings(server)).send(
                message: "x\r\n", sender: "a@example.com", recipient: "b@example.com")
        }
        #expect(!SMTPError.unexpectedReply(step: "rcptTo", code: 550).isTransient)
        #expect(SMTPError.unexpectedReply(step: "rcptTo", code: 451).isTransient)
        #expect(server.received.isEmpty)
    }

    @Test func internationalAddressesNeedSMTPUTF8() throws {
        let plain = try TinySMTPServer()
        defer { plain.stop() }
        #expect(throws: SMTPError.internationalAddressUnsupported) {
            try SMTPClient(settings: Self.settings(plain)).send(
                message: "x\r\n", sender: "a@example.com", recipient: "花子@例え.jp")
        }
        let utf8 = try TinySMTPServer(.init(capabilities: ["SMTPUTF8"]))
        defer { utf8.stop() }
        try SMTPClient(settings: Self.settings(utf8)).send(
            message: "x\r\n", sender: "a@example.com", recipient: "花子@例え.jp")
        #expect(utf8.waitFor(1).first?.mailFrom == "<a@example.com> SMTPUTF8")
        #expect(utf8.received.first?.rcptTo == "<花子@例え.jp>")
    }

    @Test func credentialsWithoutAnAuthMechanismAreRefused() throws {
        let server = try TinySMTPServer(.init(capabilities: ["SIZE 100"]))
        defer { server.stop() }
        var settings = Self.settings(server)
        settings.username = "u"
        settings.password = "p"
        #expect(throws: SMTPError.authenticationUnavailable) {
            try SMTPClient(settings: settings).send(
                message: "x\r\n", sender: "a@example.com", recipient: "b@example.com")
        }
    }

    @Test func aSilentServerTimesOut() throws {
        let server = try TinySMTPServer(.init(silent: true))
        defer { server.stop() }
        #expect(throws: SMTPError.connection(.timedOut)) {
            try SMTPClient(settings: Self.settings(server, timeout: 1)).send(
                message: "x\r\n", sender: "a@example.com", recipient: "b@example.com")
        }
    }

    @Test(arguments: [
        ("554 not today", SMTPError.unexpectedReply(step: "greeting", code: 554)),
        ("hello there", SMTPError.malformedReply(step: "greeting")),
        ("220-" + String(repeating: "x", count: 5_000), SMTPError.connection(.lineTooLong)),
    ])
    func badGreetingsAreTypedErrors(greeting: String, expected: SMTPError) throws {
        let server = try TinySMTPServer(.init(greeting: greeting))
        defer { server.stop() }
        #expect(throws: expected) {
            try SMTPClient(settings: Self.settings(server)).send(
                message: "x\r\n", sender: "a@example.com", recipient: "b@example.com")
        }
    }

    @Test func headerInjectionInTheRecipientIsRefused() throws {
        let from = try #require(MailAddress.parse("auth <no-reply@example.com>"))
        #expect(throws: MIMEMessage.RenderError.invalidRecipient) {
            try MIMEMessage.render(
                to: "a@example.com\r\nBcc: b@example.com", subject: "s", text: "t", html: "h", from: from,
                date: Date(), messageID: UUID(), boundary: "B")
        }
    }

    @Test func rendersMultipartUTF8WithEncodedJapaneseSubject() throws {
        let from = try #require(MailAddress.parse("認証サーバー <no-reply@example.com>"))
        let subject = "メールアドレスの確認をお願いします。このコードは15分間有効です。"
        let message = try MIMEMessage.render(
            to: "ada@example.org", subject: subject, text: "こんにちは\nコード: 123456", html: "<p>こんにちは</p>",
            from: from, date: Date(timeIntervalSince1970: 0), messageID: UUID(), boundary: "B")
        let lines = message.components(separatedBy: "\r\n")
        #expect(lines.allSatisfy { $0.utf8.count <= 78 })
        #expect(message.utf8.allSatisfy { $0 < 0x80 })
        #expect(lines.contains("Date: Thu, 1 Jan 1970 00:00:00 +0000"))
        #expect(lines.contains("Content-Type: multipart/alternative; boundary=\"B\""))
        #expect(lines.contains("Content-Type: text/plain; charset=UTF-8"))
        #expect(lines.contains("Content-Type: text/html; charset=UTF-8"))
        #expect(lines.contains { $0.hasPrefix("Message-ID: <") && $0.hasSuffix("@example.com>") })
        #expect(lines.contains { $0.hasPrefix("From: =?UTF-8?B?") && $0.hasSuffix("<no-reply@example.com>") })

        // Decode the subject's encoded words back.
        let start = try #require(lines.firstIndex { $0.hasPrefix("Subject: ") })
        var words = [String(lines[start].dropFirst(9))]
        var index = start + 1
        while lines[index].hasPrefix(" ") {
            words.append(String(lines[index].dropFirst()))
            index += 1
        }
        #expect(words.count > 1)
        let decoded = try words.map { word -> String in
            #expect(word.hasPrefix("=?UTF-8?B?") && word.hasSuffix("?=") && word.count <= 75)
            let payload = String(word.dropFirst(10).dropLast(2))
            return String(decoding: try #require(Data(base64Encoded: payload)), as: UTF8.self)
        }.joined()
        #expect(decoded == subject)

        // The text part decodes to the text with CRLF line ends.
        let textStart = try #require(lines.firstIndex(of: "Content-Type: text/plain; charset=UTF-8")) + 3
        let textEnd = try #require(lines[textStart...].firstIndex(of: "--B"))
        let body = Data(base64Encoded: lines[textStart..<textEnd].joined())
        #expect(body.map { String(decoding: $0, as: UTF8.self) } == "こんにちは\r\nコード: 123456")
    }

    @Test func plainASCIISubjectsStayReadableAndControlCharactersCannotAddHeaders() {
        #expect(MIMEMessage.encodedHeaderText("Confirm your email address") == "Confirm your email address")
        #expect(MIMEMessage.encodedHeaderText("a\r\nBcc: x@example.com") == "a  Bcc: x@example.com")
        #expect(
            MIMEMessage.mailbox(MailAddress(displayName: "auth, server", address: "a@b.c"))
                == "\"auth, server\" <a@b.c>")
    }
}
