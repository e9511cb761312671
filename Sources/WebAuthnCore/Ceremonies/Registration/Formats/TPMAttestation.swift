import Crypto

/// `tpm`: a TPM 2.0 attestation key (AIK) certified the credential key with
/// `TPM2_Certify`; `certInfo` names the key and binds it to this registration.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-tpm-attestation
enum TPMAttestation {
    static let manufacturerOID = "2.23.133.2.1"
    static let modelOID = "2.23.133.2.2"
    static let versionOID = "2.23.133.2.3"
    /// tcg-kp-AIKCertificate.
    static let aikCertificateKeyPurpose = "2.23.133.8.3"

    static func verify(_ input: AttestationInput) throws(WebAuthnError) -> AttestationTrust {
        let statement = input.statement
        // Syntax: {ver, alg, x5c, sig, certInfo, pubArea}.
        guard statement[textKey: "ver"]?.stringValue == "2.0" else { throw .attestationInvalid("tpm: ver is not 2.0") }
        let alg = try statementAlgorithm(in: statement, format: "tpm")
        let sig = try statementSignature(in: statement, format: "tpm")
        guard let certInfoBytes = statement[textKey: "certInfo"]?.bytesValue, !certInfoBytes.isEmpty else {
            throw .attestationInvalid("tpm: certInfo missing")
        }
        guard let pubAreaBytes = statement[textKey: "pubArea"]?.bytesValue, !pubAreaBytes.isEmpty else {
            throw .attestationInvalid("tpm: pubArea missing")
        }
        // ECDAA (`ecdaaKeyId`) was removed from Level 3.
        guard statement[textKey: "ecdaaKeyId"] == nil else { throw .attestationInvalid("tpm: ECDAA not supported") }
        let (der, chain) = try parsedCertificateChain(in: statement, format: "tpm")

        // Step 2. pubArea describes the credential public key.
        let pubArea: TPMPublicArea
        do { pubArea = try TPMPublicArea(pubAreaBytes) } catch { throw .attestationInvalid("tpm: pubArea is malformed") }
        guard pubArea.matches(input.credentialKey) else {
            throw .attestationInvalid("tpm: pubArea does not match the credential public key")
        }

        // Step 4. certInfo is a TPMS_ATTEST of type TPM_ST_ATTEST_CERTIFY ...
        let certInfo: TPMCertifyInfo
        do { certInfo = try TPMCertifyInfo(certInfoBytes) } catch { throw .attestationInvalid("tpm: certInfo is malformed") }
        guard certInfo.magic == TPMCertifyInfo.generatedValue else {
            throw .attestationInvalid("tpm: certInfo magic is not TPM_GENERATED_VALUE")
        }
        guard certInfo.type == TPMCertifyInfo.attestCertify else {
            throw .attestationInvalid("tpm: certInfo type is not TPM_ST_ATTEST_CERTIFY")
        }
        // ... whose extraData is the hash of attToBeSigned under alg's hash ...
        let algorithm = try certificateAlgorithm(for: alg, format: "tpm")
        guard constantTimeEqualBytes(certInfo.extraData, Self.hash(input.signedData, for: algorithm)) else {
            throw .attestationInvalid("tpm: certInfo extraData does not match authenticator and client data")
        }
        // ... and whose attested name is pubArea's name (nameAlg || H_nameAlg(pubArea)).
        guard let name = Self.name(of: pubAreaBytes, nameAlg: pubArea.nameAlg),
            constantTimeEqualBytes(certInfo.attestedName, name)
        else { throw .attestationInvalid("tpm: certInfo attested name does not match pubArea") }

        // Step 3 (x5c). sig verifies over certInfo with the AIK certificate's key ...
        guard chain.leaf.isValidSignature(sig, for: certInfoBytes, algorithm: algorithm) else {
            throw .attestationInvalid("tpm: signature does not verify with the AIK certificate")
        }
        // ... which meets the TPM attestation certificate requirements.
        try checkCertificateRequirements(chain.leaf, aaguid: input.attested.aaguid)
        let verification = try assessCertificateChain(chain, input: input, format: "tpm")
        return .basic(certificateChain: der, verification: verification)
    }

