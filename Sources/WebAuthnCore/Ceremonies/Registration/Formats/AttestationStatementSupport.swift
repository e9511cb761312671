import Crypto
import Foundation

/// What every attestation statement format's verification procedure receives.
struct AttestationInput {
    let statement: CBORValue
    let authenticatorData: ParsedAuthenticatorData
    let attested: AttestedCredentialData
    let credentialKey: COSEKey
    let clientDataHash: [UInt8]
    /// Anchors for this format and AAGUID; empty when the relying party configured none.
    let trustAnchors: [Certificate]
    /// The time certificates must be valid at; nil leaves validity unchecked when there
    /// are no anchors, and means the current time when there are.
    let now: Date?

    /// `authenticatorData || clientDataHash`, what packed, android-key and apple sign or hash.
    var signedData: [UInt8] { authenticatorData.rawBytes + clientDataHash }
}

/// The id-fido-gen-ce-aaguid certificate extension.
let aaguidExtensionOID = "1.3.6.1.4.1.45724.1.1.4"

/// Parses `x5c` into certificates, leaf first.
func parsedCertificateChain(in statement: CBORValue, format: String) throws(WebAuthnError) -> (
    der: [[UInt8]], chain: CertificateChain
) {
    let der = try certificateChain(in: statement, format: format)
    do {
        return (der, try CertificateChain(derCertificates: der))
    } catch {
        throw .attestationInvalid("\(format): x5c certificate is malformed")
    }
}

/// Maps a COSE algorithm to the signature check a certificate key performs.
func certificateAlgorithm(
    for alg: COSEAlgorithmIdentifier, format: String
) throws(WebAuthnError) -> CertificateSignatureAlgorithm {
    switch alg.rawValue {
    case -7: return .ecdsaP256SHA256
    case -35: return .ecdsaP384SHA384
    case -36: return .ecdsaP521SHA512
    case -257: return .rsaPKCS1v15(.sha256)
    case -258: return .rsaPKCS1v15(.sha384)
    case -259: return .rsaPKCS1v15(.sha512)
    case -65535: return .rsaPKCS1v15(.sha1)
    case -37: return .rsaPSS(.sha256)
    case -38: return .rsaPSS(.sha384)
    case -39: return .rsaPSS(.sha512)
    case -8: return .ed25519
    default: throw .attestationInvalid("\(format): alg \(alg.rawValue) not supported")
    }
}

/// Whether a certificate's subject public key is the credential public key.
func certificateKey(of certificate: Certificate, matches key: COSEKey) -> Bool {
    guard let certificateKey = try? certificate.publicKey else { return false }
    switch (certificateKey, key) {
    case (.p256(let publicKey), .ec2P256(let x, let y)):
        guard let point = try? publicKey.x963Representation else { return false }
        return point == [0x04] + x + y
    case (.rsa(let publicKey), .rsa(let n, let e, _)):
        guard let modulus = try? publicKey.modulus, let exponent = try? publicKey.exponent else { return false }
        return modulus == Array(n.drop { $0 == 0 }) && exponent == Array(e.drop { $0 == 0 })
    case (.ed25519(let publicKey), .okpEd25519(let x)):
        return (try? publicKey.rawRepresentation) == x
    default:
        return false
    }
}

/// When the certificate carries the AAGUID extension, it must be non-critical and hold
/// the AAGUID of the authenticator data (packed §8.2.1, tpm §8.3.1).
func checkAAGUIDExtension(
    of certificate: Certificate, aaguid: [UInt8], format: String
) throws(WebAuthnError) {
    guard let ext = certificate.extension(oid: aaguidExtensionOID) else { return }
    guard !ext.isCritical else { throw .attestationInvalid("\(format): AAGUID extension is critical") }
    let value: [UInt8]
    do {
        var reader = try DERReader(ext.value)
        value = try reader.readOctetString()
        try reader.finish()
    } catch {
        throw .attestationInvalid("\(format): AAGUID extension is malformed")
    }
    guard value.count == 16, value == aaguid else {
        throw .attestationInvalid("\(format): AAGUID extension does not match authenticator data")
    }
}

/// Requires basicConstraints, when present, to say CA false.
func checkNotCertificateAuthority(_ certificate: Certificate, format: String) throws(WebAuthnError) {
    let constraints: (isCertificateAuthority: Bool, pathLength: Int?)?
    do { constraints = try certificate.basicConstraints } catch {
        throw .attestationInvalid("\(format): basicConstraints extension is malformed")
    }
    if constraints?.isCertificateAuthority == true {
        throw .attestationInvalid("\(format): attestation certificate is a CA")
    }
}

/// The trust path step shared by every certificate format: with anchors, the chain must
/// reach one of them at `now`; without, each certificate must at least be valid at `now`
/// when a time was given, and the chain is reported as unverified.
func assessCertificateChain(
    _ chain: CertificateChain, input: AttestationInput, format: String
) throws(WebAuthnError) -> CertificateChainVerification {
    if input.trustAnchors.isEmpty {
        if let now = input.now {
            for certificate in [chain.leaf] + chain.intermediates {
                if now < certificate.notValidBefore { throw .attestationChainInvalid(format: format, reason: .notYetValid) }
                if now > certificate.notValidAfter { throw .attestationChainInvalid(format: format, reason: .expired) }
            }
        }
        return .unverified
    }
    do {
        try chain.verify(trustAnchors: input.trustAnchors, at: input.now ?? Date())
    } catch {
        throw .attestationChainInvalid(format: format, reason: error)
    }
    return .verifiedAgainstRoot
}
