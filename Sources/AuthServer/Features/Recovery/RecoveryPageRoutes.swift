import Foundation
import HTTPServer
import LoginPages

/// The pages of recovery and of the passwordless policy: `/recover`, `/passkey-prompt`, and
/// `/dev/mail` (registered only when mail goes to the development mailbox, and shown only to
/// requests from this machine).
struct RecoveryPageRoutes: Sendable {
    let services: AccountServices

    func register(on router: Router) {
        let services = services

        router.get("/recover") { request, _ in
            PageRoutes.page(services, request) { context in
                LoginPages.recover(
                    RecoverPage(
                        context: context, email: request.queryValue("email") ?? "",
                        uiLocales: request.queryValue("ui_locales")))
            }
        }

        router.get("/passkey-prompt") { request, _ in
            let returnTo = ReturnTo.sanitize(request.queryValue("return_to")) ?? ReturnTo.fallback
            guard try services.sessions.current(request) != nil else {
                return PageRoutes.noStore(.redirect(to: "/signin"))
            }
            return PageRoutes.page(services, request) { context in
                LoginPages.passkeyPrompt(PasskeyPromptPage(context: context, returnTo: returnTo))
            }
        }

        if let mailbox = services.mailer.transport as? DevelopmentMailbox {
            router.get("/dev/mail") { request, _ in
                // Every recovery and verification code is here: only this machine may look.
                guard Loopback.isLocal(request) else { throw HTTPError(.notFound) }
                let messages = mailbox.received().reversed().map {
                    DevMailboxPage.Message(to: $0.to, subject: $0.subject, text: $0.text)
                }
                return PageRoutes.page(services, request) { context in
                    LoginPages.devMailbox(DevMailboxPage(context: context, messages: Array(messages)))
                }
            }
        }
    }
}
