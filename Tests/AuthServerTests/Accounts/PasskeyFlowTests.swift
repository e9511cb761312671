import Crypto
import Foundation
import Testing
import WebAuthnCore

@testable import AuthServer
@testable import WebAuthnTestSupport

@Suite("Passkey registration, sign-in and sign-up")
struct PasskeyFlowTests {
    struct Upgrade: Decodable {
        var challengeID: String
        var options: PublicKeyCredentialCreationOptionsJSON

        enum CodingKeys: String, CodingKey {
            case challengeID = "challenge_id"
            case options
        }
    }

    /// A signed-in agent with a password account, and that account's WebAuthn user handle.
    static func signedIn(_ app: TestApplication, email: String = TestAgent.uniqueEmail()) throws -> (
        TestAgent, [UInt8]
    ) {
        let agent = TestAgent(app)
        #expect(try agent.signUp(email: email, password: "a long passphrase").status == 201)
        let account = try agent.send("GET", "/api/account")
        let signal = try #require(account.json["signal"] as? [String: Any])
        return (agent, try Base64URL.decode(try #require(signal["userId"] as? String)))
    }

    @Test func modalRegistrationThenPasskeySignIn() throws {
        let app = try TestApplication()
        let (agent, handle) = try Self.signedIn(app)
        let authenticator = try SoftwareAuthenticator()
        let registered = try agent.registerPasskey(authenticator)
        #expect(registered.status == 201)
        #expect(registered.json["credential_id"] as? String == Base64URL.encode(authenticator.credentialID))
        #expect(handle.count == 32)

        let browser = TestAgent(app)
        let signedIn = try browser.signInWithPasskey(authenticator, userHandle: handle)
        #expect(signedIn.status == 200)
        let sessions = try app.sql(
            "SELECT amr FROM authentication_sessions WHERE id = \(try #require(UUID(uuidString: signedIn.json["session_id"] as? String ?? "")))"
        )
        #expect(try sessions.first?.decode("amr", as: [String].self) == ["hwk", "user", "mfa"])
        let list = try browser.send("GET", "/api/passkeys")
        let passkeys = try #require(list.json["passkeys"] as? [[String: Any]])
        #expect(passkeys.count == 1)
        #expect(passkeys.first?["last_used_at"] is String)
    }

    /// WebAuthn §7.1 step 20: the key's algorithm must be one the options offered
    /// (`pubKeyCredParams`: ES256, EdDSA, RS256). A PS256 key was never asked for.
    @Test func registrationRefusesAnAlgorithmTheOptionsDidNotOffer() throws {
        let app = try TestApplication()
        let (agent, _) = try Self.signedIn(app)
        let start = try agent.post("/api/passkeys/registration/start")
        let offered = try start.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
            .pubKeyCredParams.map(\.alg)
        #expect(offered == AccountServices.algorithms)
        let reply = try agent.registerPasskey(try SoftwareAuthenticator(algorithm: .ps256))
        #expect(reply.status == 400)
        #expect(reply.error == "passkey_verification_failed")
        #expect(app.logBuffer.text.contains("reason=algorithmNotAllowed"))
        #expect(try agent.registerPasskey(try SoftwareAuthenticator(algorithm: .rs256)).status == 201)
    }

    @Test func modalRegistrationRefusesUPZero() throws {
        let app = try TestApplication()
        let (agent, _) = try Self.signedIn(app)
        let reply = try agent.registerPasskey(try SoftwareAuthenticator(), up: false)
        #expect(reply.status == 400)
        #expect(reply.error == "passkey_verification_failed")
        #expect(reply.json["message"] as? String == "The passkey could not be verified.")
        #expect(
            app.logBuffer.text.contains(
                "event=failed step=registration.verifyCredential reason=userPresentFlagNotSet"))
        #expect(
            try agent.send("GET", "/api/passkeys").json["passkeys"] as? [Any] == nil
                || (try agent.send("GET", "/api/passkeys").json["passkeys"] as? [Any])?.isEmpty == true)
    }

