/// Every failure the Crypto module reports. Each case names one cause, so callers and
/// tests can tell a malformed key from a wrong signature without parsing messages.
public enum CryptoError: Error, Equatable, Sendable {
    /// DER, raw or component bytes do not describe a key of the expected kind.
    case invalidKeyEncoding
    /// The text is not PEM, or its label does not fit the expected key kind.
    case invalidPEM
    /// A signature is not well-formed (wrong length, bad DER).
    case invalidSignatureEncoding
    /// An EC key on another curve than the one required.
    case wrongCurve
    /// The key is of another algorithm (e.g. RSA where Ed25519 is required).
    case unsupportedKeyType
    /// An RSA key below 2048 bits.
    case keyTooSmall
    /// Text that is not unpadded base64url (or base64 where that is expected).
    case invalidBase64URL
    /// AES-GCM: wrong key, nonce, associated data, or tampered ciphertext/tag.
    case authenticationFailure
    /// A caller-supplied parameter outside the supported range.
    case invalidParameter(String)
    /// A stored password hash that cannot be parsed or uses an unknown scheme.
    case invalidPasswordHash
    /// Too many password hash computations are running; the caller waited the maximum time.
    case overloaded
    /// OpenSSL or libargon2 reported an unexpected failure; the text names the call.
    case openSSLFailure(String)
}
