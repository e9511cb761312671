import WebAuthnCore

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

/// The name recovery still decodes a registration finish by.
enum AccountAPI {
    typealias RegistrationFinishRequest = PasskeyRegistrationFinishRequest
}
