import Foundation
import OIDC

/// OpenID Connect RP-Initiated Logout 1.0.
///
/// With a valid `id_token_hint` for one of the browser's sessions (the current one, or another
/// account signed in beside it) that session ends at once, and the others stay. Without one
/// (or with a hint for someone else, or a hint that is not an ID token this server issued to a
/// registered client) the user is asked before the current session ends, and afterwards the
/// browser goes to a client's `post_logout_redirect_uri` only if a valid hint named that client.
/// Ending a session queues a back-channel logout for every client that the session signed
/// in to and that registered a `backchannel_logout_uri`.
struct LogoutFlow: Sendable {
    let oauth: OAuthServices
    let store: any LogoutStore

    typealias Items = [(name: String, value: String)]

    /// What the browser is shown next.
    struct Outcome: Equatable {
        var step: LogoutStep
        /// The client the request came from, for the confirmation page.
        var clientName: String?
        var uiLocales: [String]
        /// The browser's sessions afterwards, when one ended.
        var browser: BrowserSessions?
    }

    /// `GET|POST /logout`: the request as the client sent it.
    func start(_ items: Items, browser: BrowserSessions, clientAddress: String) throws -> Outcome {
        try logout(items, browser: browser, confirmation: nil, clientAddress: clientAddress)
    }

    /// `POST /logout/confirm`: the same request, with the user's answer.
    func confirm(_ items: Items, confirmed: Bool, browser: BrowserSessions, clientAddress: String) throws
        -> Outcome
    {
        try logout(items, browser: browser, confirmation: confirmed, clientAddress: clientAddress)
    }

    private func logout(_ items: Items, browser: BrowserSessions, confirmation: Bool?, clientAddress: String)
        throws -> Outcome
    {
        // The browser's live sessions.
        let accounts = try store.accounts(of: browser)
        let current = accounts.first(where: \.isCurrent)
        // Validate (pure, `LogoutRequest`): the hint, the client, the post-logout URI.
        var decision = try LogoutRequest.validate(
            Parameters(items), verifier: try oauth.verifier(), issuer: oauth.issuer,
            session: current.map { OAuthServices.browserSession($0.session) }, client: { oauth.clients.client($0) })
        if decision.hintRejected {
            oauth.log.warning("logout.hint_rejected", ["reason": "notAnIDTokenOfARegisteredClient"])
        }
        // The session to end: the one the hint names, among all of this browser's (its app
        // asks for that account's logout), else the current one, after asking.
        let named = accounts.first { decision.names(OAuthServices.browserSession($0.session)) }
        let target = named ?? current
        decision.requiresConfirmation = target != nil && named == nil
        // Decide (pure): nothing to end, ask, stay signed in, or end.
        let step = decision.step(signedIn: target != nil, confirmation: confirmation)
        // End the session.
        var after: BrowserSessions?
        if case .end = step, let target {
            try store.endSession(target.session, clientAddress: clientAddress, clientID: decision.client?.clientID)
            oauth.log.info("logout.session_ended", ["account": target.accountID.uuidString])
            // The current account's end leaves the others to choose from; another's leaves the
            // current one current.
            let others = accounts.filter { !$0.isCurrent && $0.token != target.token }.map(\.token)
            after = BrowserSessions(current: target.isCurrent ? nil : current?.token, others: others)
        }
        return Outcome(
            step: step, clientName: decision.client.map { oauth.clientName($0.clientID) },
            uiLocales: decision.uiLocales, browser: after)
    }
}
