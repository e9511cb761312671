import Foundation

/// The signed-in state of the browser, as the application's session store knows it.
public struct BrowserSession: Sendable, Equatable {
    public var accountID: String
    /// When the user last actively authenticated (becomes `auth_time`).
    public var authTime: Date
    /// RFC 8176 method references of that authentication (see `AuthenticationMethods`).
    public var amr: [String]
    /// The session id shared with clients as `sid` (for logout).
    public var sessionID: String?

    public init(accountID: String, authTime: Date, amr: [String], sessionID: String? = nil) {
        self.accountID = accountID
        self.authTime = authTime
        self.amr = amr
        self.sessionID = sessionID
    }
}

/// What the authorization endpoint does next for a validated request.
public enum SessionDecision: Sendable, Equatable {
    /// Issue the code for this session.
    case proceed(BrowserSession)
    /// Show the sign-in page (or the sign-up page for `.create`).
    case login(LoginReason)
    /// Let the user choose an account.
    case selectAccount
    /// Ask the user to approve the client's scopes.
    case consent
    /// Redirect this error (redirectable, `prompt=none` could not be honoured).
    case error(OAuthError)

    public enum LoginReason: Sendable, Equatable {
        case noSession
        case promptLogin
        case promptCreate
        case maxAgeExceeded
        /// The request asks for a stronger authentication class (`acr`) than the session's:
        /// the sign-in page asks for a passkey.
        case stepUp
        /// The request names another user (`id_token_hint`, a `sub` claim value) than the
        /// one signed in.
        case otherSubject
    }
}

/// The facts the decision needs besides the request.
public struct SessionContext: Sendable, Equatable {
    public var session: BrowserSession?
    /// Whether a stored consent covers the requested scopes for this client and account.
    public var hasConsent: Bool
    /// When this authorization request first arrived. An authentication counts as new for
    /// `prompt=login`, `prompt=create` and `max_age` only if it is later than this.
    public var requestReceivedAt: Date
    public var now: Date
    /// The user already chose an account / gave consent during this request.
    public var accountSelected: Bool
    public var consentGivenInThisRequest: Bool
    /// More than one account is signed in, so the user must choose.
    public var accountSelectionNeeded: Bool
    /// The account must do something before continuing (e.g. accept new terms).
    public var accountInteractionNeeded: Bool
    /// The other accounts signed in in this browser (`sub` values), besides `session`'s: when
    /// the request names one of them (`id_token_hint`), choosing it beats signing in again.
    public var otherSignedInSubjects: Set<String> = []

    public init(
        session: BrowserSession?, hasConsent: Bool, requestReceivedAt: Date, now: Date,
        accountSelected: Bool = false,
        consentGivenInThisRequest: Bool = false, accountSelectionNeeded: Bool = false,
        accountInteractionNeeded: Bool = false
    ) {
        self.session = session
        self.hasConsent = hasConsent
        self.requestReceivedAt = requestReceivedAt
        self.now = now
        self.accountSelected = accountSelected
        self.consentGivenInThisRequest = consentGivenInThisRequest
        self.accountSelectionNeeded = accountSelectionNeeded
        self.accountInteractionNeeded = accountInteractionNeeded
    }
}

