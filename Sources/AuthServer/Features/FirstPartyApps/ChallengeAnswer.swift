import Foundation
import HTTPServer
import WebAuthnCore

/// An error response of the authorization challenge endpoint
/// (draft-ietf-oauth-first-party-apps §5.2.2): the error code, the `auth_session` value the
/// app sends with its next step (every step replaces it, §5.3.1), and this server's members
/// that tell the app what to do next (§5.2.2 allows them): the steps it may take and the
/// WebAuthn options to pass to the platform's passkey API.
struct ChallengeAnswer: Error, Encodable, Sendable {
    var status: HTTPStatus
    var error: String
    var errorDescription: String?
    var authSession: String?
    /// The steps the app may send next (`passkey`, `password`, `sign_up`, `sign_up_passkey`,
    /// `recovery`).
    var steps: [String]?
    /// For `navigator.credentials.get` / `ASAuthorizationPlatformPublicKeyCredentialProvider`.
    var passkeyRequestOptions: PublicKeyCredentialRequestOptionsJSON?
    /// For `navigator.credentials.create`, after a `sign_up` step.
    var passkeyCreationOptions: PublicKeyCredentialCreationOptionsJSON?
    /// The account's policy wants its passkey: the password was right, but is not enough.
    var passkeyRequired: Bool?
    var retryAfter: Int?

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
        case authSession = "auth_session"
        case steps
        case passkeyRequestOptions = "passkey_request_options"
        case passkeyCreationOptions = "passkey_creation_options"
        case passkeyRequired = "passkey_required"
    }

    /// §5.2.2.1: the client must take more steps; answered with 403.
    static func insufficientAuthorization(
        authSession: String, steps: [String], description: String? = nil
    ) -> ChallengeAnswer {
        ChallengeAnswer(
            status: .forbidden, error: "insufficient_authorization", errorDescription: description,
            authSession: authSession, steps: steps)
    }

    /// §5.2.2.1.1: the sign-in continues in the browser, with a new authorization code flow
    /// (RFC 8252). Used for recovery and every step this endpoint does not take.
    static func redirectToWeb(_ description: String) -> ChallengeAnswer {
        ChallengeAnswer(status: .forbidden, error: "redirect_to_web", errorDescription: description)
    }

    /// §5.2.2.1: the `auth_session` is unknown, was already used for a step, has expired,
    /// belongs to another client or completed with a code.
    static let invalidSession = ChallengeAnswer(
        status: .badRequest, error: "invalid_session",
        errorDescription: "The auth_session is invalid, expired or already used. Start again.")

    /// A malformed step; the sign-in goes on with the new `auth_session`.
    static func invalidRequest(_ description: String, authSession: String?) -> ChallengeAnswer {
        ChallengeAnswer(
            status: .badRequest, error: "invalid_request", errorDescription: description,
            authSession: authSession)
    }

    func response() -> HTTPResponse {
        var response =
            (try? HTTPResponse.json(self, status: status))
            ?? HTTPResponse(status: .internalServerError, body: Array(#"{"error":"server_error"}"#.utf8))
        response.headers.set("Content-Type", "application/json")
        response.headers.set("Cache-Control", "no-store")
        response.headers.set("Pragma", "no-cache")
        if let retryAfter { response.headers.set("Retry-After", String(max(1, retryAfter))) }
        return response
    }
}
