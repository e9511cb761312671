import Foundation
import WebAuthnCore

/// The answer to a ceremony's start: the one-time challenge's id, to send back with the
/// credential, and the options for `navigator.credentials`.
struct PasskeyChallengeResponse<Options: Encodable>: Encodable {
    var challengeID: String
    var options: Options

    enum CodingKeys: String, CodingKey {
        case challengeID = "challenge_id"
        case options
    }
}

/// The conditional passkey creation offered with a password sign-in's answer.
typealias PasskeyUpgradeOffer = PasskeyChallengeResponse<PublicKeyCredentialCreationOptionsJSON>

/// An assertion sent back for a challenge (passkey sign-in, re-authentication).
struct PasskeyAssertionRequest: Decodable {
    var challengeID: String
    var credential: AuthenticationResponseJSON
    var returnTo: String?

    enum CodingKeys: String, CodingKey {
        case challengeID = "challenge_id"
        case credential
        case returnTo = "return_to"
    }
}
