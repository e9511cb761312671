import Crypto
import Foundation
import HTTPServer
import OIDC
import Postgres
import WebAuthnCore

/// The authorization challenge endpoint (draft-ietf-oauth-first-party-apps §4.1, §5): a
/// first-party native app signs its user in without a browser and leaves with an
/// authorization code for `/token`.
///
/// The first request names the client, the scopes and the PKCE challenge; the answer is
/// `insufficient_authorization` with an `auth_session` and the WebAuthn request options the
/// login pages use. Each later request carries the `auth_session` and one `step`; the steps
/// are the login pages' own flows (`PasskeySignInFlow`, `PasswordSignInFlow`, `SignUpFlow`),
/// with their checks, counters, throttles and audit events, so the endpoint adds no second
/// way to verify anything. A step that succeeds answers the code (§5.2.1); any other answer
/// carries a new `auth_session`, because a value works for one step only (§5.3.1, §9.6).
///
/// Anyone can send a public client's id here (§9.4), so what the endpoint accepts matters:
/// a passkey assertion for this server's RP ID can only come from an app the operating system
/// associates with the domain (`webcredentials`, Digital Asset Links); a password step is
/// off unless the client enables it (`first_party_password_step`, §9.3); recovery and
/// everything else goes to the browser (`redirect_to_web`, §5.2.2.1.1).
struct AuthorizationChallengeFlow {
    let oauth: OAuthServices
    let store: any AuthorizationChallengeStore

    init(oauth: OAuthServices, store: (any AuthorizationChallengeStore)? = nil) {
        self.oauth = oauth
        self.store = store ?? PostgresAuthorizationChallengeStore(db: oauth.pool)
    }

    private var accounts: AccountServices { oauth.accounts }

    /// How long one sign-in at the endpoint may take, from its first request (§9.6.2 leaves it
    /// to the server): long enough to read an email and create a passkey.
    static let sessionLifetimeSeconds = 600

    enum Outcome {
        case code(String)
        case answer(ChallengeAnswer)
    }

    enum Step: String {
        case passkey, password, recovery
        case signUp = "sign_up"
        case signUpPasskey = "sign_up_passkey"
    }

    /// Runs one request for an authenticated `client`: the first one without `auth_session`,
    /// a step with it.
    func handle(_ parameters: Parameters, client: OAuthClient, request: HTTPRequest, dpop: DPoPProof? = nil)
        throws -> Outcome
    {
        // §4.1, §9.1: first-party native apps only; checked on every request, so a client the
        // operator changes stops at once.
        try AuthorizationChallengeRequest.checkClient(client)
        if let presented = try parameters.value("auth_session") {
            return try step(presented, parameters: parameters, client: client, request: request, dpop: dpop)
        }
        return .answer(try begin(parameters, client: client, dpop: dpop))
    }

    // MARK: - First request (§5.1)

    private func begin(_ parameters: Parameters, client: OAuthClient, dpop: DPoPProof?) throws
        -> ChallengeAnswer
    {
        // 1. The request: client, response type, PKCE, scope and APIs, redirect URI, DPoP key.
        let request = try AuthorizationChallengeRequest.validate(
            parameters, client: client, resources: oauth.resources)
        // 2. The passkey challenge of the login pages, and the sign-in with its first value.
        let started = try passkeyChallenge()
        let authSession = oauth.tokens.next()
        let session = ChallengeSession(
            id: oauth.system.timeOrderedUUID(), clientID: client.clientID, codeChallenge: request.codeChallenge,
            scopes: request.scopes, resources: request.resources, acrValues: request.acrValues,
            redirectURI: request.redirectURI,
            dpopJKT: try DPoPProofs.boundKey(proof: dpop, dpopJKT: request.dpopJKT),
            passkeyChallengeID: started.challengeID)
        try store.insert(
            session, sessionDigest: OAuthStore.digest(authSession),
            lifetimeSeconds: Self.sessionLifetimeSeconds)
        oauth.log.info("authorize_challenge.started", ["client_id": client.clientID])
        var answer = ChallengeAnswer.insufficientAuthorization(
            authSession: authSession, steps: steps(for: client))
        answer.passkeyRequestOptions = started.options
        return answer
    }

    /// The steps offered to `client` from the start.
    private func steps(for client: OAuthClient) -> [String] {
        var steps = [Step.passkey.rawValue]
        if client.firstPartyPasswordStep { steps.append(Step.password.rawValue) }
        steps += [Step.signUp.rawValue, Step.recovery.rawValue]
        return steps
    }

