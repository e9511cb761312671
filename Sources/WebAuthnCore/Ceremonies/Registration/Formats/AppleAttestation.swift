import Crypto

/// `apple` (anonymous attestation): the leaf certificate certifies the credential key
/// and carries a nonce binding it to this registration.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-apple-anonymous-attestation
enum AppleAttestation {
    static let nonceExtensionOID = "1.2.840.113635.100.8.2"

    static func verify(_ input: AttestationInput) throws(WebAuthnError) -> AttestationTrust {
        let (der, chain) = try parsedCertificateChain(in: input.statement, format: "apple")
        // Steps 2-3. nonce = SHA-256(authenticatorData || clientDataHash).
        let expected = sha256(input.signedData)
        // Step 4. The nonce extension holds the same value: SEQUENCE { [1] EXPLICIT OCTET STRING }.
        guard let ext = chain.leaf.extension(oid: nonceExtensionOID) else {
            throw .attestationInvalid("apple: nonce extension missing")
        }
        let nonce: [UInt8]
        do {
            var outer = try DERReader(ext.value)
            var sequence = try outer.readSequence()
            try outer.finish()
            var tagged = try sequence.readExplicit(tag: 1)
            try sequence.finish()
            nonce = try tagged.readOctetString()
            try tagged.finish()
        } catch {
            throw .attestationInvalid("apple: nonce extension is malformed")
        }
        guard constantTimeEqualBytes(nonce, expected) else {
            throw .attestationInvalid("apple: nonce does not match authenticator and client data")
        }
        // Step 5. The credential public key is the leaf certificate's subject key.
        guard certificateKey(of: chain.leaf, matches: input.credentialKey) else {
            throw .attestationInvalid("apple: certificate key does not match the credential public key")
        }
        // Step 6. Anonymization CA: trust path.
        let verification = try assessCertificateChain(chain, input: input, format: "apple")
        return .basic(certificateChain: der, verification: verification)
    }
}
