import Foundation
import Postgres
import Testing

@testable import AuthServer

/// The code and the link from the newest verification message to `address`.
func verificationMail(_ app: TestApplication, to address: String) throws -> (code: String, link: String) {
    let mail = try #require(app.mailbox.received(to: address).last { $0.text.contains("/verify-email?") })
    let code = try #require(
        mail.text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first {
            $0.count == 6 && $0.allSatisfy(\.isNumber)
        })
    let link = try #require(
        mail.text.split(separator: "\n").first { $0.contains("/verify-email?") }.map(String.init))
    return (code, link)
}

func count(_ app: TestApplication, _ query: PostgresQuery) throws -> Int {
    try app.sql(query).first?.decode("n", as: Int.self) ?? -1
}

@Suite("Email verification under attack: guess budget, link tokens, squatted addresses")
struct EmailVerificationAttackTests {
    @Test func theGuessBudgetLocksPastItsLimitAndReportsTheLockOnce() {
        #expect(VerificationGuessBudget.decide([(20, 100), (3, 900)], limit: 20) == .allowed)
        #expect(
            VerificationGuessBudget.decide([(21, 100), (3, 900)], limit: 20)
                == .locked(retryAfter: 100, newlyLocked: true))
        #expect(
            VerificationGuessBudget.decide([(22, 100), (21, 900)], limit: 20)
                == .locked(retryAfter: 900, newlyLocked: true))
        #expect(
            VerificationGuessBudget.decide([(25, 0), (22, 50)], limit: 20)
                == .locked(retryAfter: 50, newlyLocked: false))
    }

    /// The attacker signs up with the victim's address and loops "resend, guess five times":
    /// the wrong guesses add up across resends, and once the budget is spent even the right
    /// code is refused.
    @Test func verificationCodeGuessesAcrossResendsAreCapped() throws {
        let app = try TestApplication()
        let attacker = TestAgent(app)
        let victim = TestAgent.uniqueEmail("victim")
        #expect(try attacker.signUp(email: victim).status == 201)
        for round in 0..<4 {
            if round > 0 {
                try app.sql("UPDATE email_verification_codes SET created_at = now() - interval '61 seconds'")
                #expect(try attacker.post("/api/account/email/resend").status == 200)
            }
            let (code, _) = try verificationMail(app, to: victim)
            for _ in 0..<5 {
                let reply = try attacker.post(
                    "/api/account/email/verify", ["code": EmailVerificationTests.wrongCode(code)])
                #expect(reply.error == "invalid_code")
            }
        }
        try app.sql("UPDATE email_verification_codes SET created_at = now() - interval '61 seconds'")
        #expect(try attacker.post("/api/account/email/resend").status == 200)
        let (code, _) = try verificationMail(app, to: victim)
        let locked = try attacker.post("/api/account/email/verify", ["code": code])
        #expect(locked.status == 429)
        #expect(locked.error == "too_many_attempts")
        #expect(Int(locked.header("Retry-After") ?? "") ?? 0 > 0)
        #expect(try attacker.send("GET", "/api/account").json["email_verified"] as? Bool == false)
        #expect(try attacker.post("/api/account/email/verify", ["code": code]).status == 429)
        #expect(
            try count(app, "SELECT count(*) AS n FROM audit_events WHERE event = 'email.verification_locked'")
                == 1)
        let notices = app.mailbox.received(to: victim).filter { !$0.text.contains("/verify-email?") }
        #expect(notices.count == 1)
        #expect(notices.first?.subject.contains("verification") == true)
    }

    /// The account page's plain form (a GET with the code row's id) spends the same budget and,
    /// once it is spent, answers 429 with a readable page. The mailed link is no guess (its
    /// token cannot be guessed), so a squatter who burns the address's budget cannot keep the
    /// real owner from verifying by link.
    @Test func theFormPathIsCappedButTheLinkStillWorksWhileLocked() throws {
        let app = try TestApplication { $0.emailVerification.maxGuessesPerWindow = 3 }
        let email = TestAgent.uniqueEmail("owner")
        let owner = TestAgent(app)
        #expect(try owner.signUp(email: email).status == 201)
        let (ownerCode, ownerLink) = try verificationMail(app, to: email)
        let squatter = TestAgent(app)
        #expect(try squatter.signUp(email: email).status == 201)
        let (squatterCode, _) = try verificationMail(app, to: email)
        let squatterCodeID = try #require(
            try app.sql(
                """
                SELECT c.id FROM email_verification_codes c JOIN account_emails e ON e.id = c.account_email_id
                ORDER BY c.created_at DESC LIMIT 1
                """
            ).first?.decode("id", as: UUID.self)
        ).uuidString.lowercased()
        let wrong = EmailVerificationTests.wrongCode(squatterCode)
        for _ in 0..<3 {
            #expect(
                try squatter.send("GET", "/verify-email?id=\(squatterCodeID)&code=\(wrong)").status == 400)
        }
        let locked = try squatter.send("GET", "/verify-email?id=\(squatterCodeID)&code=\(squatterCode)")
        #expect(locked.status == 429)
        #expect(locked.header("Retry-After") != nil)
        #expect(locked.text.contains("Too many attempts"))
        // The owner's code is refused too (the address is locked), but the owner's link works.
        #expect(try owner.post("/api/account/email/verify", ["code": ownerCode]).status == 429)
        #expect(try TestAgent(app).send("GET", ownerLink).status == 200)
        #expect(try owner.send("GET", "/api/account").json["email_verified"] as? Bool == true)
        #expect(try squatter.send("GET", "/api/account").json["email_verified"] as? Bool == false)
    }

    /// A second account on the same address does not get a fresh budget: the address has one.
    @Test func verificationGuessBudgetIsSharedByEveryAccountOnTheAddress() throws {
        let app = try TestApplication()
        let victim = TestAgent.uniqueEmail("victim")
        let first = TestAgent(app)
        #expect(try first.signUp(email: victim).status == 201)
        for _ in 0..<4 {
            let (code, _) = try verificationMail(app, to: victim)
            for _ in 0..<5 {
                _ = try first.post(
                    "/api/account/email/verify", ["code": EmailVerificationTests.wrongCode(code)])
            }
            try app.sql("UPDATE email_verification_codes SET created_at = now() - interval '61 seconds'")
            _ = try first.post("/api/account/email/resend")
        }
        let second = TestAgent(app)
        #expect(try second.signUp(email: victim.uppercased()).status == 201)
        let (code, _) = try verificationMail(app, to: victim)
        let reply = try second.post("/api/account/email/verify", ["code": code])
        #expect(reply.status == 429)
        #expect(reply.error == "too_many_attempts")
    }

    /// The link carries a 128-bit random token (stored as a digest), never the six-digit code,
    /// so the link cannot be guessed and a leaked code does not make a link.
    @Test func verificationLinksCarryAnUnguessableTokenNotTheCode() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        try agent.signUp(email: email)
        let (code, link) = try verificationMail(app, to: email)
        let items = URLComponents(string: link)?.queryItems ?? []
        #expect(items.map(\.name) == ["token"])
        let token = try #require(items.first?.value)
        #expect(token.count >= 22)
        #expect(!link.contains(code))
        let id = try #require(
            try app.sql("SELECT id FROM email_verification_codes").first?.decode("id", as: UUID.self))
        let guessed = try TestAgent(app).send(
            "GET", "/verify-email?code=\(code)&id=\(id.uuidString.lowercased())&token=x")
        #expect(guessed.status == 400)
        #expect(try agent.send("GET", "/api/account").json["email_verified"] as? Bool == false)
        let stored = try app.sql("SELECT link_digest FROM email_verification_codes").first?.decode(
            "link_digest", as: [UInt8].self)
        #expect(stored?.count == 32)
        #expect(try TestAgent(app).send("GET", "/verify-email?token=\(token)").status == 200)
        #expect(try agent.send("GET", "/api/account").json["email_verified"] as? Bool == true)
    }

    /// Someone signs up first with another person's address. The real owner can still sign up,
    /// verify, and so take the address; the squatter's account loses it in the same
    /// transaction.
    @Test func aSquatterCannotLockTheOwnerOutOfTheirAddress() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail("owner")
        let squatter = TestAgent(app)
        #expect(try squatter.signUp(email: email, password: "squatter passphrase").status == 201)
        let (squatterCode, _) = try verificationMail(app, to: email)

        let owner = TestAgent(app)
        let signUp = try owner.signUp(email: email, password: "owner passphrase 1")
        #expect(signUp.status == 201)
        let (ownerCode, _) = try verificationMail(app, to: email)
        #expect(try owner.post("/api/account/email/verify", ["code": ownerCode]).status == 200)

        let squatterView = try squatter.send("GET", "/api/account").json
        #expect(squatterView["email_verified"] as? Bool == false)
        #expect((squatterView["email"] as? String ?? "") != email)
        #expect(try squatter.post("/api/account/email/verify", ["code": squatterCode]).status == 400)
        #expect(
            try count(app, "SELECT count(*) AS n FROM account_emails WHERE normalized_email = \(email)") == 1)
        #expect(
            try count(app, "SELECT count(*) AS n FROM audit_events WHERE event = 'email.address_released'")
                == 1)
        // The attack: the squatter's data export showed the owner's client address and account
        // id, from the release event written under the squatter's account.
        let ownerID = try #require(owner.send("GET", "/api/account").json["id"] as? String)
        let export = try squatter.send("GET", "/api/account/export")
        #expect(export.status == 200)
        #expect(!export.text.contains(ownerID))
        let released = (export.json["security_events"] as? [[String: Any]])?.first {
            $0["event"] as? String == "email.address_released"
        }
        #expect(released != nil)
        #expect(released?["client_address"] as? String == "")
        #expect(
            try count(app, "SELECT count(*) AS n FROM audit_events WHERE event = 'email.address_released' AND detail ? 'verified_by'")
                == 1)
        // Signing in by the address reaches the verified owner only.
        #expect(try TestAgent(app).signIn(email: email, password: "owner passphrase 1").status == 200)
        #expect(try TestAgent(app).signIn(email: email, password: "squatter passphrase").status == 401)
    }

    /// The squatter's account, once the owner verified the address, releases no email claim
    /// for it to a client.
    @Test func aSquatterWhoLostTheAddressGetsNoEmailClaim() throws {
        let app = try OAuthFixtures.app()
        let email = TestAgent.uniqueEmail("owner")
        let squatter = TestAgent(app)
        #expect(try squatter.signUp(email: email).status == 201)
        let owner = TestAgent(app)
        #expect(try owner.signUp(email: email).status == 201)
        let (code, _) = try verificationMail(app, to: email)
        #expect(try owner.post("/api/account/email/verify", ["code": code]).status == 200)
        let attempt = AuthorizationAttempt(extra: [
            ("claims", #"{"id_token":{"email":null,"email_verified":null}}"#)
        ])
        let (_, tokens) = try app.signedInFlow(attempt, agent: squatter)
        let claims = try app.claims(of: try #require(tokens.idToken))
        #expect(claims["email"] == nil)
        #expect(claims["email_verified"] == nil)
        #expect(try app.userinfo(tokens.accessToken).json["email"] == nil)
        let (_, ownerTokens) = try app.signedInFlow(attempt, agent: owner)
        #expect(try app.claims(of: try #require(ownerTokens.idToken))["email"] == .string(email))
        #expect(try app.claims(of: try #require(ownerTokens.idToken))["email_verified"] == .bool(true))
    }

    /// While the owner has not verified yet, a later squatter does not take over sign-in by the
    /// address: the earliest unverified holder is the one whose password is checked.
    @Test func aLaterSquatterDoesNotTakeOverPasswordSignIn() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail("owner")
        #expect(try TestAgent(app).signUp(email: email, password: "owner passphrase 1").status == 201)
        #expect(try TestAgent(app).signUp(email: email, password: "squatter passphrase").status == 201)
        #expect(try TestAgent(app).signIn(email: email, password: "owner passphrase 1").status == 200)
        #expect(try TestAgent(app).signIn(email: email, password: "squatter passphrase").status == 401)
    }
}
