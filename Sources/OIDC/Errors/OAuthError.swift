import Foundation

/// The error codes of RFC 6749 §4.1.2.1 and §5.2, OpenID Connect Core §3.1.2.6, RFC 6750
/// §3.1 and RFC 7009 §2.2.1. Each code knows its usual HTTP status and a fixed,
/// client-safe description; the situation is told by `OAuthError.hint`.
public enum OAuthErrorCode: String, Sendable, CaseIterable {
    case invalidRequest = "invalid_request"
    case invalidClient = "invalid_client"
    case invalidGrant = "invalid_grant"
    case unauthorizedClient = "unauthorized_client"
    case unsupportedGrantType = "unsupported_grant_type"
    case unsupportedResponseType = "unsupported_response_type"
    case invalidScope = "invalid_scope"
    case accessDenied = "access_denied"
    case serverError = "server_error"
    case temporarilyUnavailable = "temporarily_unavailable"
    case loginRequired = "login_required"
    case consentRequired = "consent_required"
    case interactionRequired = "interaction_required"
    case accountSelectionRequired = "account_selection_required"
    case requestNotSupported = "request_not_supported"
    case requestURINotSupported = "request_uri_not_supported"
    case invalidToken = "invalid_token"
    case insufficientScope = "insufficient_scope"
    case unsupportedTokenType = "unsupported_token_type"
    /// OpenID Connect Core Unmet Authentication Requirements 1.0 §2.
    case unmetAuthenticationRequirements = "unmet_authentication_requirements"
    /// RFC 8707 §2: a `resource` that is malformed, unknown, or not allowed for the client.
    case invalidTarget = "invalid_target"
    /// RFC 9126 §2.2 / RFC 9101 §6.2: a `request_uri` that is unknown, expired, used, or
    /// pushed by another client.
    case invalidRequestURI = "invalid_request_uri"
    /// RFC 9101 §6.3: a request object whose signature or claims do not check out.
    case invalidRequestObject = "invalid_request_object"
    /// RFC 9449 §5.2, §7.1: the DPoP proof is missing where required, or invalid.
    case invalidDPoPProof = "invalid_dpop_proof"
    /// RFC 9449 §8, §9: the proof must carry the nonce the `DPoP-Nonce` header gives.
    case useDPoPNonce = "use_dpop_nonce"

    /// The status used when the error is answered directly (not redirected).
    public var status: Int {
        switch self {
        case .invalidClient, .invalidToken: return 401
        case .insufficientScope, .accessDenied: return 403
        case .serverError: return 500
        case .temporarilyUnavailable: return 503
        default: return 400
        }
    }

    /// A fixed sentence, the same for every occurrence of the code.
    public var fixedDescription: String {
        switch self {
        case .invalidRequest:
            return
                "The request is missing a required parameter, has an invalid or duplicated parameter, or is otherwise malformed."
        case .invalidClient: return "Client authentication failed."
        case .invalidGrant:
            return
                "The grant or refresh token is invalid, expired, revoked, or was issued to another client or redirect URI."
        case .unauthorizedClient: return "The client is not authorized to use this grant or response type."
        case .unsupportedGrantType: return "The grant type is not supported."
        case .unsupportedResponseType: return "The response type is not supported."
        case .invalidScope: return "The requested scope is invalid, unknown, or exceeds the granted scope."
        case .accessDenied: return "The resource owner or the server denied the request."
        case .serverError: return "The server encountered an unexpected condition."
        case .temporarilyUnavailable: return "The server is temporarily unable to handle the request."
        case .loginRequired: return "The user must sign in."
        case .consentRequired: return "The user must give consent."
        case .interactionRequired: return "User interaction is required."
        case .accountSelectionRequired: return "The user must select an account."
        case .requestNotSupported: return "The 'request' parameter is not supported."
        case .requestURINotSupported: return "The 'request_uri' parameter is not supported."
        case .invalidToken: return "The access token is invalid, expired or revoked."
        case .insufficientScope: return "The access token does not carry the required scope."
        case .unsupportedTokenType: return "The token type cannot be revoked."
        case .unmetAuthenticationRequirements: return "The authentication requirements cannot be met."
        case .invalidTarget:
            return "The requested resource is invalid, unknown, or not allowed for the client."
        case .invalidRequestURI:
            return "The 'request_uri' is unknown, expired, already used, or belongs to another client."
        case .invalidRequestObject: return "The request object is invalid."
        case .invalidDPoPProof: return "The DPoP proof is missing or invalid."
        case .useDPoPNonce: return "The DPoP proof must carry the server-provided nonce."
        }
    }
}

