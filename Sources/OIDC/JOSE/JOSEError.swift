import Crypto

/// Why a JOSE object or key was refused. One case per cause, so a caller can map each
/// to a protocol error and a log reason, and tests can expect the exact failure.
public enum JOSEError: Error, Equatable, Sendable {
    /// Not three base64url parts, or a header/payload that is not the JSON it must be.
    case malformed
    /// An `alg` this server does not accept here (`none`, `HS256`, or one not allowed).
    case unsupportedAlgorithm(String)
    /// The `alg` does not fit the key (e.g. `RS256` with an EC key): no algorithm confusion.
    case algorithmKeyMismatch
    /// No key with the token's `kid`, or no single key fitting a token without `kid`.
    case unknownKeyID
    /// The signature does not verify.
    case signatureInvalid
    /// The header's `typ` is not the one required (e.g. an ID token presented as a logout token).
    case typeMismatch
    /// The header has a `crit` member; no extension is understood, so it must be refused.
    case unsupportedCriticalHeader
    /// A JWK with missing or malformed members, or members that do not form a valid key.
    case invalidKey
    /// A key type or curve that is not supported (e.g. `oct`, `P-384`).
    case unsupportedKeyType(String)
    /// An RSA key below 2048 bits.
    case keyTooSmall
    /// `exp` is in the past (beyond the leeway).
    case expired
    /// `nbf` is in the future (beyond the leeway).
    case notYetValid
    /// `iat` is in the future (beyond the leeway).
    case issuedInFuture
    case issuerMismatch
    case audienceMismatch
    /// A required claim is absent; the value names it.
    case missingClaim(String)
    /// A claim has the wrong JSON type; the value names it.
    case invalidClaim(String)
    /// Signing failed inside the crypto layer.
    case signingFailed(CryptoError)
}
