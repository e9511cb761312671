import Foundation
import HTTPServer

/// The account holder deletes their own account (App Store Review Guideline 5.1.1(v): an app
/// that lets people create an account lets them delete it from within the app). The route has
/// already required a recent sign-in; the request names the account's address as the
/// confirmation, so a stray click or a replayed request for another account deletes nothing.
struct AccountDeletionFlow {
    let services: AccountServices
    let store: any AccountDeletionStore

    static let confirmationRequired = APIError(
        status: .badRequest, code: "confirmation_required",
        message: "Type your account's email address to confirm the deletion.")

    /// Deletes the account in one transaction (`AccountDeletion`) and records `account.deleted`
    /// under the anonymous id; then says goodbye to the verified address. Returns what the
    /// deletion queued (back-channel logouts, revocations at Apple).
    func delete(session: CurrentSession, confirmation: String?, request: HTTPRequest) throws
        -> AccountDeletion.Outcome
    {
        // 1. The account, and the confirmation: its own address, as typed (case and spaces aside).
        guard let account = try store.account(session.accountID) else { throw APIError.notSignedIn }
        guard let confirmation,
            EmailAddress.normalize(confirmation.trimmingCharacters(in: .whitespaces))
                == EmailAddress.normalize(account.email)
        else {
            throw Self.confirmationRequired
        }
        // 2. Everything of the account, and the event under the anonymous id, commit together,
        //    while the session is still live.
        let anonymousID = services.system.uuid()
        let outcome = try store.transaction { store -> AccountDeletion.Outcome? in
            let clients = services.clients?.current.configuration.clients ?? services.configuration.clients
            guard
                let outcome = try store.delete(session: session, anonymousID: anonymousID, clients: clients)
            else {
                return nil
            }
            try store.record(
                AuditEvent(
                    kind: .accountDeleted, actor: .user, accountID: anonymousID,
                    detail: ["by": "self"]))
            return outcome
        }
        guard let outcome else { throw APIError.notSignedIn }
        // 3. After the commit: the log (no address, no account id) and the goodbye mail.
        services.log.info(
            "account.deleted",
            ["anonymous_id": anonymousID.uuidString, "logouts": String(outcome.logoutsQueued)])
        if let email = outcome.verifiedEmail {
            let content = MailTemplates.goodbye(
                at: services.system.now(), siteName: services.configuration.relyingPartyName,
                language: EmailVerificationFlow.language(of: request))
            services.mailer.send(content.mail(to: email))
        }
        return outcome
    }
}
