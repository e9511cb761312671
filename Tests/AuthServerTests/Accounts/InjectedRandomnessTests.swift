import Crypto
import Foundation
import Synchronization
import Testing
import WebAuthnCore

@testable import AuthServer

/// The flows draw challenges, ids and user handles from the application's `TimeAndRandomness`,
/// never from the system directly: an application built with numbered draws hands out exactly
/// those values and stores them.
@Suite struct InjectedRandomnessTests {
    /// Every draw fills its bytes with its own number: 1, then 2, …
    static func numberedDraws() -> TimeAndRandomness {
        let draws = Atomic<Int>(0)
        return TimeAndRandomness(
            now: { Date() },
            randomBytes: { count in
                [UInt8](
                    repeating: UInt8(truncatingIfNeeded: draws.add(1, ordering: .relaxed).newValue),
                    count: count)
            })
    }

    @Test func aPasskeySignInChallengeIsTheDrawnOneAndIsStoredUnderTheDrawnID() throws {
        let app = try TestApplication(system: Self.numberedDraws())
        let start = try TestAgent(app).post("/api/passkeys/authentication/start")
        #expect(start.status == 200)
        let text = try #require(start.json["challenge_id"] as? String)
        let id = try #require(UUID(uuidString: text))
        let options = try start.decode(PublicKeyCredentialRequestOptionsJSON.self, at: "options")
        let challenge = try Base64URL.decode(options.challenge)
        #expect(Set(challenge).count == 1)
        let stored = try #require(
            try app.sql("SELECT challenge FROM passkey_authentication_challenges WHERE id = \(id)").first)
        #expect(try stored.decode("challenge", as: [UInt8].self) == challenge)
    }

    @Test func aPasskeySignUpDrawsItsUserHandleAndChallenge() throws {
        let app = try TestApplication(system: Self.numberedDraws())
        let start = try TestAgent(app).post(
            "/api/passkeys/signup/start", ["email": TestAgent.uniqueEmail(), "display_name": "Ann"])
        #expect(start.status == 200)
        let options = try start.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
        let handle = try Base64URL.decode(options.user.id)
        let challenge = try Base64URL.decode(options.challenge)
        #expect(Set(handle).count == 1 && Set(challenge).count == 1)
        #expect(handle != challenge)
    }
}
