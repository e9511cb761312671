import OIDC
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

extension PublicKeyCredentialRequestOptionsJSON {
    /// Its `Encodable` form as a JSON value, for `JSONAPI.json(_:)`: a passkey sign-in starts
    /// with these options. Same members, same spelling (a test compares the bytes).
    var json: JSONValue {
        var object: [String: JSONValue] = ["challenge": .string(challenge)]
        if let timeout { object["timeout"] = .int(Int(timeout)) }
        if let rpId { object["rpId"] = .string(rpId) }
        if let allowCredentials { object["allowCredentials"] = .array(allowCredentials.map(\.json)) }
        if let userVerification { object["userVerification"] = .string(userVerification.rawValue) }
        if let hints { object["hints"] = .array(hints.map { .string($0.rawValue) }) }
        if let extensions {
            object["extensions"] = .object(extensions.credProps.map { ["credProps": .bool($0)] } ?? [:])
        }
        return .object(object)
    }
}

extension PublicKeyCredentialDescriptorJSON {
    var json: JSONValue {
        var object: [String: JSONValue] = ["type": .string(type), "id": .string(id)]
        if let transports { object["transports"] = .array(transports.map(JSONValue.string)) }
        return .object(object)
    }
}
