import Foundation
import HTTPServer
import LoginPages
import OIDC

/// `GET|POST /logout` and `POST /logout/confirm`: OpenID Connect RP-Initiated Logout 1.0.
///
/// With a valid `id_token_hint` for the current session the session ends at once. Without
/// one (or with a hint for someone else, or a hint that is not an ID token this server issued
/// to a registered client) the user is asked first, and afterwards the browser goes to a
/// client's `post_logout_redirect_uri` only if a valid hint named that client.
/// Ending a session queues a back-channel logout for every client that the session signed
/// in to and that registered a `backchannel_logout_uri`.
struct LogoutEndpoint: Sendable {
    let oauth: OAuthServices

    func register(on router: Router) {
        let endpoint = self
        router.get("/logout") { request, _ in
            endpoint.handle(request) { () throws(HTTPError) in try request.decodedQuery() }
        }
        router.post("/logout") { request, _ in
            endpoint.handle(request) { () throws(HTTPError) in try request.formItems() }
        }
        router.post("/logout/confirm") { request, _ in
            let items = (try? request.formItems()) ?? []
            do {
                try endpoint.oauth.accounts.csrf.verify(
                    request, submitted: items.first { $0.name == CSRFProtection.formField }?.value)
            } catch {
                return endpoint.oauth.errorPage(
                    request, OAuthError(.invalidRequest, hint: "The sign-out form expired; try again."))
            }
            let confirmed = items.first { $0.name == "confirm" }?.value == "yes"
            let kept = items.filter { $0.name != "confirm" && $0.name != CSRFProtection.formField }
            return endpoint.handle(request, confirmation: confirmed) { () throws(HTTPError) in kept }
        }
    }

    func handle(
        _ request: HTTPRequest, confirmation: Bool? = nil,
        _ items: () throws(HTTPError) -> [(name: String, value: String)]
    ) -> HTTPResponse {
        do {
            return try logout(request, items: try items(), confirmation: confirmation)
        } catch let error as HTTPError {
            return oauth.errorPage(
                request, OAuthError(.invalidRequest, hint: "The request is malformed.", debug: error.message))
        } catch let error as OAuthError {
            return oauth.errorPage(request, error)
        } catch {
            oauth.log.error("logout.failed", ["reason": OAuthServices.describe(error)])
            return oauth.errorPage(request, OAuthServices.failure(error))
        }
    }

    func logout(_ request: HTTPRequest, items: [(name: String, value: String)], confirmation: Bool?) throws
        -> HTTPResponse
    {
        let current = try oauth.accounts.sessions.current(request)
        let decision = try LogoutRequest.validate(
            Parameters(items), verifier: try oauth.verifier(), issuer: oauth.issuer,
            session: current.map(OAuthServices.browserSession), client: { oauth.clients.client($0) })
        if decision.hintRejected {
            oauth.log.warning("logout.hint_rejected", ["reason": "notAnIDTokenOfARegisteredClient"])
        }
        let (context, cookie) = oauth.pageContext(request, uiLocales: decision.uiLocales)
        // A redirect to the client only when a valid hint identified it, or the request
        // needed no confirmation (which also takes a valid hint, or no session at all).
        let hintIdentifiedClient = decision.hintSubject != nil

        guard let current else {
            // Nobody is signed in here: nothing to end.
            if let redirect = decision.postLogoutRedirect, hintIdentifiedClient || decision.client != nil {
                return OAuthServices.noStore(.redirect(to: redirect))
            }
            return OAuthServices.page(LoginPages.signedOut(context), cookie: cookie)
        }

        if decision.requiresConfirmation && confirmation == nil {
            let html = LoginPages.logoutConfirmation(
                LogoutConfirmationPage(
                    context: context, clientName: decision.client.map { oauth.clientName($0.clientID) },
                    fields: items))
            return OAuthServices.page(html, cookie: cookie)
        }
        if confirmation == false {
            if let redirect = decision.postLogoutRedirect, hintIdentifiedClient {
                return OAuthServices.noStore(.redirect(to: redirect))
            }
            return OAuthServices.page(LoginPages.signedOut(context, stillSignedIn: true))
        }

        try endSession(current, clientAddress: request.remoteAddress, clientID: decision.client?.clientID)
        var response: HTTPResponse
        if let redirect = decision.postLogoutRedirect, hintIdentifiedClient {
            response = OAuthServices.noStore(.redirect(to: redirect))
        } else {
            response = OAuthServices.page(LoginPages.signedOut(context))
        }
        response.setCookie(oauth.accounts.cookies.expiredSession())
        return response
    }

    /// Revokes the session; the database queues the back-channel logout notifications in
    /// the same statement (see the `authentication_sessions_ended` trigger), as it does for
    /// every other way a session ends.
    func endSession(_ session: CurrentSession, clientAddress: String = "", clientID: String? = nil) throws {
        try oauth.accounts.sessions.signOut(session, clientAddress: clientAddress, clientID: clientID)
        oauth.log.info("logout.session_ended", ["account": session.accountID.uuidString])
    }
}