    /// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-tpm-cert-requirements
    static func checkCertificateRequirements(_ aik: Certificate, aaguid: [UInt8]) throws(WebAuthnError) {
        guard aik.version == 3 else { throw .attestationInvalid("tpm: AIK certificate is not version 3") }
        guard aik.subject.isEmpty else { throw .attestationInvalid("tpm: AIK certificate subject is not empty") }
        // Subject Alternative Name: a directoryName with TPM manufacturer, model and version.
        guard let san = aik.extension(oid: "2.5.29.17") else {
            throw .attestationInvalid("tpm: AIK certificate subject alternative name missing")
        }
        let attributes: Set<String>
        do { attributes = try directoryNameAttributeTypes(san.value) } catch {
            throw .attestationInvalid("tpm: AIK certificate subject alternative name is malformed")
        }
        guard attributes.isSuperset(of: [manufacturerOID, modelOID, versionOID]) else {
            throw .attestationInvalid("tpm: AIK certificate subject alternative name lacks TPM manufacturer, model or version")
        }
        // Extended Key Usage includes tcg-kp-AIKCertificate.
        guard let eku = aik.extension(oid: "2.5.29.37") else {
            throw .attestationInvalid("tpm: AIK certificate extended key usage missing")
        }
        var purposes: [String] = []
        do {
            var outer = try DERReader(eku.value)
            var sequence = try outer.readSequence()
            try outer.finish()
            while !sequence.isAtEnd { purposes.append(try sequence.readObjectIdentifier()) }
        } catch {
            throw .attestationInvalid("tpm: AIK certificate extended key usage is malformed")
        }
        guard purposes.contains(aikCertificateKeyPurpose) else {
            throw .attestationInvalid("tpm: AIK certificate extended key usage lacks tcg-kp-AIKCertificate")
        }
        try checkNotCertificateAuthority(aik, format: "tpm")
        try checkAAGUIDExtension(of: aik, aaguid: aaguid, format: "tpm")
    }

    /// The attribute types inside the directoryName entries of a GeneralNames value.
    static func directoryNameAttributeTypes(_ der: [UInt8]) throws(DERError) -> Set<String> {
        var types: Set<String> = []
        var outer = try DERReader(der)
        var names = try outer.readSequence()
        try outer.finish()
        while !names.isAtEnd {
            let name = try names.readElement()
            // directoryName is [4] EXPLICIT Name; other GeneralName choices are skipped.
            guard name.tagClass == .contextSpecific, name.tagNumber == 4 else { continue }
            var wrapper = try name.children()
            var rdns = try wrapper.readSequence()
            try wrapper.finish()
            while !rdns.isAtEnd {
                var rdn = try rdns.readSet()
                while !rdn.isAtEnd {
                    var attribute = try rdn.readSequence()
                    types.insert(try attribute.readObjectIdentifier())
                    _ = try attribute.readElement()
                    try attribute.finish()
                }
            }
        }
        return types
    }

    static func hash(_ data: [UInt8], for algorithm: CertificateSignatureAlgorithm) -> [UInt8] {
        switch algorithm {
        case .rsaPKCS1v15(.sha1), .rsaPSS(.sha1): Insecure.SHA1.hash(data: data)
        case .ecdsaP384SHA384, .rsaPKCS1v15(.sha384), .rsaPSS(.sha384): Array(SHA384.hash(data: data))
        case .ecdsaP521SHA512, .rsaPKCS1v15(.sha512), .rsaPSS(.sha512): Array(SHA512.hash(data: data))
        default: Array(SHA256.hash(data: data))
        }
    }

    /// A TPM object name: nameAlg (2 bytes) followed by the digest of pubArea under it.
    static func name(of pubArea: [UInt8], nameAlg: UInt16) -> [UInt8]? {
        let digest: [UInt8]
        switch nameAlg {
        case 0x0004: digest = Insecure.SHA1.hash(data: pubArea)
        case 0x000B: digest = Array(SHA256.hash(data: pubArea))
        case 0x000C: digest = Array(SHA384.hash(data: pubArea))
        case 0x000D: digest = Array(SHA512.hash(data: pubArea))
        default: return nil
        }
        return [UInt8(nameAlg >> 8), UInt8(nameAlg & 0xFF)] + digest
    }
}
