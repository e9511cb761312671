import Foundation
import HTTPServer

/// Why a message could not be handed to the SMTP server.
public enum SMTPError: Error, Equatable, CustomStringConvertible {
    /// Connecting, reading, writing or TLS failed (including timeouts and certificate errors).
    case connection(ClientConnectionError)
    /// The server answered `code` where the step expected something else.
    case unexpectedReply(step: String, code: Int)
    /// The server's reply was not `NNN text` lines.
    case malformedReply(step: String)
    /// The configuration asks for STARTTLS but the server does not offer it.
    case startTLSUnavailable
    /// Credentials are configured but the server offers neither AUTH PLAIN nor AUTH LOGIN.
    case authenticationUnavailable
    case invalidAddress
    case invalidMessage
    /// An address with non-ASCII characters, and the server does not offer SMTPUTF8 (RFC 6531).
    case internationalAddressUnsupported

    public var description: String {
        switch self {
        case .connection(let error): "connection: \(error)"
        case .unexpectedReply(let step, let code): "\(step): reply \(code)"
        case .malformedReply(let step): "\(step): malformed reply"
        case .startTLSUnavailable: "the server does not offer STARTTLS"
        case .authenticationUnavailable: "the server offers no usable AUTH mechanism"
        case .invalidAddress: "invalid address"
        case .invalidMessage: "invalid message"
        case .internationalAddressUnsupported: "the server does not accept non-ASCII addresses (SMTPUTF8)"
        }
    }

    /// Worth another try later: 4xx replies and connection trouble. A 5xx reply, a refused
    /// certificate or a missing capability stays the same however often it is retried.
    public var isTransient: Bool {
        switch self {
        case .unexpectedReply(_, let code): (400..<500).contains(code)
        case .connection(.tls(let detail)): !detail.hasPrefix("certificate")
        case .connection: true
        case .malformedReply: true
        default: false
        }
    }

    /// A short, secret-free reason for log lines.
    public var logReason: String {
        switch self {
        case .connection(let error):
            switch error {
            case .timedOut: "timeout"
            case .closed: "connectionClosed"
            case .lineTooLong: "lineTooLong"
            case .unresolvable: "unresolvable"
            case .connectFailed: "connectFailed"
            case .tls(let detail): detail.hasPrefix("certificate") ? "certificateRejected" : "tlsFailed"
            case .system: "socketError"
            }
        case .unexpectedReply(let step, let code): "\(step).\(code)"
        case .malformedReply(let step): "\(step).malformedReply"
        case .startTLSUnavailable: "startTLSUnavailable"
        case .authenticationUnavailable: "authenticationUnavailable"
        case .invalidAddress: "invalidAddress"
        case .invalidMessage: "invalidMessage"
        case .internationalAddressUnsupported: "smtputf8Unsupported"
        }
    }
}

/// One SMTP reply: its code and the text of each line.
public struct SMTPReply: Sendable, Equatable {
    public var code: Int
    public var lines: [String]
}

/// A small SMTP submission client (RFC 5321, RFC 3207 STARTTLS, RFC 4954 AUTH): one
/// connection per call, one message, then QUIT. Blocking, for the delivery thread.
public struct SMTPClient: Sendable {
    public var settings: SMTPSettings
    /// Required for `starttls` and `tls`.
    public var tls: TLSClientContext?
    /// The name this host gives in EHLO.
    public var clientName: String

    public init(settings: SMTPSettings, tls: TLSClientContext? = nil, clientName: String = "localhost") {
        self.settings = settings
        self.tls = tls
        self.clientName = clientName
    }

    /// Sends `message` (an RFC 5322 message with CRLF line ends) from `sender` to `recipient`.
    public func send(message: String, sender: String, recipient: String) throws(SMTPError) {
        guard MailAddress.isValidAddress(sender), MailAddress.isValidAddress(recipient) else {
            throw .invalidAddress
        }
        let connection: ClientConnection
        do {
            connection = try ClientConnection(
                host: settings.host, port: settings.port, timeout: .seconds(settings.timeoutSeconds))
        } catch {
            throw .connection(error)
        }
        defer { connection.close() }
        let session = Session(connection: connection)
        if settings.security == .tls {
            guard let tls else { throw .connection(.tls("no TLS context")) }
            try session.startTLS(tls)
        }
        try session.expect("greeting", 220)
        var capabilities = try session.ehlo(clientName)
        if settings.security == .starttls {
            guard capabilities.contains(where: { $0.uppercased() == "STARTTLS" }), let tls else {
                throw .startTLSUnavailable
            }
            try session.command("STARTTLS", step: "starttls", expect: 220)
            try session.startTLS(tls)
            capabilities = try session.ehlo(clientName)
        }
        if let username = settings.username, let password = settings.password {
            try authenticate(session, capabilities: capabilities, username: username, password: password)
        }
        // Non-ASCII addresses (and so raw UTF-8 in the To header) need SMTPUTF8 (RFC 6531).
        var mailFrom = "MAIL FROM:<\(sender)>"
        if !(sender + recipient).allSatisfy(\.isASCII) {
            guard capabilities.contains(where: { $0.uppercased() == "SMTPUTF8" }) else {
                throw .internationalAddressUnsupported
            }
            mailFrom += " SMTPUTF8"
        }
        try session.command(mailFrom, step: "mailFrom", expect: 250)
        let rcpt = try session.command("RCPT TO:<\(recipient)>", step: "rcptTo")
        guard rcpt.code == 250 || rcpt.code == 251 else {
            throw .unexpectedReply(step: "rcptTo", code: rcpt.code)
        }
        try session.command("DATA", step: "data", expect: 354)
        try session.write(Self.dotStuffed(message) + ".\r\n")
        try session.expect("dataEnd", 250)
        _ = try? session.command("QUIT", step: "quit")
    }

