import Crypto

/// `packed`: self attestation (signed with the credential key) or an attestation
/// certificate chain (`x5c`) whose leaf signed the registration.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-packed-attestation
enum PackedAttestation {
    static func verify(_ input: AttestationInput) throws(WebAuthnError) -> AttestationTrust {
        let statement = input.statement
        // Syntax: {alg, sig, x5c?}; no other members are defined.
        let alg = try statementAlgorithm(in: statement, format: "packed")
        let sig = try statementSignature(in: statement, format: "packed")

        if statement[textKey: "x5c"] != nil {
            let (der, chain) = try parsedCertificateChain(in: statement, format: "packed")
            // sig verifies over authenticatorData || clientDataHash with the leaf's key under alg.
            let algorithm = try certificateAlgorithm(for: alg, format: "packed")
            guard chain.leaf.isValidSignature(sig, for: input.signedData, algorithm: algorithm) else {
                throw .attestationInvalid("packed: signature does not verify with the attestation certificate")
            }
            // The leaf meets the packed attestation certificate requirements (§8.2.1).
            try checkCertificateRequirements(chain.leaf, aaguid: input.attested.aaguid)
            let verification = try assessCertificateChain(chain, input: input, format: "packed")
            return .basic(certificateChain: der, verification: verification)
        }

        // Self attestation: alg matches the credential key's algorithm ...
        guard alg == input.credentialKey.algorithm else {
            throw .attestationInvalid("packed: alg does not match the credential public key")
        }
        // ... and sig verifies over authenticatorData || clientDataHash with that key.
        guard input.credentialKey.isValidSignature(sig, for: input.signedData) else {
            throw .attestationInvalid("packed: self-attestation signature does not verify")
        }
        return .selfAttestation
    }

    /// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-packed-attestation-cert-requirements
    static func checkCertificateRequirements(_ leaf: Certificate, aaguid: [UInt8]) throws(WebAuthnError) {
        guard leaf.version == 3 else { throw .attestationInvalid("packed: certificate is not version 3") }
        let subject = leaf.subject
        // Subject-C: ISO 3166 code; Subject-O: vendor; Subject-OU: the literal string;
        // Subject-CN: any vendor-chosen string.
        guard let country = subject.countryName, country.count == 2, country.allSatisfy({ $0.isLetter }) else {
            throw .attestationInvalid("packed: certificate subject C is not a country code")
        }
        guard subject.organizationName?.isEmpty == false else {
            throw .attestationInvalid("packed: certificate subject O is missing")
        }
        guard subject.organizationalUnitName == "Authenticator Attestation" else {
            throw .attestationInvalid("packed: certificate subject OU is not Authenticator Attestation")
        }
        guard subject.commonName?.isEmpty == false else {
            throw .attestationInvalid("packed: certificate subject CN is missing")
        }
        try checkNotCertificateAuthority(leaf, format: "packed")
        try checkAAGUIDExtension(of: leaf, aaguid: aaguid, format: "packed")
    }
}
