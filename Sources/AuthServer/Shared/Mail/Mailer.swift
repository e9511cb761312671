import Foundation
import SMTP
import Synchronization

/// One message, already rendered: plain text plus a simple HTML alternative.
struct OutgoingMail: Sendable, Equatable {
    var to: String
    var subject: String
    var text: String
    var html: String
}

/// Where messages go: SMTP in production, the development mailbox otherwise.
protocol MailTransport: Sendable {
    func deliver(_ mail: OutgoingMail) throws
}

/// The development transport: keeps messages in memory for the dev-only mailbox page (and for
/// tests), newest last, at most `capacity` of them. Synchronous: nothing can fail or wait.
final class DevelopmentMailbox: MailTransport {
    let capacity: Int
    /// When set, one line per message: recipient and subject, never the body (it carries codes).
    let log: Log?
    private let messages = Mutex<[OutgoingMail]>([])

    init(capacity: Int = 200, log: Log? = nil) {
        self.capacity = capacity
        self.log = log
    }

    func deliver(_ mail: OutgoingMail) throws {
        messages.withLock { list in
            list.append(mail)
            if list.count > capacity { list.removeFirst(list.count - capacity) }
        }
        log?.info("mail.development", ["to": mail.to, "subject": mail.subject, "read_at": "/dev/mail"])
    }

    /// The kept messages, newest last; only those to `address` when given.
    func received(to address: String? = nil) -> [OutgoingMail] {
        let all = messages.withLock { $0 }
        guard let address else { return all }
        return all.filter { $0.to.caseInsensitiveCompare(address) == .orderedSame }
    }
}

/// Sends the server's mail. Endpoints call `send` after their transaction has committed;
/// delivery problems are logged (without the message body, which may carry a one-time code)
/// and never fail the request that caused the mail.
struct Mailer: Sendable {
    let transport: any MailTransport
    let log: Log
    /// Recipients not to write to (a private relay address Apple reported undeliverable:
    /// `AppleRelayMail`); nil: every recipient.
    var isUndeliverable: (@Sendable (String) -> Bool)? = nil

    func send(_ mail: OutgoingMail) {
        if let isUndeliverable, isUndeliverable(mail.to) {
            let domain = MailAddress.parse(mail.to)?.domain ?? "invalid"
            log.info("mail.send", ["step": "deliver", "domain": domain, "reason": "undeliverable_relay"])
            return
        }
        do {
            try transport.deliver(mail)
        } catch {
            let domain = MailAddress.parse(mail.to)?.domain ?? "invalid"
            let reason =
                (error as? SMTPError)?.logReason ?? (error as? MailDeliveryQueue.QueueError).map {
                    "queue.\($0)"
                }
                ?? "\(type(of: error))"
            log.warning("mail.send", ["step": "deliver", "domain": domain, "reason": reason])
        }
    }
}
