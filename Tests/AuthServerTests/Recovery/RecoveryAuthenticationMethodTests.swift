import Crypto
import Foundation
import OIDC
import Testing
import WebAuthnCore

@testable import AuthServer
@testable import WebAuthnTestSupport

/// A sign-in completed through email recovery proved only control of the mailbox: tokens
/// issued on its session say `amr` ["email"], never a passkey's `hwk`/`swk`/`user`/`mfa` or `pwd`.
@Suite("Account recovery: authentication methods")
struct RecoveryAuthenticationMethodTests {
    enum Finish: String, CaseIterable { case password, passkey }

    /// Completes a recovery the agent has opened, by setting a password or registering a passkey.
    static func finish(_ finish: Finish, _ agent: TestAgent) throws -> TestAgent.Reply {
        switch finish {
        case .password:
            return try agent.post("/api/recovery/password", ["new_password": "a brand new passphrase"])
        case .passkey:
            let start = try agent.post("/api/recovery/passkey/start")
            let options = try start.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
            let credential = try SoftwareAuthenticator().serverRegistration(
                challenge: try Base64URL.decode(options.challenge)
            ).json()
            return try agent.postEncodable(
                "/api/recovery/passkey/finish",
                RegistrationFinish(
                    challengeID: start.json["challenge_id"] as? String ?? "", credential: credential))
        }
    }

    @Test(arguments: Finish.allCases)
    func aRecoverySignInClaimsOnlyEmailInTheTokens(_ method: Finish) throws {
        let app = try OAuthFixtures.app()
        let (email, _) = try Recovery.verifiedAccount(app)
        let agent = TestAgent(app)
        try Recovery.open(app, agent, email: email)
        let finished = try Self.finish(method, agent)
        #expect(finished.status == 200)
        let sessionID = try #require(UUID(uuidString: finished.json["session_id"] as? String ?? ""))
        #expect(
            try app.sql("SELECT amr FROM authentication_sessions WHERE id = \(sessionID)").first?.decode(
                "amr", as: [String].self) == ["email"])

        let (_, tokens) = try app.signedInFlow(AuthorizationAttempt(), agent: agent)
        let idToken = try app.claims(of: try #require(tokens.idToken), type: "JWT")
        #expect(idToken["amr"] == .array([.string("email")]))
        // Proof of a mailbox only: the basic class, whatever the recovery then set up.
        #expect(idToken["acr"] == .string("basic"))
        let access = try app.claims(of: tokens.accessToken, type: "at+jwt")
        #expect(access["amr"] == .array([.string("email")]))
        #expect(access["acr"] == .string("basic"))
    }
}
