import Foundation
import HTTPServer

/// An error of the JSON API: `{"error": "<stable_code>", "message": "<human text>"}`.
///
/// Codes are stable and documented in docs/api.md; messages are for people and may change.
/// Nothing internal goes in either: verification details are logged, not returned.
struct APIError: HTTPResponseError, Sendable, Equatable {
    var status: HTTPStatus
    var code: String
    var message: String
    var headers: HTTPFields = [:]
    /// For `unknown_credential`: what the page passes to `PublicKeyCredential.signalUnknownCredential`.
    var unknownCredential: UnknownCredentialSignal?

    struct UnknownCredentialSignal: Codable, Sendable, Equatable {
        var rpId: String
        var credentialId: String
    }

    private struct Body: Encodable {
        var error: String
        var message: String
        var signal: UnknownCredentialSignal?
    }

    func response() -> HTTPResponse {
        var response =
            (try? HTTPResponse.json(
                Body(error: code, message: message, signal: unknownCredential), status: status))
            ?? .text(message, status: status)
        for field in headers { response.headers.set(field.name, field.value) }
        response.headers.set("Cache-Control", "no-store")
        return response
    }

    static func == (lhs: APIError, rhs: APIError) -> Bool { lhs.code == rhs.code && lhs.status == rhs.status }

    static func badRequest(_ message: String = "The request is malformed.") -> APIError {
        APIError(status: .badRequest, code: "invalid_request", message: message)
    }
    static let csrf = APIError(
        status: .forbidden, code: "csrf_failed",
        message: "This request did not come from this site's pages. Reload the page and try again.")
    static let notSignedIn = APIError(status: .unauthorized, code: "not_signed_in", message: "Sign in first.")
    /// The session is signed in, but not recently enough to change how the account signs in:
    /// re-authenticate (`/api/reauthenticate/…`) and try again.
    static let reauthenticationRequired = APIError(
        status: .unauthorized, code: "reauthentication_required",
        message: "Confirm it is you: use your passkey or enter your password, then try again.")
    static let invalidCredentials = APIError(
        status: .unauthorized, code: "invalid_credentials",
        message: "The email address or password is incorrect.")
    static func throttled(retryAfter: Int) -> APIError {
        APIError(
            status: .tooManyRequests, code: "too_many_attempts",
            message: "Too many failed attempts. Try again later.",
            headers: ["Retry-After": String(max(1, retryAfter))])
    }
    /// Too many password checks for this account or from this client address. Passkeys and
    /// recovery do not count here, so the message points to them.
    static func passwordThrottled(retryAfter: Int) -> APIError {
        APIError(
            status: .tooManyRequests, code: "too_many_attempts",
            message:
                "Too many failed attempts with this password. Try again in a few minutes, or sign in with a passkey or use “Can't sign in?”.",
            headers: ["Retry-After": String(max(1, retryAfter))])
    }
    static let wrongPassword = APIError(
        status: .forbidden, code: "wrong_password", message: "The current password is incorrect.")
    static let challengeInvalid = APIError(
        status: .badRequest, code: "challenge_invalid",
        message: "This request has expired or was already used. Start again.")
    static let verificationFailed = APIError(
        status: .badRequest, code: "passkey_verification_failed",
        message: "The passkey could not be verified.")
    static let invalidEmail = APIError(
        status: .badRequest, code: "invalid_email", message: "Enter a valid email address.")
    static let invalidDisplayName = APIError(
        status: .badRequest, code: "invalid_display_name", message: "Enter a name of 1 to 200 characters.")
    static let credentialExists = APIError(
        status: .conflict, code: "credential_exists", message: "This passkey is already registered.")
    static let notFound = APIError(status: .notFound, code: "not_found", message: "Not found.")
    static let busy = APIError(
        status: .serviceUnavailable, code: "temporarily_unavailable",
        message: "The server is busy. Try again shortly.",
        headers: ["Retry-After": "2"])
    static func weakPassword(_ problem: PasswordPolicy.Problem) -> APIError {
        APIError(status: .badRequest, code: "weak_password", message: problem.message)
    }
}