    @Test func conditionalUpgradeAcceptsUPZeroForTheAccountThatJustSignedIn() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        _ = try Self.signedIn(app, email: email)
        let agent = TestAgent(app)
        let signIn = try agent.signIn(email: email, password: "a long passphrase")
        let upgrade = try #require(signIn.json["passkey_upgrade"] as? [String: Any])
        let creation = try signIn.decode(Upgrade.self, at: "passkey_upgrade").options
        #expect(creation.authenticatorSelection?.userVerification == .preferred)
        let authenticator = try SoftwareAuthenticator()
        let credential = try authenticator.serverRegistration(
            challenge: try Base64URL.decode(creation.challenge)
        )
        .flags(up: false, uv: false).json()
        let finish = try agent.postEncodable(
            "/api/passkeys/registration/finish",
            RegistrationFinish(
                challengeID: try #require(upgrade["challenge_id"] as? String), credential: credential))
        #expect(finish.status == 201)
    }

    @Test func anUpgradeChallengeCannotBeUsedByAnotherAccount() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        _ = try Self.signedIn(app, email: email)
        let victim = TestAgent(app)
        let signIn = try victim.signIn(email: email, password: "a long passphrase")
        let upgrade = try #require(signIn.json["passkey_upgrade"] as? [String: Any])
        let challengeID = try #require(upgrade["challenge_id"] as? String)
        let challenge = try Base64URL.decode(
            try #require((upgrade["options"] as? [String: Any])?["challenge"] as? String))

        let (attacker, _) = try Self.signedIn(app)
        let credential = try SoftwareAuthenticator().serverRegistration(challenge: challenge).flags(
            up: false, uv: false
        ).json()
        let reply = try attacker.postEncodable(
            "/api/passkeys/registration/finish",
            RegistrationFinish(challengeID: challengeID, credential: credential))
        #expect(reply.status == 400)
        #expect(reply.error == "challenge_invalid")
    }

    @Test func registrationChallengesAreSingleUseAndExpire() throws {
        let app = try TestApplication()
        let (agent, _) = try Self.signedIn(app)
        let start = try agent.post("/api/passkeys/registration/start")
        let challengeID = try #require(start.json["challenge_id"] as? String)
        let options = try start.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
        let credential = try SoftwareAuthenticator().serverRegistration(
            challenge: try Base64URL.decode(options.challenge)
        ).json()
        let body = RegistrationFinish(challengeID: challengeID, credential: credential)
        #expect(try agent.postEncodable("/api/passkeys/registration/finish", body).status == 201)
        let replay = try agent.postEncodable("/api/passkeys/registration/finish", body)
        #expect(replay.status == 400)
        #expect(replay.error == "challenge_invalid")

        let second = try agent.post("/api/passkeys/registration/start")
        let secondID = try #require(second.json["challenge_id"] as? String)
        let secondOptions = try second.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
        try app.sql(
            "UPDATE passkey_registration_challenges SET expires_at = now() - interval '1 second' WHERE id = \(try #require(UUID(uuidString: secondID)))"
        )
        let late = try SoftwareAuthenticator().serverRegistration(
            challenge: try Base64URL.decode(secondOptions.challenge)
        ).json()
        let expired = try agent.postEncodable(
            "/api/passkeys/registration/finish", RegistrationFinish(challengeID: secondID, credential: late))
        #expect(expired.error == "challenge_invalid")
    }

    @Test func registrationNeedsASession() throws {
        let app = try TestApplication()
        let reply = try TestAgent(app).post("/api/passkeys/registration/start")
        #expect(reply.status == 401)
        #expect(reply.error == "not_signed_in")
    }

    @Test func authenticationChallengesAreSingleUseAndExpire() throws {
        let app = try TestApplication()
        let (agent, handle) = try Self.signedIn(app)
        let authenticator = try SoftwareAuthenticator()
        #expect(try agent.registerPasskey(authenticator).status == 201)

        let browser = TestAgent(app)
        let start = try browser.post("/api/passkeys/authentication/start")
        let challengeID = try #require(start.json["challenge_id"] as? String)
        let options = try start.decode(PublicKeyCredentialRequestOptionsJSON.self, at: "options")
        #expect(options.allowCredentials?.isEmpty == true)
        #expect(options.rpId == "localhost")
        let assertion = try authenticator.serverAssertion(challenge: try Base64URL.decode(options.challenge))
            .userHandle(handle).json()
        let body = AuthenticationFinish(challengeID: challengeID, credential: assertion)
        #expect(try browser.postEncodable("/api/passkeys/authentication/finish", body).status == 200)
        let replay = try browser.postEncodable("/api/passkeys/authentication/finish", body)
        #expect(replay.status == 400)
        #expect(replay.error == "challenge_invalid")

        let next = try browser.post("/api/passkeys/authentication/start")
        let nextID = try #require(next.json["challenge_id"] as? String)
        let nextOptions = try next.decode(PublicKeyCredentialRequestOptionsJSON.self, at: "options")
        try app.sql(
            "UPDATE passkey_authentication_challenges SET expires_at = now() - interval '1 second' WHERE id = \(try #require(UUID(uuidString: nextID)))"
        )
        let late = try authenticator.serverAssertion(challenge: try Base64URL.decode(nextOptions.challenge))
            .userHandle(handle).signCount(2).json()
        #expect(
            try browser.postEncodable(
                "/api/passkeys/authentication/finish",
                AuthenticationFinish(challengeID: nextID, credential: late)
            ).error == "challenge_invalid")
    }