    /// A new challenge of `PasskeySignInFlow`, the one the login pages start.
    private func passkeyChallenge() throws -> PasskeySignInFlow.Started {
        do {
            return try PasskeySignInFlow(services: accounts).start()
        } catch {
            throw Self.failure(error, authSession: nil)
        }
    }

    // MARK: - Later requests (§5.3)

    private func step(
        _ presented: String, parameters: Parameters, client: OAuthClient, request: HTTPRequest,
        dpop: DPoPProof?
    ) throws -> Outcome {
        // 1. The value works once: it is replaced before the step runs, so a replay, or a
        //    racing copy, finds nothing (§5.3.1, §9.6). A sign-in bound to a DPoP key goes on
        //    only with a proof of that key (§9.6.1): a copied `auth_session` is useless
        //    without the app's key, and does not use up the app's value. Only a proof shows the
        //    key: a `dpop_jkt` merely names it, as anyone who saw a proof of it can.
        let key = try dpop.flatMap { try DPoPProofs.boundKey(proof: $0, dpopJKT: parameters.value("dpop_jkt")) }
        let next = oauth.tokens.next()
        guard
            let session = try store.advance(
                presented: OAuthStore.digest(presented), next: OAuthStore.digest(next),
                clientID: client.clientID, dpopKey: key)
        else {
            oauth.log.warning(
                "authorize_challenge.refused", ["client_id": client.clientID, "reason": "sessionUnusable"])
            return .answer(.invalidSession)
        }
        // 2. The step.
        do {
            switch Step(rawValue: try parameters.value("step") ?? "") {
            case .passkey:
                return try passkey(parameters, session: session, client: client, next: next, request: request)
            case .password:
                return try password(
                    parameters, session: session, client: client, next: next, request: request)
            case .signUp:
                return .answer(try signUp(parameters, session: session, next: next))
            case .signUpPasskey:
                return try signUpPasskey(
                    parameters, session: session, client: client, next: next, request: request)
            case .recovery:
                return .answer(.redirectToWeb("Account recovery continues in the browser."))
            case nil:
                return .answer(.redirectToWeb("This step is not available here; continue in the browser."))
            }
        } catch let error as OAuthError {
            // Malformed input: the sign-in goes on with the new value.
            return .answer(.invalidRequest(error.errorDescription, authSession: next))
        }
    }

    /// The `passkey` step: `credential` is the assertion (`AuthenticationResponseJSON`) over
    /// the sign-in's challenge, verified by `PasskeySignInFlow.finish` in the transaction that
    /// also stores the code, so a code exists exactly when the sign-in does. Refusals are
    /// audited by the flow on a connection of their own, so they stay when this one rolls back.
    private func passkey(
        _ parameters: Parameters, session: ChallengeSession, client: OAuthClient, next: String,
        request: HTTPRequest
    ) throws -> Outcome {
        let credential = try Self.decode(AuthenticationResponseJSON.self, parameters, "credential")
        guard let challengeID = session.passkeyChallengeID else {
            return .answer(try retry(session, next: next, description: "Start the passkey sign-in again."))
        }
        do {
            let code = try store.transaction { store, connection in
                let flow = PasskeySignInFlow(
                    services: accounts,
                    store: PostgresPasskeySignInStore(db: connection, sessions: accounts.sessions))
                let signedIn = try flow.finish(
                    challengeID: challengeID, credential: credential, request: request)
                return try issueCode(
                    session, client: client, current: signedIn.session, store: store, connection: connection)
            }
            return .code(code)
        } catch let error as APIError where Self.isRetryable(error) {
            return .answer(try retry(session, next: next, description: "The passkey was not accepted."))
        } catch {
            throw Self.failure(error, authSession: next)
        }
    }

