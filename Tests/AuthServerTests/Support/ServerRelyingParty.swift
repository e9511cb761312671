@testable import WebAuthnTestSupport

/// The relying party of the test server: RP ID `localhost` and the origin of the issuer
/// that `TestApplication` configures.
enum ServerRP {
    static let id = "localhost"
    static let origin = "http://localhost:8080"
}

extension SoftwareAuthenticator {
    /// A registration for the test server's relying party.
    func serverRegistration(challenge: [UInt8]) -> RegistrationBuilder {
        makeRegistration(challenge: challenge, origin: ServerRP.origin, rpID: ServerRP.id)
    }

    /// An assertion for the test server's relying party.
    func serverAssertion(challenge: [UInt8]) -> AssertionBuilder {
        makeAssertion(challenge: challenge, origin: ServerRP.origin, rpID: ServerRP.id)
    }
}
