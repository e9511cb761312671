import Crypto

/// `android-key`: a key attestation by Android Keystore; the leaf certificate certifies
/// the credential key and its key description names this registration's client data.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-android-key-attestation
enum AndroidKeyAttestation {
    static let keyDescriptionOID = "1.3.6.1.4.1.11129.2.1.17"
    /// KM_ORIGIN_GENERATED: the key was generated in Keystore, never imported.
    static let originGenerated = 0
    /// KM_PURPOSE_SIGN.
    static let purposeSign = 2

    static func verify(_ input: AttestationInput) throws(WebAuthnError) -> AttestationTrust {
        let statement = input.statement
        // alg names the attestation key's algorithm (the leaf certificate's).
        let alg = try statementAlgorithm(in: statement, format: "android-key")
        let sig = try statementSignature(in: statement, format: "android-key")
        let (der, chain) = try parsedCertificateChain(in: statement, format: "android-key")
        // Step 2. sig verifies over authenticatorData || clientDataHash with the leaf key.
        let algorithm = try certificateAlgorithm(for: alg, format: "android-key")
        guard chain.leaf.isValidSignature(sig, for: input.signedData, algorithm: algorithm) else {
            throw .attestationInvalid("android-key: signature does not verify with the attestation certificate")
        }
        // Step 3. The leaf's key is the credential public key.
        guard certificateKey(of: chain.leaf, matches: input.credentialKey) else {
            throw .attestationInvalid("android-key: certificate key does not match the credential public key")
        }
        // Step 4. The key description extension.
        guard let ext = chain.leaf.extension(oid: keyDescriptionOID) else {
            throw .attestationInvalid("android-key: key description extension missing")
        }
        let description: KeyDescription
        do { description = try KeyDescription(ext.value) } catch {
            throw .attestationInvalid("android-key: key description extension is malformed")
        }
        // attestationChallenge is the clientDataHash.
        guard constantTimeEqualBytes(description.attestationChallenge, input.clientDataHash) else {
            throw .attestationInvalid("android-key: attestationChallenge does not match clientDataHash")
        }
        // allApplications is absent from both authorization lists: the key is scoped to the RP.
        guard !description.softwareEnforced.allApplications, !description.teeEnforced.allApplications else {
            throw .attestationInvalid("android-key: key is usable by all applications")
        }
        // origin is KM_ORIGIN_GENERATED and purpose includes KM_PURPOSE_SIGN, in the union of
        // the TEE-enforced and software-enforced lists (this relying party accepts both).
        let origin = description.teeEnforced.origin ?? description.softwareEnforced.origin
        guard origin == originGenerated else {
            throw .attestationInvalid("android-key: key origin is not generated")
        }
        let purposes = description.teeEnforced.purposes + description.softwareEnforced.purposes
        guard purposes.contains(purposeSign) else {
            throw .attestationInvalid("android-key: key purpose does not include sign")
        }
        // Step 5. Trust path.
        let verification = try assessCertificateChain(chain, input: input, format: "android-key")
        return .basic(certificateChain: der, verification: verification)
    }

    /// The parts of Android's `KeyDescription` the verification needs.
    /// - SeeAlso: https://source.android.com/docs/security/features/keystore/attestation#schema
    struct KeyDescription {
        var attestationChallenge: [UInt8]
        var softwareEnforced: AuthorizationList
        var teeEnforced: AuthorizationList

        init(_ der: [UInt8]) throws(DERError) {
            var outer = try DERReader(der)
            var sequence = try outer.readSequence()
            try outer.finish()
            _ = try sequence.readInteger()  // attestationVersion
            _ = try sequence.readEnumerated()  // attestationSecurityLevel
            _ = try sequence.readInteger()  // keymasterVersion / keyMintVersion
            _ = try sequence.readEnumerated()  // keymasterSecurityLevel
            attestationChallenge = try sequence.readOctetString()
            _ = try sequence.readOctetString()  // uniqueId
            softwareEnforced = try AuthorizationList(sequence.readSequence())
            teeEnforced = try AuthorizationList(sequence.readSequence())
            try sequence.finish()
        }
    }

    /// The members of an `AuthorizationList` that matter here; the others are skipped.
    struct AuthorizationList {
        var purposes: [Int] = []
        var allApplications = false
        var origin: Int?

        init(_ reader: DERReader) throws(DERError) {
            var reader = reader
            while !reader.isAtEnd {
                let element = try reader.readElement()
                guard element.tagClass == .contextSpecific, element.isConstructed else {
                    throw .unexpectedTag(expected: "[n] EXPLICIT", found: "\(element.tagNumber)")
                }
                var inner = try element.children()
                switch element.tagNumber {
                case 1:
                    var set = try inner.readSet()
                    while !set.isAtEnd { purposes.append(try set.readInteger()) }
                    try inner.finish()
                case 600:
                    allApplications = true
                case 702:
                    origin = try inner.readInteger()
                    try inner.finish()
                default:
                    continue
                }
            }
        }
    }
}