    /// The `password` step (`username`, `password`), only for clients with
    /// `first_party_password_step`: `PasswordSignInFlow` with its Argon2id check, throttle,
    /// lockout and passwordless policy.
    private func password(
        _ parameters: Parameters, session: ChallengeSession, client: OAuthClient, next: String,
        request: HTTPRequest
    ) throws -> Outcome {
        guard client.firstPartyPasswordStep else {
            oauth.log.warning(
                "authorize_challenge.refused",
                ["client_id": client.clientID, "reason": "passwordStepDisabled"])
            var answer = ChallengeAnswer.insufficientAuthorization(
                authSession: next, steps: steps(for: client),
                description: "This app may not send passwords; sign in with a passkey.")
            answer.error = "unauthorized_client"
            answer.status = .badRequest
            return .answer(answer)
        }
        let username = try parameters.required("username")
        let password = try parameters.required("password")
        // `acr_values` asking for more than a password can reach (OpenID Connect Core
        // §3.1.2.1): the passkey is asked for before any password is checked, as the login
        // pages step up.
        let reached = AuthenticationContextClass.of(amr: AuthenticationMethods.password)
        if AuthenticationContextRequest(values: session.acrValues, essential: false).wantsStepUp(
            from: reached)
        {
            oauth.log.info(
                "authorize_challenge.step_up", ["client_id": client.clientID, "reason": "acrValues"])
            return .answer(try passkeyRequired(session, next: next))
        }
        do {
            // The password page's flow as it runs there: no transaction is held while Argon2id
            // works (a burst of guesses must not hold database connections).
            let result = try PasswordSignInFlow(services: accounts).signIn(
                email: username, password: password, returnTo: ReturnTo.fallback, offerUpgrade: false,
                request: request)
            switch result {
            case .signedIn(let signedIn):
                return .code(
                    try store.transaction { store, connection in
                        try issueCode(
                            session, client: client, current: signedIn.session, store: store,
                            connection: connection)
                    })
            case .invalid:
                return .answer(
                    try retry(session, next: next, description: "The email address or password is incorrect.")
                )
            case .passkeyRequired:
                // The account's passwordless policy wants a second, stronger step.
                return .answer(try passkeyRequired(session, next: next))
            case .throttled(let wait):
                return .answer(Self.throttled(wait, authSession: next))
            }
        } catch let error as ChallengeAnswer {
            throw error
        } catch {
            throw Self.failure(error, authSession: next)
        }
    }

    /// The password was right, but the account's policy or the request's `acr_values` want
    /// its passkey: the next step is a passkey assertion.
    private func passkeyRequired(_ session: ChallengeSession, next: String) throws -> ChallengeAnswer {
        var answer = try retry(session, next: next, description: "This sign-in needs the account's passkey.")
        answer.steps = [Step.passkey.rawValue, Step.recovery.rawValue]
        answer.passkeyRequired = true
        return answer
    }

    /// The `sign_up` step (`email`, `display_name`): `SignUpFlow.startPasskey` reserves the
    /// account and answers the creation options; the account is written by `sign_up_passkey`.
    private func signUp(_ parameters: Parameters, session: ChallengeSession, next: String) throws
        -> ChallengeAnswer
    {
        guard let email = EmailAddress(try parameters.required("email")) else {
            return .invalidRequest(APIError.invalidEmail.message, authSession: next)
        }
        guard let name = AccountStore.validDisplayName(try parameters.required("display_name")) else {
            return .invalidRequest(APIError.invalidDisplayName.message, authSession: next)
        }
        do {
            let started = try SignUpFlow(services: accounts).startPasskey(
                email: email.address, displayName: name)
            try store.setRegistration(
                sessionID: session.id, registrationID: started.registrationID, email: email.address,
                displayName: name)
            var answer = ChallengeAnswer.insufficientAuthorization(
                authSession: next, steps: [Step.signUpPasskey.rawValue])
            answer.passkeyCreationOptions = started.options
            return answer
        } catch {
            throw Self.failure(error, authSession: next)
        }
    }

    /// The `sign_up_passkey` step: `credential` is the attestation
    /// (`RegistrationResponseJSON`); `SignUpFlow.finishPasskey` writes the account, its
    /// passkey and session in one transaction (and sends the first verification code), then
    /// the code is issued for that session.
    private func signUpPasskey(
        _ parameters: Parameters, session: ChallengeSession, client: OAuthClient, next: String,
        request: HTTPRequest
    ) throws -> Outcome {
        let credential = try Self.decode(RegistrationResponseJSON.self, parameters, "credential")
        guard let registrationID = session.registrationID, let email = session.signUpEmail,
            let name = session.signUpDisplayName
        else {
            return .answer(
                .invalidRequest("Send the 'sign_up' step first.", authSession: next))
        }
        let signedUp: SignUpFlow.SignedUp
        do {
            signedUp = try SignUpFlow(services: accounts).finishPasskey(
                registrationID: registrationID, email: email, displayName: name, credential: credential,
                request: request)
        } catch {
            if error.status == .tooManyRequests {
                return .answer(Self.throttled(Self.retryAfter(error), authSession: next))
            }
            // A refused attestation, a used registration or a passkey already registered: the
            // app may start the sign-up again, or sign in.
            guard (400..<500).contains(error.status.code) else {
                throw Self.failure(error, authSession: next)
            }
            return .answer(try retry(session, next: next, description: error.message))
        }
        do {
            return .code(
                try store.transaction { store, connection in
                    try issueCode(
                        session, client: client, current: signedUp.session, store: store,
                        connection: connection)
                })
        } catch {
            throw Self.failure(error, authSession: nil)
        }
    }

