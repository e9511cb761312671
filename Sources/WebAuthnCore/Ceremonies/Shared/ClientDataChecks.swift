import Crypto

/// The client data checks both ceremonies share, in the order the specification
/// lists them (registration steps 7-11, authentication steps 11-14).
struct ClientDataChecks {
    let allowedOrigins: Set<String>

    func verify(
        _ clientData: CollectedClientData, type: CollectedClientData.CeremonyType, expectedChallenge: [UInt8]
    ) throws(WebAuthnError) {
        // Type: `webauthn.create` or `webauthn.get`.
        guard clientData.type == type.rawValue else { throw .clientDataTypeMismatch }
        // Challenge: strict base64url, compared without early exit.
        guard let challenge = try? Base64URL.decode(clientData.challenge),
            constantTimeEquals(challenge, expectedChallenge)
        else { throw .challengeMismatch }
        // Origin: exact match against the configured web and app origins.
        guard allowedOrigins.contains(clientData.origin) else { throw .originNotAllowed }
        // crossOrigin: this relying party is never embedded in a cross-origin iframe.
        guard clientData.crossOrigin != true else { throw .crossOriginNotAllowed }
        // topOrigin: when present it must still be one of our own origins.
        if let topOrigin = clientData.topOrigin, !allowedOrigins.contains(topOrigin) {
            throw .topOriginNotAllowed
        }
    }
}
