import Foundation
import HTTPServer
import SMTP

/// Delivers each message with its own SMTP session. Blocking: wrap it in a
/// `MailDeliveryQueue` so that no request waits for the mail server.
struct SMTPTransport: MailTransport {
    let client: SMTPClient
    let from: MailAddress
    /// The Date header, the Message-ID and the MIME boundary.
    var system = TimeAndRandomness.live

    /// Fails when the trusted roots cannot be loaded (a bad `ca_file`).
    init(settings: SMTPSettings, from: MailAddress, clientName: String = "localhost")
        throws(ClientConnectionError)
    {
        let tls = settings.security == .none ? nil : try TLSClientContext(caFile: settings.caFile)
        client = SMTPClient(settings: settings, tls: tls, clientName: clientName)
        self.from = from
    }

    func deliver(_ mail: OutgoingMail) throws {
        let message: String
        do {
            message = try MIMEMessage.render(
                to: mail.to, subject: mail.subject, text: mail.text, html: mail.html, from: from,
                date: system.now(), messageID: system.uuid(),
                boundary: MIMEMessage.boundary(from: system.uuid()))
        } catch {
            throw SMTPError.invalidAddress
        }
        try client.send(message: message, sender: from.address, recipient: mail.to)
    }
}

extension MailSettings {
    /// The transport `serve` uses: the development mailbox (logging a line per message), or
    /// SMTP behind a background delivery queue.
    func makeTransport(clientName: String, log: Log) throws -> (any MailTransport, MailDeliveryQueue?) {
        switch transport {
        case .development:
            return (DevelopmentMailbox(log: log), nil)
        case .smtp:
            guard let smtp, let sender = MailAddress.parse(from) else { throw SMTPError.invalidAddress }
            let queue = MailDeliveryQueue(
                transport: try SMTPTransport(settings: smtp, from: sender, clientName: clientName), log: log)
            return (queue, queue)
        }
    }
}
