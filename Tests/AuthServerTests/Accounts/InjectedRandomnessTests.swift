import Crypto
import Foundation
import Postgres
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

    /// A time-ordered token's row key is its time's 6 bytes, then 26 bytes of its SHA-256; any
    /// other text (a token from before, an upper-case time, a length off by one) its whole SHA-256.
    @Test func aTimeOrderedTokensKeyIsItsTimeThenItsDigestAndAnythingElsesItsDigest() throws {
        let drawn = Base64URL.encode([UInt8](repeating: 7, count: 32))
        let token = "019adc5be1f4" + drawn
        func sha(_ text: String) -> [UInt8] { SHA256.hash(data: Array(text.utf8)).bytes }
        #expect(TimeOrderedToken.key(token) == [0x01, 0x9a, 0xdc, 0x5b, 0xe1, 0xf4] + sha(token).prefix(26))
        for other in [
            drawn, "019ADC5BE1F4" + drawn, "019adc5be1f4" + drawn.dropLast(), "019adc5be1g4" + drawn,
        ] {
            #expect(TimeOrderedToken.key(other) == sha(other))
        }
    }

    /// A record's id is a version 7 UUID: the clock's milliseconds, the version, then drawn bits.
    @Test func aRecordIDIsAVersion7UUIDOfTheTime() throws {
        let clock = Mutex(Date(timeIntervalSince1970: 1_764_633_600.5))
        let system = TimeAndRandomness(
            now: { clock.withLock { $0 } }, randomBytes: { [UInt8](repeating: 7, count: $0) })
        let first = system.timeOrderedUUID()
        #expect(first.lowercased == "019adc5b-e1f4-7707-8707-070707070707")
        clock.withLock { $0 += 0.5 }
        let second = system.timeOrderedUUID()
        #expect(second.lowercased.hasPrefix("019adc5b-e3e8-7") && second.lowercased > first.lowercased)
    }

    /// What is written by the thousand (a session, a code, a refresh-token family, a challenge)
    /// gets a time-ordered id; an account, whose id is its `sub`, a random one.
    @Test func sessionsCodesFamiliesAndChallengesAreTimeOrderedAndAccountsRandom() throws {
        let app = try OAuthFixtures.app()
        let (agent, tokens) = try app.signedInFlow()
        #expect(tokens.refreshToken != nil)
        let start = try agent.post("/api/passkeys/authentication/start")
        let challenge = try #require(UUID(uuidString: start.json["challenge_id"] as? String ?? ""))
        let subject = try app.claims(of: try #require(tokens.idToken))["sub"]?.stringValue
        let account = try #require(UUID(uuidString: subject ?? ""))
        func ids(_ query: PostgresQuery) throws -> [UUID] {
            try app.sql(query).map { try $0.decode("id", as: UUID.self) }
        }
        func version(_ id: UUID) -> Character { Array(id.lowercased)[14] }
        #expect(version(account) == "4")
        for table in [
            try ids("SELECT id FROM authentication_sessions WHERE account_id = \(account)"),
            try ids("SELECT id FROM authorization_codes WHERE account_id = \(account)"),
            try ids("SELECT id FROM refresh_token_families WHERE account_id = \(account)"),
            [challenge],
        ] {
            #expect(!table.isEmpty && table.allSatisfy { version($0) == "7" })
        }
    }

    /// A session's cookie is the time, then a drawn token, like a refresh token; its row is keyed
    /// by the time's 6 bytes, then 26 bytes of the token's SHA-256. A cookie from before sessions
    /// carried their time (43 characters, its row keyed by its whole SHA-256) keeps working, and
    /// a cookie with the victim's time and other drawn bytes names no session.
    @Test func aSessionIsKeyedByItsTimeThenItsDigestAndOlderCookiesStillWork() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let token = try #require(agent.cookies["session"])
        #expect(token.utf8.count == 55)
        let key = try TokenEndpointTests.rowKey(token)
        let stored = try app.sql("SELECT token_digest FROM authentication_sessions").map {
            try $0.decode("token_digest", as: [UInt8].self)
        }
        #expect(stored == [key])

        agent.cookies["session"] = String(token.prefix(12)) + Base64URL.encode(SecureRandom.bytes(count: 32))
        #expect(try agent.send("GET", "/api/account").status == 401)

        let older = Base64URL.encode([UInt8](repeating: 3, count: 32))
        try app.sql(
            """
            UPDATE authentication_sessions SET token_digest = \(SHA256.hash(data: Array(older.utf8)).bytes)
            WHERE token_digest = \(key)
            """)
        agent.cookies["session"] = token
        #expect(try agent.send("GET", "/api/account").status == 401)
        agent.cookies["session"] = older
        #expect(try agent.send("GET", "/api/account").status == 200)
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
