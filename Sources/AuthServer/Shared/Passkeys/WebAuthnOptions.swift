import Crypto
import Foundation
import HTTPServer
import WebAuthnCore

extension AccountServices {
    // MARK: - WebAuthn options

    static let algorithms: [COSEAlgorithmIdentifier] = [.es256, .eddsa, .rs256]

    func creationOptions(
        challenge: [UInt8], userHandle: [UInt8], name: String, displayName: String, exclude: [PasskeyRecord],
        conditional: Bool
    ) -> PublicKeyCredentialCreationOptionsJSON {
        PublicKeyCredentialCreationOptionsJSON(
            rp: RelyingPartyEntity(id: rpID, name: configuration.relyingPartyName),
            user: UserEntityJSON(id: Base64URL.encode(userHandle), name: name, displayName: displayName),
            challenge: Base64URL.encode(challenge),
            pubKeyCredParams: Self.algorithms.map { PublicKeyCredentialParameters(alg: $0) },
            timeout: UInt32(
                (conditional
                    ? configuration.webAuthn.upgradeChallengeLifetimeSeconds
                    : configuration.webAuthn.challengeLifetimeSeconds) * 1000),
            excludeCredentials: exclude.map {
                PublicKeyCredentialDescriptorJSON(
                    id: Base64URL.encode($0.credentialID),
                    transports: $0.transports.isEmpty ? nil : $0.transports)
            },
            authenticatorSelection: AuthenticatorSelectionCriteria(
                residentKey: .required, requireResidentKey: true,
                userVerification: RegistrationMediation(conditional: conditional).userVerification),
            hints: conditional ? nil : [.clientDevice],
            attestation: AttestationConveyancePreference.none,
            extensions: AuthenticationExtensionsClientInputsJSON(credProps: true))
    }

    func requestOptions(challenge: [UInt8]) -> PublicKeyCredentialRequestOptionsJSON {
        PublicKeyCredentialRequestOptionsJSON(
            challenge: Base64URL.encode(challenge),
            timeout: UInt32(configuration.webAuthn.challengeLifetimeSeconds * 1000),
            rpId: rpID, allowCredentials: [], userVerification: .required)
    }

    /// A default name for a new passkey: the provider's, else a generic one.
    static func defaultPasskeyName(_ registration: VerifiedRegistration) -> String {
        PasskeyProviders.name(forAAGUID: registration.aaguid) ?? "Passkey"
    }

    /// A passkey's name, trimmed; nil when empty, longer than `maxLength` code points (what the
    /// column's CHECK counts, not characters) or holding control characters.
    static func cleanName(_ text: String?, maxLength: Int) -> String? {
        guard let text else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.unicodeScalars.count <= maxLength,
            !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return nil }
        return trimmed
    }
}
