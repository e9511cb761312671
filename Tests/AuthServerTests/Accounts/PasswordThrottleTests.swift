import Crypto
import Foundation
import Synchronization
import Testing
import WebAuthnCore

@testable import AuthServer
@testable import WebAuthnTestSupport

/// Password guessing: each guess is counted before the password is checked, a locked password
/// stays locked only briefly (longer each time), and passkeys and recovery keep working.
@Suite("Password guess throttling")
struct PasswordThrottleTests {
    static let password = "a long passphrase"

    static func app(accountMaxFailures: Int, windowSeconds: Int = 600) throws -> TestApplication {
        try TestApplication {
            $0.signInThrottle.accountMaxFailures = accountMaxFailures
            $0.signInThrottle.addressMaxFailures = 10_000
            $0.signInThrottle.windowSeconds = windowSeconds
            $0.http.workerThreads = 16
        }
    }

    static func wrongPasswordChecks(_ app: TestApplication) throws -> Int {
        try app.sql(
            """
            SELECT count(*) AS n FROM audit_events
            WHERE event = 'sign_in.failed' AND detail->>'reason' = 'wrong_password'
            """
        ).first?.decode("n", as: Int.self) ?? -1
    }

    static func scopes(_ app: TestApplication) throws -> [String] {
        try app.sql("SELECT scope FROM sign_in_failures ORDER BY scope").map {
            try $0.decode("scope", as: String.self)
        }
    }

    /// Moves the account's last lock-out `ago` seconds into the past, as if that time had passed
    /// (the window restarts when a lock-out ends).
    static func endLockout(_ app: TestApplication, ago seconds: Int = 1) throws {
        try app.sql(
            """
            UPDATE sign_in_failures
            SET locked_until = now() - make_interval(secs => \(seconds)::float8),
                window_started_at = now() - make_interval(secs => \(seconds)::float8)
            WHERE scope = 'account'
            """)
    }

    /// Wrong guesses until the password is locked; the Retry-After of the refusal.
    static func lockOut(_ app: TestApplication, _ email: String, limit: Int) throws -> Int {
        for _ in 0..<limit {
            #expect(try TestAgent(app).signIn(email: email, password: "wrong password").status == 401)
        }
        let refused = try TestAgent(app).signIn(email: email, password: "wrong password")
        #expect(refused.status == 429)
        return try #require(refused.header("Retry-After").flatMap(Int.init))
    }

    @Test func parallelGuessesCannotOutrunTheAccountLimit() throws {
        let app = try Self.app(accountMaxFailures: 3)
        let email = TestAgent.uniqueEmail()
        let signUp = try TestAgent(app).signUp(email: email, password: Self.password)
        let accountID = try #require(UUID(uuidString: signUp.json["account_id"] as? String ?? ""))
        // A stored hash with production-like cost (verification reads the cost from the hash)
        // keeps each check busy long enough for the guesses to overlap.
        let costly = try PasswordHasher(parameters: .init(memoryKiB: 32_768, iterations: 2)).hash(
            Self.password)
        try app.sql(
            "UPDATE password_credentials SET password_hash = \(costly) WHERE account_id = \(accountID)")
        let agents = UncheckedBox(
            try (0..<24).map { _ in
                let agent = TestAgent(app)
                try agent.prepareCSRF()
                return agent
            })
        // One thread per guess, released together, as many clients guessing at once.
        let statuses = Mutex<[Int]>([])
        let group = DispatchGroup()
        let gate = DispatchSemaphore(value: 0)
        for index in agents.value.indices {
            group.enter()
            Thread.detachNewThread {
                gate.wait()
                let status =
                    (try? agents.value[index].signIn(email: email, password: "wrong password \(index)").status)
                    ?? -1
                statuses.withLock { $0.append(status) }
                group.leave()
            }
        }
        for _ in agents.value.indices { gate.signal() }
        group.wait()
        let seen = statuses.withLock { $0 }
        #expect(seen.filter { $0 == 401 }.count == 3, "\(seen)")
        #expect(seen.filter { $0 == 429 }.count == 21, "\(seen)")
        #expect(try Self.wrongPasswordChecks(app) == 3)
    }