extension SessionDecision {
    /// Decides, in order: authentication (session, the user the request names,
    /// `prompt=login`/`create`, `max_age`, the authentication class), account selection,
    /// other interaction, consent. With `prompt=none` every needed interaction becomes the
    /// matching error instead (Core §3.1.2.6).
    public static func decide(for request: AuthorizationRequest, context: SessionContext) -> SessionDecision {
        let silent = request.prompt.contains(.none)
        func need(_ interaction: SessionDecision, else code: OAuthErrorCode, _ hint: String)
            -> SessionDecision
        {
            silent ? .error(OAuthError(code, hint: hint)) : interaction
        }

        guard let session = context.session else {
            var reason = LoginReason.noSession
            if request.prompt.contains(.create) {
                reason = .promptCreate
            } else if request.acr?.wantsStepUp(from: .basic) == true {
                reason = .stepUp
            }
            // Other accounts are signed in here but none is current: the user picks one (or
            // "Use another account").
            if reason == .noSession && context.accountSelectionNeeded && !context.accountSelected {
                return need(
                    .selectAccount, else: .accountSelectionRequired,
                    "The user must choose one of several accounts.")
            }
            return need(.login(reason), else: .loginRequired, "No user is signed in.")
        }
        let authenticatedDuringRequest = session.authTime > context.requestReceivedAt
        // Core §3.1.2.1 (`id_token_hint`) and §5.5.1 (`sub` value): never an answer for another
        // user. Signing in again may help, unless it already happened for this request.
        let expected = request.expectedSubjects
        if !expected.isEmpty && expected != [session.accountID] {
            // The named user is signed in in this browser too: the chooser switches to them.
            // Under `prompt=none` nobody may choose, so it stays `login_required`.
            if !silent && !context.accountSelected
                && !expected.isDisjoint(with: context.otherSignedInSubjects)
            {
                return .selectAccount
            }
            if authenticatedDuringRequest {
                return .error(
                    OAuthError(.loginRequired, hint: "The signed-in user is not the one the request names."))
            }
            return need(
                .login(.otherSubject), else: .loginRequired,
                "The signed-in user is not the one the request names.")
        }
        if !authenticatedDuringRequest {
            if request.prompt.contains(.create) { return .login(.promptCreate) }
            if request.prompt.contains(.login) { return .login(.promptLogin) }
            if let maxAge = request.maxAge {
                let elapsed = context.now.timeIntervalSince(session.authTime)
                if maxAge == 0 || elapsed > Double(maxAge) {
                    return need(
                        .login(.maxAgeExceeded), else: .loginRequired,
                        "The last sign-in is older than 'max_age' allows.")
                }
            }
        }
        if let decision = authenticationClass(
            request, session: session, silent: silent,
            authenticatedDuringRequest: authenticatedDuringRequest)
        {
            return decision
        }
        if (context.accountSelectionNeeded || request.prompt.contains(.selectAccount))
            && !context.accountSelected
        {
            return need(
                .selectAccount, else: .accountSelectionRequired,
                "The user must choose one of several accounts.")
        }
        if context.accountInteractionNeeded {
            // The sign-in page hosts such steps (e.g. new terms to accept).
            return need(
                .login(.promptLogin), else: .interactionRequired,
                "The account must complete a step on the sign-in page.")
        }
        let consentMissing = !request.client.firstParty && !context.hasConsent
        let consentForced = request.prompt.contains(.consent) && !context.consentGivenInThisRequest
        if consentMissing || consentForced {
            return need(
                .consent, else: .consentRequired, "The user has not approved this client's requested scopes.")
        }
        return .proceed(session)
    }

    /// `acr_values` and `acr` claims (Core §3.1.2.1, §5.5.1.1): the session's class
    /// (`AuthenticationContextClass.of(amr:)`) against the request. Unmet and interactive
    /// without an authentication for this request: sign in with a passkey (step-up). Still
    /// unmet after one, or under `prompt=none`: an essential request is refused with
    /// `unmet_authentication_requirements` (OpenID Connect Core Unmet Authentication
    /// Requirements 1.0 §2); a voluntary one proceeds, the ID token stating the real `acr`.
    static func authenticationClass(
        _ request: AuthorizationRequest, session: BrowserSession, silent: Bool,
        authenticatedDuringRequest: Bool
    ) -> SessionDecision? {
        guard let acr = request.acr else { return nil }
        let reached = AuthenticationContextClass.of(amr: session.amr)
        if acr.isMet(by: reached) { return nil }
        if !silent && !authenticatedDuringRequest && acr.wantsStepUp(from: reached) {
            return .login(.stepUp)
        }
        guard acr.essential else { return nil }
        return .error(
            OAuthError(
                .unmetAuthenticationRequirements,
                hint: "The sign-in does not reach the requested authentication context class."))
    }
}
