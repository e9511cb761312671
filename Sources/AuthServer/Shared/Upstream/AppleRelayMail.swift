import Foundation
import Postgres

/// Apple's private email relay forwards to the user's own mailbox until the user turns
/// forwarding off for this app (the `email-disabled` notification). Mail to such an address
/// would bounce at the relay, so the mailer does not send it (`Mailer.isUndeliverable`).
enum AppleRelayMail {
    /// Whether `address` is a relay address Apple reported undeliverable.
    static func isUndeliverable(_ address: String, on db: some SQLExecutor) throws -> Bool {
        try db.query(
            """
            SELECT EXISTS (SELECT 1 FROM upstream_identities
                           WHERE lower(email) = lower(\(address)) AND is_private_email AND NOT email_deliverable)
                AS undeliverable
            """
        ).first?.decode("undeliverable") ?? false
    }
}