    private func authenticate(
        _ session: Session, capabilities: [String], username: String, password: String
    ) throws(SMTPError) {
        let mechanisms = Set(
            capabilities.filter { $0.uppercased().hasPrefix("AUTH ") || $0.uppercased().hasPrefix("AUTH=") }
                .flatMap { $0.dropFirst(5).split(separator: " ").map { $0.uppercased() } })
        if mechanisms.contains("PLAIN") {
            let token = Data(([0] + Array(username.utf8) + [0] + Array(password.utf8))).base64EncodedString()
            try session.command("AUTH PLAIN \(token)", step: "auth", expect: 235)
        } else if mechanisms.contains("LOGIN") {
            try session.command("AUTH LOGIN", step: "auth", expect: 334)
            try session.command(Data(username.utf8).base64EncodedString(), step: "authUser", expect: 334)
            try session.command(Data(password.utf8).base64EncodedString(), step: "authPassword", expect: 235)
        } else {
            throw .authenticationUnavailable
        }
    }

    /// CRLF line ends everywhere, a leading dot doubled (RFC 5321 §4.5.2), and a final CRLF.
    static func dotStuffed(_ message: String) -> String {
        let normalized = MIMEMessage.normalizeNewlines(message)
        var lines = normalized.components(separatedBy: "\r\n")
        if lines.last == "" { lines.removeLast() }
        return lines.map { $0.hasPrefix(".") ? "." + $0 : $0 }.joined(separator: "\r\n") + "\r\n"
    }

    /// The connection plus reply parsing.
    final class Session {
        let connection: ClientConnection
        init(connection: ClientConnection) { self.connection = connection }

        func write(_ text: String) throws(SMTPError) {
            do { try connection.write(Array(text.utf8)) } catch { throw .connection(error) }
        }

        func startTLS(_ context: TLSClientContext) throws(SMTPError) {
            do { try connection.startTLS(context) } catch { throw .connection(error) }
        }

        /// Reads `NNN-text` lines up to the final `NNN text` line.
        func readReply(step: String) throws(SMTPError) -> SMTPReply {
            var lines: [String] = []
            var code = 0
            for _ in 0..<100 {
                let line: String
                do { line = try connection.readLine() } catch { throw .connection(error) }
                let bytes = Array(line.utf8)
                guard bytes.count >= 3, let parsed = Int(String(decoding: bytes[0..<3], as: UTF8.self)),
                    (200...599).contains(parsed) || (100...199).contains(parsed),
                    code == 0 || code == parsed
                else { throw .malformedReply(step: step) }
                code = parsed
                lines.append(bytes.count > 4 ? String(decoding: bytes[4...], as: UTF8.self) : "")
                if bytes.count == 3 || bytes[3] == UInt8(ascii: " ") {
                    return SMTPReply(code: code, lines: lines)
                }
                guard bytes[3] == UInt8(ascii: "-") else { throw .malformedReply(step: step) }
            }
            throw .malformedReply(step: step)
        }

        @discardableResult
        func expect(_ step: String, _ code: Int) throws(SMTPError) -> SMTPReply {
            let reply = try readReply(step: step)
            guard reply.code == code else { throw .unexpectedReply(step: step, code: reply.code) }
            return reply
        }

        @discardableResult
        func command(_ line: String, step: String, expect code: Int? = nil) throws(SMTPError) -> SMTPReply {
            try write(line + "\r\n")
            let reply = try readReply(step: step)
            if let code, reply.code != code { throw .unexpectedReply(step: step, code: reply.code) }
            return reply
        }

        /// EHLO, returning the capability lines (the first line is the server's greeting).
        func ehlo(_ name: String) throws(SMTPError) -> [String] {
            let reply = try command("EHLO \(name)", step: "ehlo", expect: 250)
            return Array(reply.lines.dropFirst())
        }
    }
}
