/// The names the shared page helpers and sign-in messages had while sign-in, sign-up and
/// sign-out lived in one route group; the types now live in Shared.
typealias PageRoutes = Pages

enum AuthenticationAPI {
    typealias SignedIn = SignedInResponse
    typealias PasskeyUpgrade = PasskeyUpgradeOffer
    typealias ChallengeResponse<Options: Encodable> = PasskeyChallengeResponse<Options>
    typealias PasskeyFinishRequest = PasskeyAssertionRequest
}