    @Test func aStrangersGuessesLockThePasswordOnlyBriefly() throws {
        let app = try Self.app(accountMaxFailures: 2, windowSeconds: 3_600)
        let email = TestAgent.uniqueEmail()
        try TestAgent(app).signUp(email: email, password: Self.password)
        let wait = try Self.lockOut(app, email, limit: 2)
        #expect((55...60).contains(wait), "Retry-After \(wait)")
        // Locked: even the right password is refused without being checked.
        let checks = try Self.wrongPasswordChecks(app)
        #expect(try TestAgent(app).signIn(email: email, password: Self.password).status == 429)
        #expect(try Self.wrongPasswordChecks(app) == checks)
        // Once the minute has passed the owner signs in, long before the hour's window ends.
        try Self.endLockout(app)
        #expect(try TestAgent(app).signIn(email: email, password: Self.password).status == 200)
    }

    @Test func repeatedLockoutsDoubleUpToTheCapAndDecayAfterAQuietPeriod() throws {
        let app = try Self.app(accountMaxFailures: 3, windowSeconds: 600)
        let email = TestAgent.uniqueEmail("ghost")
        func near(_ wait: Int, _ expected: Int) -> Bool { wait <= expected && wait >= expected - 5 }
        #expect(near(try Self.lockOut(app, email, limit: 3), 60))
        // A lock-out does not refill the budget: after it one more guess, then a longer one.
        var waits: [Int] = []
        for _ in 0..<5 {
            try Self.endLockout(app)
            waits.append(try Self.lockOut(app, email, limit: 1))
        }
        #expect(zip(waits, [120, 240, 480, 900, 900]).allSatisfy(near), "\(waits)")
        // A whole window after the last lock-out gives the budget back, not the short lock-out.
        try Self.endLockout(app, ago: 601)
        #expect(near(try Self.lockOut(app, email, limit: 3), 900))
        // An hour without a lock-out forgets the earlier ones.
        try Self.endLockout(app, ago: 3_601)
        #expect(near(try Self.lockOut(app, email, limit: 3), 60))
    }

    @Test func aLockedPasswordSaysThatPasskeysAndRecoveryStillWork() throws {
        let app = try Self.app(accountMaxFailures: 1)
        let email = TestAgent.uniqueEmail()
        try TestAgent(app).signUp(email: email, password: Self.password)
        _ = try Self.lockOut(app, email, limit: 1)
        let json = try TestAgent(app).signIn(email: email, password: Self.password)
        #expect(json.status == 429)
        #expect(json.error == "too_many_attempts")
        let message = try #require(json.json["message"] as? String)
        #expect(message.contains("passkey") && message.contains("Can't sign in?"), "\(message)")

        let english = try TestAgent(app).postForm("/signin", [("email", email), ("password", Self.password)])
        #expect(english.status == 429)
        #expect(english.header("Retry-After") != nil)
        #expect(english.text.contains("sign in with a passkey"))
        let japanese = try TestAgent(app).postForm(
            "/signin", [("email", email), ("password", Self.password), ("ui_locales", "ja")])
        #expect(japanese.status == 429)
        #expect(japanese.text.contains("パスキーでのログイン"))
        #expect(japanese.text.contains("サインインできませんか？"))
    }