    // MARK: - Shared parts

    /// Stores the authorization code for the signed-in session (the authorization endpoint's
    /// own insert, with the session's client-list row for logout) and ends the sign-in.
    private func issueCode(
        _ session: ChallengeSession, client: OAuthClient, current: CurrentSession,
        store: any AuthorizationChallengeStore, connection: PostgresConnection
    ) throws -> String {
        let lifetime = oauth.settings.authorizationCodeLifetimeSeconds
        let code = oauth.system.timeOrderedToken()
        var issued = IssuedAuthorizationCode(
            clientID: client.clientID, redirectURI: session.redirectURI, codeChallenge: session.codeChallenge,
            scopes: session.scopes, nonce: nil, accountID: current.accountID.lowercased,
            authTime: current.authTime, amr: current.amr, sessionID: current.id.lowercased, idTokenClaims: [],
            expiresAt: oauth.system.now().addingTimeInterval(Double(lifetime)))
        issued.resources = session.resources
        issued.dpopJKT = session.dpopJKT
        try PostgresAuthorizeStore.insertCode(
            NewAuthorizationCode(
                id: oauth.system.timeOrderedUUID(), code: code, issued: issued, accountID: current.accountID,
                sessionID: current.id, lifetimeSeconds: lifetime,
                backchannelLogoutURI: client.backchannelLogoutURI), on: connection)
        try store.complete(sessionID: session.id)
        oauth.log.info(
            "authorize_challenge.code_issued",
            ["client_id": client.clientID, "account": current.accountID.uuidString])
        return code
    }

    /// The sign-in goes on after a refused credential: a fresh passkey challenge (the last one
    /// may have been consumed) under the new value.
    private func retry(_ session: ChallengeSession, next: String, description: String) throws
        -> ChallengeAnswer
    {
        let started = try passkeyChallenge()
        try store.setPasskeyChallenge(sessionID: session.id, challengeID: started.challengeID)
        let client = oauth.clients.client(session.clientID)
        var answer = ChallengeAnswer.insufficientAuthorization(
            authSession: next, steps: client.map(steps(for:)) ?? [Step.passkey.rawValue],
            description: description)
        answer.passkeyRequestOptions = started.options
        return answer
    }

    /// A refused passkey: the answer the pages give a failed verification, an unknown
    /// credential or a used challenge.
    private static func isRetryable(_ error: APIError) -> Bool {
        error.status == .badRequest || error.status == .unauthorized
    }

    private static func throttled(_ wait: Int, authSession: String?) -> ChallengeAnswer {
        ChallengeAnswer(
            status: .tooManyRequests, error: "too_many_attempts",
            errorDescription: "Too many failed attempts. Try again later, or sign in with a passkey.",
            authSession: authSession, retryAfter: wait)
    }

    private static func retryAfter(_ error: APIError) -> Int {
        error.headers.first { $0.name.lowercased() == "retry-after" }.flatMap { Int($0.value) } ?? 60
    }

    /// Anything else: a busy server (503) or a server error (500), never the detail.
    private static func failure(_ error: any Error, authSession: String?) -> ChallengeAnswer {
        if let answer = error as? ChallengeAnswer { return answer }
        if let error = error as? APIError, error.status == .serviceUnavailable {
            return ChallengeAnswer(
                status: .serviceUnavailable, error: "temporarily_unavailable",
                errorDescription: "The server is busy; try again shortly.", authSession: authSession,
                retryAfter: 5)
        }
        if let error = error as? APIError, error.status == .tooManyRequests {
            return throttled(retryAfter(error), authSession: authSession)
        }
        return ChallengeAnswer(
            status: .internalServerError, error: "server_error",
            errorDescription: "The server encountered an unexpected condition.", authSession: authSession)
    }

    /// A WebAuthn response sent as the JSON text of a form parameter.
    private static func decode<T: Decodable>(_ type: T.Type, _ parameters: Parameters, _ name: String)
        throws(OAuthError) -> T
    {
        let text = try parameters.required(name)
        guard let value = try? JSONDecoder().decode(T.self, from: Data(text.utf8)) else {
            throw OAuthError(
                .invalidRequest, hint: "The '\(name)' parameter is not the expected WebAuthn JSON.")
        }
        return value
    }
}
