import Foundation
import OIDC
import Postgres

/// The security events the server records. The raw values are what `audit_events.event`
/// holds and what `auth-server audit` prints, so they never change once released.
enum AuditEventKind: String, Sendable, CaseIterable {
    /// detail: method (password, passkey).
    case signInSucceeded = "sign_in.succeeded"
    /// detail: method, reason. account_id only when the account is known.
    case signInFailed = "sign_in.failed"
    case signedOut = "session.signed_out"
    /// detail: method (password, passkey). A session proved its user again before a credential change.
    case reauthenticated = "session.reauthenticated"
    case sessionsRevoked = "session.revoked"
    case accountCreated = "account.created"
    case accountDisabled = "account.disabled"
    case accountEnabled = "account.enabled"
    case accountDeleted = "account.deleted"
    /// An operator assigned or removed a role or group. detail: name.
    case roleAdded = "account.role_added"
    case roleRemoved = "account.role_removed"
    case groupAdded = "account.group_added"
    case groupRemoved = "account.group_removed"
    /// An operator changed the display name or profile fields. detail: fields (claim names).
    case profileUpdated = "account.profile_updated"
    /// The conditional upgrade's challenge was issued after a password sign-in.
    case passkeyUpgradeOffered = "passkey.upgrade_offered"
    /// detail: ceremony (sign_up, modal, conditional, recovery), name.
    case passkeyAdded = "passkey.added"
    case passkeyRemoved = "passkey.removed"
    /// A passkey sign-in whose signature counter did not grow: the authenticator may be cloned.
    case passkeyCounterRegression = "passkey.counter_regression"
    case passwordChanged = "password.changed"
    case passwordRemoved = "password.removed"
    case passwordReset = "password.reset"
    case emailVerified = "email.verified"
    /// A code was mailed to a new address for the account (not the address itself).
    case emailChangeRequested = "email.change_requested"
    /// The new address was confirmed and replaced the old one. detail: via (code, link).
    case emailChanged = "email.changed"
    /// The old address's link restored it; every session ended. detail: sessions_revoked.
    case emailChangeUndone = "email.change_undone"
    /// The account or its address spent its guesses at verification codes for the window.
    /// detail: retry_after (seconds).
    case emailVerificationLocked = "email.verification_locked"
    /// Another account verified this account's address first; the address was removed from
    /// this account. detail: verified_by (account id).
    case emailAddressReleased = "email.address_released"
    /// Someone signed up with an address another account has verified; the owner was told.
    case signUpForVerifiedAddress = "account.sign_up_for_taken_address"
    case recoveryStarted = "recovery.started"
    case recoveryCompleted = "recovery.completed"
    case refreshTokenReuseDetected = "token.refresh_reuse_detected"
    case authorizationCodeReplayed = "token.code_replayed"
    /// A Sign in with Apple server-to-server notification was acted on. detail: type, action.
    case appleNotification = "upstream.apple_notification"
    case clientsReloaded = "clients.reloaded"
    case signingKeyRotated = "keys.rotated"
    /// An upstream identity was linked to the account. detail: provider, how (sign_up, proof, account).
    case upstreamLinked = "upstream.linked"
    /// detail: provider.
    case upstreamUnlinked = "upstream.unlinked"
}

/// Who caused an event.
enum AuditActor: String, Sendable {
    /// The account holder, through the pages, the JSON API or an OAuth client.
    case user
    /// An operator, through the command-line tool.
    case admin
    /// The server itself (maintenance, detection).
    case system
}

/// One security event. `detail` holds short facts only (a method, a reason, a passkey name):
/// never a token, code, password or session id.
struct AuditEvent: Sendable, Equatable {
    var kind: AuditEventKind
    var actor: AuditActor
    var accountID: UUID?
    var clientID: String?
    var clientAddress: String = ""
    var detail: [String: String] = [:]
}

/// Writes and reads `audit_events`.
///
/// `record` runs on the executor it is given: inside the transaction of the change it
/// describes when there is one (so the change and its event commit together), or on the pool
/// for events that stand alone, such as a failed sign-in.
enum AuditLog {
    static func record(_ event: AuditEvent, on db: some SQLExecutor) throws {
        let detail = encodeDetail(event.detail)
        // Nothing is read back: inside a transaction it goes with the next statement.
        try db.queue(
            """
            INSERT INTO audit_events (event, actor, account_id, client_id, client_address, detail)
            VALUES (\(event.kind.rawValue), \(event.actor.rawValue), \(event.accountID), \(event.clientID),
                    \(event.clientAddress), \(detail)::jsonb)
            """)
    }

    /// A JSON object of strings with sorted keys.
    static func encodeDetail(_ detail: [String: String]) -> String {
        String(decoding: JSONBody.encode(detail), as: UTF8.self)
    }
}