    @Test func aLockedPasswordLeavesPasskeySignInOpen() throws {
        let app = try Self.app(accountMaxFailures: 1)
        let email = TestAgent.uniqueEmail()
        let owner = TestAgent(app)
        let signUp = try owner.signUp(email: email, password: Self.password)
        let accountID = try #require(UUID(uuidString: signUp.json["account_id"] as? String ?? ""))
        let authenticator = try SoftwareAuthenticator()
        #expect(try owner.registerPasskey(authenticator).status == 201)
        let handle: [UInt8] = try #require(
            try app.sql("SELECT webauthn_user_handle FROM accounts WHERE id = \(accountID)").first?.decode(
                "webauthn_user_handle"))
        _ = try Self.lockOut(app, email, limit: 1)
        #expect(try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle).status == 200)
    }

    @Test func aLockedPasswordLeavesRecoveryOpenAndTheRecoveredPasswordWorksAtOnce() throws {
        let app = try Self.app(accountMaxFailures: 1)
        let (email, _) = try Recovery.verifiedAccount(app)
        _ = try Self.lockOut(app, email, limit: 1)
        let agent = TestAgent(app)
        try Recovery.open(app, agent, email: email)
        #expect(
            try agent.post("/api/recovery/password", ["new_password": "a brand new passphrase"]).status == 200
        )
        #expect(try TestAgent(app).signIn(email: email, password: "a brand new passphrase").status == 200)
    }

    @Test func currentPasswordGuessesOfAPasswordChangeAreThrottled() throws {
        let app = try Self.app(accountMaxFailures: 3)
        let email = TestAgent.uniqueEmail()
        let agent = TestAgent(app)
        let signUp = try agent.signUp(email: email, password: Self.password)
        let accountID = try #require(UUID(uuidString: signUp.json["account_id"] as? String ?? ""))
        func storedHash() throws -> String? {
            try app.sql("SELECT password_hash FROM password_credentials WHERE account_id = \(accountID)")
                .first?.decode("password_hash")
        }
        let before = try storedHash()
        for index in 0..<3 {
            let wrong = try agent.post(
                "/api/password",
                ["current_password": "wrong password \(index)", "new_password": "another long passphrase"])
            #expect(wrong.status == 403)
            #expect(wrong.error == "wrong_password")
        }
        let refused = try agent.post(
            "/api/password", ["current_password": Self.password, "new_password": "another long passphrase"])
        #expect(refused.status == 429)
        #expect(refused.error == "too_many_attempts")
        #expect(refused.header("Retry-After") != nil)
        #expect(try storedHash() == before)
        // The same budget as the sign-in form: guesses here lock the password there too.
        #expect(try TestAgent(app).signIn(email: email, password: Self.password).status == 429)
    }

    /// A right password gives back only the one check it used at the client address: an
    /// attacker's own account cannot reset the count of guesses against others.
    @Test func ownSuccessfulSignInsDoNotResetTheAddressCount() throws {
        let app = try TestApplication {
            $0.signInThrottle = .init(accountMaxFailures: 100, addressMaxFailures: 3, windowSeconds: 600)
        }
        let own = TestAgent.uniqueEmail()
        try TestAgent(app).signUp(email: own, password: Self.password)
        for _ in 0..<2 {
            #expect(
                try TestAgent(app).signIn(email: TestAgent.uniqueEmail(), password: "wrong password").status
                    == 401)
            #expect(try TestAgent(app).signIn(email: own, password: Self.password).status == 200)
        }
        #expect(
            try TestAgent(app).signIn(email: TestAgent.uniqueEmail(), password: "wrong password").status
                == 401)
        let refused = try TestAgent(app).signIn(email: TestAgent.uniqueEmail(), password: "wrong password")
        #expect(refused.status == 429)
    }

    /// An owner's account (password "owner passphrase 1"), and a squatter signed in to an account
    /// that signed up with the same address (unverified, so sign-in never reaches it).
    static func ownerAndSquatter(_ app: TestApplication) throws -> (email: String, squatter: TestAgent) {
        let email = TestAgent.uniqueEmail("owner")
        #expect(try TestAgent(app).signUp(email: email, password: "owner passphrase 1").status == 201)
        let squatter = TestAgent(app)
        #expect(try squatter.signUp(email: email, password: Self.password).status == 201)
        return (email, squatter)
    }

    /// An attacker who signed up with the owner's address (unverified, so sign-in never reaches
    /// their account) shares the address's count of guesses. Their own right password, given to
    /// re-authenticate or to change it, must not wipe the owner's count: else they could guess
    /// the owner's password a few times, reset, and guess again without ever being locked.
    @Test func aSquattersOwnRightPasswordDoesNotResetTheOwnersCount() throws {
        let app = try Self.app(accountMaxFailures: 5)
        let (email, squatter) = try Self.ownerAndSquatter(app)
        for (step, guesses) in [("reauthenticate", 2), ("password change", 1)] {
            for _ in 0..<guesses {
                #expect(try TestAgent(app).signIn(email: email, password: "wrong password").status == 401)
            }
            let own =
                step == "reauthenticate"
                ? try squatter.post("/api/reauthenticate/password", ["password": Self.password])
                : try squatter.post(
                    "/api/password", ["current_password": Self.password, "new_password": "a new passphrase"])
            #expect((200..<300).contains(own.status), "\(step): \(own.status)")
        }
        // Five checks of the address's budget of five (three wrong guesses, the squatter's two):
        // the next one locks the password, whatever the squatter proved about theirs.
        #expect(try TestAgent(app).signIn(email: email, password: "owner passphrase 1").status == 429)
        // The owner's own right password, once the lock-out ended, starts the count again.
        try Self.endLockout(app)
        #expect(try TestAgent(app).signIn(email: email, password: "owner passphrase 1").status == 200)
        #expect(try app.sql("SELECT 1 FROM sign_in_failures WHERE scope = 'account'").isEmpty)
    }

    /// The attack: a squatter who signed up with the owner's address locks the owner's
    /// password by guessing, then deletes their own account. The deletion removed the counters
    /// kept under every address the deleted account held, the owner's lock-out, sign-up and
    /// recovery budgets among them, so the squatter could sign up again and guess on for ever.
    @Test func aSquattersDeletionKeepsTheCountsOfTheAddressItHeld() throws {
        let app = try Self.app(accountMaxFailures: 5)
        let (email, squatter) = try Self.ownerAndSquatter(app)
        _ = try Self.lockOut(app, email, limit: 5)
        func signUps() throws -> Int? {
            try app.sql("SELECT count(*) AS n FROM sign_up_attempts WHERE scope = 'email'").first?.decode("n")
        }
        let before = (try Self.scopes(app), try signUps())
        #expect(before.1 == 1)
        let deleted = try squatter.send("DELETE", "/api/account", json: ["email": email])
        #expect(deleted.status == 200)
        #expect(try Self.scopes(app) == before.0)
        #expect(try signUps() == before.1)
        #expect(try TestAgent(app).signIn(email: email, password: "owner passphrase 1").status == 429)
    }

    /// A password locked while the window started more than a day ago stays until its
    /// lock-out has long ended.
    @Test func maintenanceKeepsALockOutUntilItHasLongEnded() throws {
        let app = try Self.app(accountMaxFailures: 1)
        let email = TestAgent.uniqueEmail()
        _ = try Self.lockOut(app, email, limit: 1)
        try app.sql(
            """
            UPDATE sign_in_failures SET window_started_at = now() - interval '2 days',
                locked_until = CASE WHEN scope = 'account' THEN now() + interval '1 hour' ELSE locked_until END
            """)
        _ = try Maintenance.runOnce(pool: app.database.pool, auditRetentionDays: 365)
        #expect(try Self.scopes(app) == ["account"])
        try app.sql("UPDATE sign_in_failures SET locked_until = now() - interval '25 hours'")
        _ = try Maintenance.runOnce(pool: app.database.pool, auditRetentionDays: 365)
        #expect(try Self.scopes(app).isEmpty)
    }

    @Test func lockoutSettingsAreReadAndValidated() throws {
        let base = #"{"issuer": "https://id.example.com", "clients": [], "sign_in_throttle": "#
        let loaded = try #require(
            ConfigurationLoader.check(
                data: Data(
                    (base
                        + #"{"lockout_seconds": 30, "max_lockout_seconds": 600, "lockout_decay_seconds": 7200}}"#)
                        .utf8)
            ).configuration)
        #expect(loaded.signInThrottle.lockoutSeconds == 30)
        #expect(loaded.signInThrottle.maxLockoutSeconds == 600)
        #expect(loaded.signInThrottle.lockoutDecaySeconds == 7_200)
        let defaults = Configuration.SignInThrottleSettings()
        #expect(defaults.lockoutSeconds == 60)
        #expect(defaults.maxLockoutSeconds == 900)
        #expect(defaults.lockoutDecaySeconds == 3_600)

        let problems = ConfigurationLoader.check(
            data: Data(
                (base + #"{"lockout_seconds": 0, "max_lockout_seconds": 90000, "lockout_decay_seconds": 10}}"#)
                    .utf8)
        ).problems.map(\.description)
        #expect(problems.contains { $0.contains("$.sign_in_throttle.lockout_seconds") })
        #expect(problems.contains { $0.contains("$.sign_in_throttle.max_lockout_seconds") })
        #expect(problems.contains { $0.contains("$.sign_in_throttle.lockout_decay_seconds") })
        let inverted = ConfigurationLoader.check(
            data: Data((base + #"{"lockout_seconds": 600, "max_lockout_seconds": 60}}"#).utf8)
        ).problems.map(\.description)
        #expect(inverted.count == 1)
        #expect(inverted.first?.contains("must be at least lockout_seconds") == true, "\(inverted)")
    }
}
