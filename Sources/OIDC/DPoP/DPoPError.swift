/// Why a DPoP proof (RFC 9449 §4.3) was refused. One case per check, so tests expect the
/// exact failure and logs name it; `oauthError(at:)` turns each into the answer.
public enum DPoPError: Error, Equatable, Sendable {
    /// No `DPoP` header where one is required.
    case missing
    /// More than one `DPoP` header (§4.3 step 1).
    case multipleHeaders
    /// Not a compact JWS, or a header or payload that is not the JSON it must be (step 2).
    case malformed
    /// `typ` is not `dpop+jwt` (step 4).
    case wrongType
    /// An `alg` that is absent, symmetric, `none` or not supported (step 5).
    case unsupportedAlgorithm
    /// A supported `alg` that the client may not use (a FAPI 2.0 client: PS256, ES256, EdDSA).
    case algorithmNotAllowed
    /// The `jwk` header is missing, not a key of a supported type, or does not fit `alg`.
    case invalidKey
    /// The `jwk` header carries private members (step 7).
    case privateKey
    /// The signature does not verify with the `jwk` (step 6).
    case signatureInvalid
    /// A required claim is absent or of the wrong type; the value names it (step 3).
    case missingClaim(String)
    /// `jti` longer than this server keeps.
    case identifierTooLong
    /// `htm` is not the request's method (step 8).
    case methodMismatch
    /// `htu` is not the endpoint's URI (step 9).
    case uriMismatch
    /// `iat` outside the accepted window (step 11).
    case staleOrFuture
    /// `ath` is absent or not the hash of the presented access token (step 12).
    case accessTokenHashMismatch
    /// The server requires a nonce and the proof has none, or one that is not current (step 10).
    case nonceRequired
    /// The proof's `jti` was seen before (§11.1).
    case replayed
    /// The proof's key is not the one the token or code is bound to.
    case keyMismatch
}

extension DPoPError {
    /// Where the proof was sent: the authorization server's own endpoints answer 400 with a
    /// JSON body (§5.2), a resource 401 with a `WWW-Authenticate: DPoP` challenge (§7.1).
    public enum Endpoint: Sendable { case authorizationServer, resource }

    /// A fixed, client-safe sentence for the failure.
    public var hint: String {
        switch self {
        case .missing: return "A DPoP proof is required."
        case .multipleHeaders: return "Send exactly one DPoP header."
        case .malformed: return "The DPoP proof is not a well-formed JWT."
        case .wrongType: return "The DPoP proof's typ must be dpop+jwt."
        case .unsupportedAlgorithm: return "The DPoP proof's alg is not supported."
        case .algorithmNotAllowed: return "The DPoP proof's alg is not one this client may use."
        case .invalidKey: return "The DPoP proof's jwk is not a supported public key for its alg."
        case .privateKey: return "The DPoP proof's jwk must not contain a private key."
        case .signatureInvalid: return "The DPoP proof's signature does not verify."
        case .missingClaim(let name): return "The DPoP proof lacks a valid '\(name)' claim."
        case .identifierTooLong: return "The DPoP proof's jti is too long."
        case .methodMismatch: return "The DPoP proof's htm does not match the request method."
        case .uriMismatch: return "The DPoP proof's htu does not match the request URI."
        case .staleOrFuture: return "The DPoP proof's iat is too old or in the future."
        case .accessTokenHashMismatch: return "The DPoP proof's ath does not match the access token."
        case .nonceRequired: return "The DPoP proof must carry the nonce the server provided."
        case .replayed: return "The DPoP proof was already used."
        case .keyMismatch: return "The DPoP proof's key is not the key the token is bound to."
        }
    }

    /// The answer: `use_dpop_nonce` (§8) with the nonce to use, or `invalid_dpop_proof`
    /// (§5.2, §7.1). At a resource the status is 401 and the body is left to the challenge.
    public func oauthError(at endpoint: Endpoint, nonce: String? = nil) -> OAuthError {
        let code: OAuthErrorCode = self == .nonceRequired ? .useDPoPNonce : .invalidDPoPProof
        var error = OAuthError(code, hint: hint, status: endpoint == .resource ? 401 : 400)
        error.dpopNonce = nonce
        return error
    }
}