    @Test func anUnknownCredentialGetsTheSignalData() throws {
        let app = try TestApplication()
        let authenticator = try SoftwareAuthenticator()
        let reply = try TestAgent(app).signInWithPasskey(authenticator, userHandle: authenticator.userHandle)
        #expect(reply.status == 401)
        #expect(reply.error == "unknown_credential")
        let signal = try #require(reply.json["signal"] as? [String: Any])
        #expect(signal["rpId"] as? String == "localhost")
        #expect(signal["credentialId"] as? String == Base64URL.encode(authenticator.credentialID))
    }

    @Test func assertionsWithoutUserPresenceOrWithAnotherHandleAreRefused() throws {
        let app = try TestApplication()
        let (agent, handle) = try Self.signedIn(app)
        let authenticator = try SoftwareAuthenticator()
        #expect(try agent.registerPasskey(authenticator).status == 201)
        let noPresence = try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle, up: false)
        #expect(noPresence.error == "passkey_verification_failed")
        let otherHandle = try TestAgent(app).signInWithPasskey(
            authenticator, userHandle: Array(repeating: 7, count: 32))
        #expect(otherHandle.error == "passkey_verification_failed")
        #expect(app.logBuffer.text.contains("reason=userPresentFlagNotSet"))
        #expect(app.logBuffer.text.contains("reason=userHandleMismatch"))
    }

    @Test func passkeySignUpCreatesAccountEmailAndPasskeyTogether() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        let start = try agent.post("/api/passkeys/signup/start", ["email": email, "display_name": "Grace"])
        let registrationID = try #require(start.json["registration_id"] as? String)
        let options = try start.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
        #expect(options.user.name == email)
        #expect(try Base64URL.decode(options.user.id).count == 32)
        #expect(try app.sql("SELECT count(*) AS n FROM accounts").first?.decode("n", as: Int.self) == 0)

        let authenticator = try SoftwareAuthenticator()
        let credential = try authenticator.serverRegistration(
            challenge: try Base64URL.decode(options.challenge)
        ).flags(be: true, bs: true).json()
        let finish = try agent.postEncodable(
            "/api/passkeys/signup/finish",
            SignUpFinish(
                registrationID: registrationID, email: email, displayName: "Grace", credential: credential))
        #expect(finish.status == 201)
        let account = try agent.send("GET", "/api/account")
        #expect(account.json["email"] as? String == email)
        #expect(account.json["has_password"] as? Bool == false)
        let passkeys = try agent.send("GET", "/api/passkeys").json["passkeys"] as? [[String: Any]]
        #expect(passkeys?.first?["synced"] as? Bool == true)

        // The user handle reserved at start is the account's, so the passkey signs in.
        let signIn = try TestAgent(app).signInWithPasskey(
            authenticator, userHandle: try Base64URL.decode(options.user.id), synced: true)
        #expect(signIn.status == 200)
        // A completed registration cannot be completed again.
        let again = try agent.postEncodable(
            "/api/passkeys/signup/finish",
            SignUpFinish(
                registrationID: registrationID, email: TestAgent.uniqueEmail(), displayName: "G",
                credential: credential))
        #expect(again.error == "challenge_invalid")
    }

    @Test func passkeySignUpWithATakenEmailDoesNotRevealIt() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail()
        try TestAgent(app).signUp(email: email)
        let agent = TestAgent(app)
        let start = try agent.post("/api/passkeys/signup/start", [String: Any]())
        let options = try start.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
        let credential = try SoftwareAuthenticator().serverRegistration(
            challenge: try Base64URL.decode(options.challenge)
        ).json()
        let reply = try agent.postEncodable(
            "/api/passkeys/signup/finish",
            SignUpFinish(
                registrationID: try #require(start.json["registration_id"] as? String),
                email: email.uppercased(), displayName: "Dup", credential: credential))
        // Answered as for a new address: the account holds the address unverified (the first
        // account to verify it wins). See SignUpEnumerationTests.
        #expect(reply.status == 201)
        #expect(try app.sql("SELECT count(*) AS n FROM accounts").first?.decode("n", as: Int.self) == 2)
        #expect(
            try app.sql("SELECT count(*) AS n FROM account_emails WHERE verified_at IS NULL").first?.decode(
                "n", as: Int.self) == 2)
    }

    @Test func aFailureAfterTheAccountInsertLeavesNothing() throws {
        let app = try TestApplication()
        // The credential is already registered to another account: the passkey insert fails
        // after the account and email rows were written in the same transaction.
        let (owner, _) = try Self.signedIn(app)
        let authenticator = try SoftwareAuthenticator()
        #expect(try owner.registerPasskey(authenticator).status == 201)

        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail("atomic")
        let start = try agent.post("/api/passkeys/signup/start", ["email": email])
        let options = try start.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
        let credential = try authenticator.serverRegistration(
            challenge: try Base64URL.decode(options.challenge)
        ).json()
        let reply = try agent.postEncodable(
            "/api/passkeys/signup/finish",
            SignUpFinish(
                registrationID: try #require(start.json["registration_id"] as? String), email: email,
                displayName: "A", credential: credential))
        #expect(reply.status == 409)
        #expect(reply.error == "credential_exists")
        #expect(
            try app.sql("SELECT count(*) AS n FROM account_emails WHERE normalized_email = \(email)").first?
                .decode("n", as: Int.self) == 0)
        #expect(try app.sql("SELECT count(*) AS n FROM accounts").first?.decode("n", as: Int.self) == 1)
        #expect(
            try app.sql("SELECT count(*) AS n FROM authentication_sessions").first?.decode("n", as: Int.self)
                == 1)
        #expect(reply.setCookies.allSatisfy { !$0.hasPrefix("session=") })
    }

    @Test func passkeySignUpRequiresUserPresence() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        let start = try agent.post("/api/passkeys/signup/start", [String: Any]())
        let options = try start.decode(PublicKeyCredentialCreationOptionsJSON.self, at: "options")
        let credential = try SoftwareAuthenticator().serverRegistration(
            challenge: try Base64URL.decode(options.challenge)
        ).flags(up: false).json()
        let reply = try agent.postEncodable(
            "/api/passkeys/signup/finish",
            SignUpFinish(
                registrationID: try #require(start.json["registration_id"] as? String),
                email: TestAgent.uniqueEmail(), displayName: "A", credential: credential))
        #expect(reply.error == "passkey_verification_failed")
        #expect(try app.sql("SELECT count(*) AS n FROM accounts").first?.decode("n", as: Int.self) == 0)
    }
}
