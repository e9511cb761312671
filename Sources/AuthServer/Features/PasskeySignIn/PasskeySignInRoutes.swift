import Crypto
import Foundation
import HTTPServer
import OIDC

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
        return JSONAPI.json([
            "challenge_id": .string(started.challengeID.lowercased), "options": started.options.json,
        ])
    }

    func finish(_ request: HTTPRequest) throws(APIError) -> HTTPResponse {
        let body = try JSONAPI.decode(PasskeyAssertionFinishRequest.self, request)
        let signedIn = try flow.finish(
            challengeID: try JSONAPI.uuid(body.challengeID), credential: body.credential, request: request)
        var response = JSONAPI.json(
            PasskeySignedInResponse(
                accountID: signedIn.accountID.lowercased, sessionID: signedIn.session.id.lowercased,
                redirectTo: ReturnTo.sanitize(body.returnTo) ?? ReturnTo.fallback,
                signals: PasskeySignals(signedIn.signals, rpID: services.rpID)
            ).json)
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

    /// The `Encodable` form as a JSON value (a test compares the bytes).
    var json: JSONValue {
        let accepted = allAcceptedCredentials
        let details = currentUserDetails
        return .object([
            "all_accepted_credentials": .object([
                "rpId": .string(accepted.rpId), "userId": .string(accepted.userId),
                "allAcceptedCredentialIds": .array(accepted.allAcceptedCredentialIds.map(JSONValue.string)),
            ]),
            "current_user_details": .object([
                "rpId": .string(details.rpId), "userId": .string(details.userId),
                "name": .string(details.name), "displayName": .string(details.displayName),
            ]),
        ])
    }
}

/// A passkey sign-in's answer: the members of `SignedInResponse` (a passkey sign-in never
/// offers the passkey upgrade) and `signals`.
struct PasskeySignedInResponse: Encodable {
    var accountID: String
    var sessionID: String
    var redirectTo: String
    var signals: PasskeySignals

    enum CodingKeys: String, CodingKey {
        case accountID = "account_id"
        case sessionID = "session_id"
        case redirectTo = "redirect_to"
        case signals
    }

    /// The `Encodable` form as a JSON object, for `JSONAPI.json(_:)` (a test compares the
    /// bytes).
    var json: [String: JSONValue] {
        [
            "account_id": .string(accountID), "session_id": .string(sessionID),
            "redirect_to": .string(redirectTo), "signals": signals.json,
        ]
    }
}
