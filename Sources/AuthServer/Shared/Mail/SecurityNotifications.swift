import Foundation
import HTTPServer

/// Tells the account holder about a change to how the account is signed in to (a passkey
/// added or removed, the password changed or removed), so that a change they did not make is
/// noticed. Called after the change has committed; never fails the request.
struct SecurityNotifications: Sendable {
    let services: AccountServices

    func send(_ event: MailTemplates.SecurityEvent, accountID: UUID, request: HTTPRequest) {
        do {
            guard let email = try services.emailVerification.primaryEmail(accountID: accountID)
            else {
                return
            }
            let content = MailTemplates.securityNotice(
                event, at: services.system.now(), accountURL: services.configuration.issuer + "/account",
                siteName: services.configuration.relyingPartyName,
                language: EmailVerificationFlow.language(of: request))
            services.mailer.send(content.mail(to: email.email))
        } catch {
            services.log.warning(
                "mail.notification",
                ["step": "lookupAddress", "account": accountID.uuidString, "reason": "\(type(of: error))"])
        }
    }
}

extension AccountServices {
    var notifications: SecurityNotifications { SecurityNotifications(services: self) }
}
