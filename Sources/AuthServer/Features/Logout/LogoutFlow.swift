import Foundation
import OIDC

/// OpenID Connect RP-Initiated Logout 1.0.
///
/// With a valid `id_token_hint` for the current session the session ends at once. Without
/// one (or with a hint for someone else, or a hint that is not an ID token this server issued
/// to a registered client) the user is asked first, and afterwards the browser goes to a
/// client's `post_logout_redirect_uri` only if a valid hint named that client.
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
    }

    /// `GET|POST /logout`: the request as the client sent it.
    func start(_ items: Items, sessionToken: String?, clientAddress: String) throws -> Outcome {
        try logout(items, sessionToken: sessionToken, confirmation: nil, clientAddress: clientAddress)
    }

    /// `POST /logout/confirm`: the same request, with the user's answer.
    func confirm(_ items: Items, confirmed: Bool, sessionToken: String?, clientAddress: String) throws
        -> Outcome
    {
        try logout(items, sessionToken: sessionToken, confirmation: confirmed, clientAddress: clientAddress)
    }

    private func logout(_ items: Items, sessionToken: String?, confirmation: Bool?, clientAddress: String)
        throws -> Outcome
    {
        // The browser's session, if it has a live one.
        let session = try store.session(token: sessionToken)
        // Validate (pure, `LogoutRequest`): the hint, the client, the post-logout URI.
        let decision = try LogoutRequest.validate(
            Parameters(items), verifier: try oauth.verifier(), issuer: oauth.issuer,
            session: session.map(OAuthServices.browserSession), client: { oauth.clients.client($0) })
        if decision.hintRejected {
            oauth.log.warning("logout.hint_rejected", ["reason": "notAnIDTokenOfARegisteredClient"])
        }
        // Decide (pure): nothing to end, ask, stay signed in, or end.
        let step = decision.step(signedIn: session != nil, confirmation: confirmation)
        // End the session.
        if case .end = step, let session {
            try store.endSession(session, clientAddress: clientAddress, clientID: decision.client?.clientID)
            oauth.log.info("logout.session_ended", ["account": session.accountID.uuidString])
        }
        return Outcome(
            step: step, clientName: decision.client.map { oauth.clientName($0.clientID) },
            uiLocales: decision.uiLocales)
    }
}
