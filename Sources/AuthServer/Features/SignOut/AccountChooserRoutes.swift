import Foundation
import HTTPServer
import LoginPages
import OIDC

/// The account chooser outside an authorization request: `GET /accounts` (the accounts signed
/// in in this browser), `POST /accounts/switch` (make one current) and `POST /accounts/signout`
/// (sign out of one account, or of all with `all=1`). Forms carry the CSRF token; a forged or
/// expired post changes nothing.
struct AccountChooserRoutes: Sendable {
    let services: AccountServices

    func register(on router: Router) {
        let routes = self
        router.get("/accounts") { request, _ in try routes.page(request) }
        router.post("/accounts/switch") { request, _ in try routes.switchAccount(request) }
        router.post("/accounts/signout") { request, _ in try routes.signOut(request) }
    }

    private var flow: AccountChooserFlow { AccountChooserFlow(services: services) }

    func page(_ request: HTTPRequest) throws -> HTTPResponse {
        let returnTo = ReturnTo.sanitize(request.queryValue("return_to")) ?? ReturnTo.fallback
        let accounts = try flow.accounts(request)
        let another = Self.useAnotherAccount(returnTo: returnTo)
        if accounts.isEmpty { return Pages.noStore(.redirect(to: another)) }
        return Pages.page(services, request) { context in
            LoginPages.accountChooser(
                AccountChooserPage(
                    context: context, accounts: accounts.map(Self.row), clientName: nil,
                    action: "/accounts/switch", hiddenFields: [(name: "return_to", value: returnTo)],
                    useAnotherAccountLink: another,
                    signOutReturnTo: "/accounts?return_to=" + FormEncoding.encode(returnTo)
                ))
        }
    }

    func switchAccount(_ request: HTTPRequest) throws -> HTTPResponse {
        let form = Pages.form(request)
        let returnTo = ReturnTo.sanitize(form["return_to"]) ?? ReturnTo.fallback
        guard (try? services.csrf.verify(request, submitted: form[CSRFProtection.formField] ?? "")) != nil,
            let id = form["session_id"].flatMap(UUID.init(uuidString:)),
            let cookies = try flow.switchTo(id, request)
        else {
            return Pages.noStore(.redirect(to: "/accounts?return_to=" + FormEncoding.encode(returnTo)))
        }
        var response = Pages.noStore(.redirect(to: returnTo))
        for cookie in cookies { response.setCookie(cookie) }
        return response
    }

    func signOut(_ request: HTTPRequest) throws -> HTTPResponse {
        let form = Pages.form(request)
        let returnTo = ReturnTo.sanitize(form["return_to"]) ?? ReturnTo.fallback
        guard (try? services.csrf.verify(request, submitted: form[CSRFProtection.formField] ?? "")) != nil
        else { return Pages.noStore(.redirect(to: returnTo)) }
        let one = form["session_id"].flatMap(UUID.init(uuidString:))
        guard one != nil || form["all"] == "1" else { return Pages.noStore(.redirect(to: returnTo)) }
        let (cookies, remaining) = try flow.signOut(one, request)
        var response = Pages.noStore(.redirect(to: remaining == 0 ? "/signin" : returnTo))
        for cookie in cookies { response.setCookie(cookie) }
        return response
    }

    static func row(_ account: BrowserAccount) -> AccountChooserPage.Account {
        AccountChooserPage.Account(
            sessionID: account.sessionID.lowercased, displayName: account.displayName, email: account.email,
            isCurrent: account.isCurrent)
    }

    /// The sign-in page asking again (not continuing as the current account), then `returnTo`.
    static func useAnotherAccount(returnTo: String) -> String {
        "/signin?"
            + FormEncoding.encode([(name: "prompt", value: "login"), (name: "return_to", value: returnTo)])
    }
}
