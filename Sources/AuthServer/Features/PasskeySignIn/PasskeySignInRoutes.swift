import Crypto
import Foundation
import HTTPServer

/// Passkey sign-in as JSON: `POST /api/passkeys/authentication/start` and `…/finish`
/// (see docs/api.md).
struct PasskeySignInRoutes: Sendable {
    let services: AccountServices

    func register(on router: Router) {
        let routes = self
        let api = JSONAPI(router: router, services: services)
        api.add(.post, "/api/passkeys/authentication/start", relatedOrigins: true) { _, _ throws(APIError) in
            try routes.start()
        }
        api.add(.post, "/api/passkeys/authentication/finish", relatedOrigins: true) {
            request, _ throws(APIError) in
            try routes.finish(request)
        }
        api.add(.get, "/api/related-origins/csrf") { request, _ throws(APIError) in
            try routes.relatedOriginToken(request)
        }
    }

    /// A CSRF token for the related origin named by `Origin` (docs/security.md); any other
    /// caller is refused with `csrf_failed`, and only a related origin can read the answer
    /// (`RelatedOriginCORS`).
    func relatedOriginToken(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let related = RelatedOriginCSRF(services: services)
        guard let origin = related.relatedOrigin(of: request) else { throw APIError.csrf }
        let token = try services.guarded("csrf.relatedOriginIssue") { try related.issue(for: origin) }
        return try JSONAPI.json(RelatedOriginToken(csrfToken: token))
    }

    struct RelatedOriginToken: Encodable {
        var csrfToken: String

        enum CodingKeys: String, CodingKey {
            case csrfToken = "csrf_token"
        }
    }

    private var flow: PasskeySignInFlow { PasskeySignInFlow(services: services) }

    func start() throws(APIError) -> HTTPResponse {
        let started = try flow.start()
        return try JSONAPI.json(
            PasskeyChallengeResponse(challengeID: started.challengeID.lowercased, options: started.options))
    }

    func finish(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let body = try JSONAPI.decode(PasskeyAssertionFinishRequest.self, request)
        let signedIn = try flow.finish(
            challengeID: try JSONAPI.uuid(body.challengeID), credential: body.credential, request: request)
        var response = try JSONAPI.json(
            PasskeySignedInResponse(
                signedIn: SignedInResponse(
                    accountID: signedIn.accountID, session: signedIn.session,
                    redirectTo: ReturnTo.sanitize(body.returnTo) ?? ReturnTo.fallback),
                signals: PasskeySignals(signedIn.signals, rpID: services.rpID)))
        response.setCookie(signedIn.cookie)
        response.setCookie(
            try services.guarded("signin.accounts") {
                try services.sessions.accountsCookie(afterSignInOf: signedIn.accountID, request)
            })
        return response
    }
}

/// What the sign-in page passes to `PublicKeyCredential.signalAllAcceptedCredentials` and
/// `signalCurrentUserDetails` (WebAuthn Level 3 §5.1.10.2, §5.1.10.3) after a passkey sign-in,
/// in the members and spelling those methods take. Only the account just signed in.
struct PasskeySignals: Encodable {
    var allAcceptedCredentials: PasskeyManagementRoutes.AllAcceptedCredentials
    var currentUserDetails: AccountRoutes.CurrentUserDetails

    init(_ details: PasskeySignInFlow.SignalDetails, rpID: String) {
        let userID = Base64URL.encode(details.userHandle)
        allAcceptedCredentials = .init(
            rpId: rpID, userId: userID, allAcceptedCredentialIds: details.credentialIDs.map(Base64URL.encode))
        currentUserDetails = .init(
            rpId: rpID, userId: userID, name: details.name, displayName: details.displayName)
    }

    enum CodingKeys: String, CodingKey {
        case allAcceptedCredentials = "all_accepted_credentials"
        case currentUserDetails = "current_user_details"
    }
}

/// `SignedInResponse` plus the `signals` member.
struct PasskeySignedInResponse: Encodable {
    var signedIn: SignedInResponse
    var signals: PasskeySignals?

    enum CodingKeys: String, CodingKey {
        case signals
    }

    func encode(to encoder: any Encoder) throws {
        try signedIn.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(signals, forKey: .signals)
    }
}
