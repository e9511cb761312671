/// What the logout endpoint does with a valid request (RP-Initiated Logout 1.0 §2, §3, §4).
public enum LogoutStep: Sendable, Equatable {
    /// Nobody is signed in: nothing to end. Redirect when a client was identified, else
    /// show the "signed out" page.
    case nothingToEnd(redirect: String?)
    /// Ask the user first (`LogoutDecision.requiresConfirmation`).
    case confirm
    /// The user chose to stay signed in.
    case declined(redirect: String?)
    /// End the session, then redirect or show the "signed out" page.
    case end(redirect: String?)
}

extension LogoutDecision {
    /// The step for this request. The browser goes to the client's `post_logout_redirect_uri`
    /// only when a valid `id_token_hint` identified the client, or, when nobody is signed in,
    /// when `client_id` did (nothing is ended, so nothing can be abused).
    /// - Parameters:
    ///   - signedIn: whether the browser has a live session.
    ///   - confirmation: the user's answer on the confirmation page; nil before asking.
    public func step(signedIn: Bool, confirmation: Bool?) -> LogoutStep {
        let hintIdentifiedClient = hintSubject != nil
        let toClient = hintIdentifiedClient ? postLogoutRedirect : nil
        guard signedIn else {
            return .nothingToEnd(redirect: hintIdentifiedClient || client != nil ? postLogoutRedirect : nil)
        }
        if requiresConfirmation && confirmation == nil { return .confirm }
        if confirmation == false { return .declined(redirect: toClient) }
        return .end(redirect: toClient)
    }
}