/// An OAuth protocol error, rendered by the caller as a redirect, a JSON body or an error
/// page.
///
/// Everything shown to the client (`error`, `error_description`) is fixed text plus a
/// hint written by this module; `debug` may hold request-derived detail and goes to the
/// log only, never into a response.
public struct OAuthError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: OAuthErrorCode
    /// The situation, in one client-safe sentence (no request data).
    public var hint: String
    /// Detail for the log only.
    public var debug: String?
    /// The HTTP status when answered directly.
    public var status: Int
    /// Whether this error may be sent to the client's redirect URI. False for an unknown
    /// client or an unverified redirect URI: those are shown on an error page, never
    /// redirected (RFC 6749 §4.1.2.1, RFC 9700 §4.1).
    public var redirectable: Bool
    /// For `invalid_client` after an attempted HTTP Basic authentication: the
    /// `WWW-Authenticate` value the 401 must carry (RFC 6749 §5.2).
    public var wwwAuthenticate: String?
    /// The nonce a DPoP client must use from now on (RFC 9449 §8): sent as `DPoP-Nonce`.
    public var dpopNonce: String? = nil

    public init(
        _ code: OAuthErrorCode, hint: String, debug: String? = nil, status: Int? = nil,
        redirectable: Bool = true, wwwAuthenticate: String? = nil
    ) {
        self.code = code
        self.hint = hint
        self.debug = debug
        self.status = status ?? code.status
        self.redirectable = redirectable
        self.wwwAuthenticate = wwwAuthenticate
    }

    /// `error`.
    public var error: String { code.rawValue }

    /// `error_description`: the fixed description, then the hint. Characters outside
    /// RFC 6749's allowed set (`"`, `\`, controls, non-ASCII) are dropped so the value is
    /// always valid.
    public var errorDescription: String {
        let text = hint.isEmpty ? code.fixedDescription : code.fixedDescription + " " + hint
        return String(
            String.UnicodeScalarView(
                text.unicodeScalars.filter {
                    $0.value >= 0x20 && $0.value <= 0x7E && $0 != "\"" && $0 != "\\"
                }))
    }

    /// A log line fragment, e.g. `error=invalid_grant hint="…" debug="…"`. Holds no secrets
    /// as long as callers keep secrets out of `debug`.
    public var description: String {
        "error=\(code.rawValue) status=\(status) hint=\"\(hint)\"" + (debug.map { " debug=\"\($0)\"" } ?? "")
    }

    /// The JSON error body (RFC 6749 §5.2): `{"error":…,"error_description":…}`.
    public var jsonBody: [UInt8] {
        JSONBody.encode(["error": .string(error), "error_description": .string(errorDescription)])
    }

    /// The same error, refused as not redirectable.
    func notRedirectable() -> OAuthError {
        var copy = self
        copy.redirectable = false
        return copy
    }

    public static func == (lhs: OAuthError, rhs: OAuthError) -> Bool {
        lhs.code == rhs.code && lhs.hint == rhs.hint && lhs.status == rhs.status
            && lhs.redirectable == rhs.redirectable
            && lhs.wwwAuthenticate == rhs.wwwAuthenticate
    }
}

extension OAuthError {
    static func invalidRequest(_ hint: String, debug: String? = nil) -> OAuthError {
        OAuthError(.invalidRequest, hint: hint, debug: debug)
    }
    static func invalidGrant(_ hint: String, debug: String? = nil) -> OAuthError {
        OAuthError(.invalidGrant, hint: hint, debug: debug)
    }
    static func invalidScope(_ hint: String, debug: String? = nil) -> OAuthError {
        OAuthError(.invalidScope, hint: hint, debug: debug)
    }
}
