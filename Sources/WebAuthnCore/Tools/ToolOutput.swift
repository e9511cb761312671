import Crypto
import Foundation

/// Output helpers shared by the offline tools: pretty JSON with sorted keys, so the
/// output is stable for diffs and tests.
enum ToolOutput {
    static func json(_ object: [String: Any]) -> String {
        guard JSONSerialization.isValidJSONObject(object),
            let data = try? JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else { return #"{"error": "output could not be encoded"}"# }
        return String(decoding: data, as: UTF8.self)
    }

    static func unusable(_ message: String) -> (exitCode: Int32, output: String) {
        (2, json(["error": message]))
    }

    /// A 16-byte AAGUID as a UUID string.
    static func uuid(_ bytes: [UInt8]) -> String {
        guard bytes.count == 16 else { return Hex.encode(bytes) }
        let hex = Hex.encode(bytes)
        var parts: [Substring] = []
        var rest = Substring(hex)
        for length in [8, 4, 4, 4, 12] {
            parts.append(rest.prefix(length))
            rest = rest.dropFirst(length)
        }
        return parts.joined(separator: "-")
    }

    static func flagNames(_ flags: AuthenticatorFlags) -> [String] {
        var names: [String] = []
        if flags.contains(.userPresent) { names.append("UP") }
        if flags.contains(.userVerified) { names.append("UV") }
        if flags.contains(.backupEligible) { names.append("BE") }
        if flags.contains(.backedUp) { names.append("BS") }
        if flags.contains(.attestedCredentialData) { names.append("AT") }
        if flags.contains(.extensionData) { names.append("ED") }
        return names
    }

    static func iso8601(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

    /// The verification step a failure belongs to, for `{"step": …}`.
    static func step(_ error: WebAuthnError) -> String {
        switch error {
        case .invalidBase64URL(let field): "decode.\(field)"
        case .malformedCBOR, .malformedAttestationObject: "decode.attestationObject"
        case .malformedClientData: "clientData.parse"
        case .malformedAuthenticatorData: "authenticatorData.parse"
        case .invalidCredentialPublicKey, .unsupportedAlgorithm: "credentialPublicKey"
        case .credentialTypeInvalid: "credential.type"
        case .credentialIDMismatch, .credentialIDTooLong: "credential.id"
        case .clientDataTypeMismatch: "clientData.type"
        case .challengeMismatch: "clientData.challenge"
        case .originNotAllowed: "clientData.origin"
        case .crossOriginNotAllowed: "clientData.crossOrigin"
        case .topOriginNotAllowed: "clientData.topOrigin"
        case .rpIDHashMismatch: "authenticatorData.rpIdHash"
        case .userPresentFlagNotSet: "authenticatorData.flags.UP"
        case .userVerificationRequired: "authenticatorData.flags.UV"
        case .backupStateInvalid, .backupEligibilityChanged: "authenticatorData.flags.BE-BS"
        case .attestedCredentialDataMissing: "authenticatorData.attestedCredentialData"
        case .algorithmNotAllowed: "credentialPublicKey.algorithm"
        case .attestationFormatUnsupported: "attestation.format"
        case .attestationInvalid: "attestation.statement"
        case .attestationChainInvalid, .attestationTrustAnchorMissing: "attestation.trust"
        case .signatureInvalid: "assertion.signature"
        case .userHandleMismatch, .userHandleMissing: "assertion.userHandle"
        }
    }

    /// A short description of a credential public key.
    static func keyDescription(_ key: COSEKey) -> String {
        switch key {
        case .ec2P256: "EC2 P-256"
        case .rsa(let n, _, _): "RSA \(n.drop { $0 == 0 }.count * 8)"
        case .okpEd25519: "OKP Ed25519"
        }
    }
}
