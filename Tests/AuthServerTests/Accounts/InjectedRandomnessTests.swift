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

    /// A `jti` starts with the clock's milliseconds in 12 hex digits, so later ones sort after
    /// earlier ones, and ends with a drawn 256-bit token.
    @Test func anAccessTokenIDIsTheTimeThenADrawnToken() throws {
        let clock = Mutex(Date(timeIntervalSince1970: 1_764_633_600.5))
        let system = TimeAndRandomness(
            now: { clock.withLock { $0 } }, randomBytes: { [UInt8](repeating: 7, count: $0) })
        let first = system.timeOrderedToken()
        #expect(first == "019adc5be1f4" + Base64URL.encode([UInt8](repeating: 7, count: 32)))
        clock.withLock { $0 += 0.5 }
        let second = system.timeOrderedToken()
        #expect(second.hasPrefix("019adc5be3e8") && second > first)
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
