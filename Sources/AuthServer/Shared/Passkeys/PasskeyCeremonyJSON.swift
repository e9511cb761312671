import WebAuthnCore

// The JSON bodies the passkey ceremonies of the API share (registration from the account
// page and in a recovery, re-authentication): a challenge handed out with its options, and
// the browser's response sent back with the challenge's id.

/// The answer to a ceremony's start: `{"challenge_id": …, "options": …}`.
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

/// The body of a registration finish (`/api/passkeys/registration/finish`,
/// `/api/recovery/passkey/finish`): the challenge's id, the new credential and, optionally, the
/// name its holder gave it.
struct PasskeyRegistrationFinishRequest: Decodable {
    var challengeID: String
    var credential: RegistrationResponseJSON
    var name: String?

    enum CodingKeys: String, CodingKey {
        case challengeID = "challenge_id"
        case credential
        case name
    }
}

/// The body of an assertion finish: the challenge's id, the assertion and, for a sign-in,
/// where to go next.
struct PasskeyAssertionFinishRequest: Decodable {
    var challengeID: String
    var credential: AuthenticationResponseJSON
    var returnTo: String?

    enum CodingKeys: String, CodingKey {
        case challengeID = "challenge_id"
        case credential
        case returnTo = "return_to"
    }
}
