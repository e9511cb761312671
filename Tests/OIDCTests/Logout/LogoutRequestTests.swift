import Crypto
import Foundation
import Testing
@testable import OIDC

@Suite struct LogoutRequestTests {
    static let signer = try! JWSSigner(privateKey: Vectors.ecJWK.privateKey(), algorithm: .ES256, keyID: "k1")
    static let verifier = JWSVerifier(
        keys: JWKS(keys: [try! JWK(publicKey: signer.privateKey.publicKey, keyID: "k1")]),
        allowedAlgorithms: [.ES256])
    static let session = BrowserSession(
        accountID: "acct-1", authTime: Fixture.now, amr: ["pwd"], sessionID: "sid-1")

    static func hint(
        subject: String = "acct-1", audience: String = "web-app", sid: String? = "sid-1",
        issuer: String = Fixture.issuer,
        expired: Bool = false, signer: JWSSigner = signer
    ) throws -> String {
        let issued = expired ? Fixture.now.addingTimeInterval(-86400 * 30) : Fixture.now
        return try IDTokenClaims(
            issuer: issuer, subject: subject, audience: audience, expiresAt: issued.addingTimeInterval(300),
            issuedAt: issued,
            authTime: issued, nonce: "n", amr: ["pwd"], sessionID: sid, accessTokenHash: nil
        ).sign(with: signer)
    }

    static func validate(_ items: [(String, String)], session: BrowserSession? = session) throws(OAuthError)
        -> LogoutDecision
    {
        try LogoutRequest.validate(
            Fixture.params(items), verifier: verifier, issuer: Fixture.issuer, session: session,
            client: Fixture.clients)
    }

    @Test func hintMatchingSessionWithRedirectAndState() throws {
        let decision = try Self.validate([
            ("id_token_hint", try Self.hint()),
            ("post_logout_redirect_uri", "https://app.example.com/bye?x=1"),
            ("state", "a b&c"), ("ui_locales", "ja"),
        ])
        #expect(!decision.requiresConfirmation)
        #expect(decision.postLogoutRedirect == "https://app.example.com/bye?x=1&state=a%20b%26c")
        #expect(decision.client?.clientID == "web-app")
        #expect(decision.hintSubject == "acct-1" && decision.hintSessionID == "sid-1")
        #expect(decision.uiLocales == ["ja"])
    }

    @Test func expiredHintAccepted() throws {
        let decision = try Self.validate([
            ("id_token_hint", try Self.hint(expired: true)), ("client_id", "web-app"),
            ("post_logout_redirect_uri", "https://app.example.com/bye"),
        ])
        #expect(
            !decision.requiresConfirmation && decision.postLogoutRedirect == "https://app.example.com/bye")
    }

    @Test func confirmation() throws {
        #expect(try Self.validate([]).requiresConfirmation)  // no hint
        #expect(try Self.validate([("id_token_hint", try Self.hint(subject: "acct-2"))]).requiresConfirmation)
        #expect(try Self.validate([("id_token_hint", try Self.hint(sid: "sid-other"))]).requiresConfirmation)
        #expect(try !Self.validate([("id_token_hint", try Self.hint(sid: nil))]).requiresConfirmation)
        #expect(try !Self.validate([], session: nil).requiresConfirmation)  // nobody signed in
    }

    @Test func clientIDWithoutHint() throws {
        let decision = try Self.validate([
            ("client_id", "web-app"), ("post_logout_redirect_uri", "https://app.example.com/bye"),
            ("state", "s"),
        ])
        #expect(decision.requiresConfirmation)
        #expect(decision.postLogoutRedirect == "https://app.example.com/bye?state=s")
    }

    @Test func noRedirectRequested() throws {
        let decision = try Self.validate([("id_token_hint", try Self.hint()), ("state", "s")])
        #expect(decision.postLogoutRedirect == nil)
    }

    @Test func hintWithSeveralAudiencesUsesAzp() throws {
        let now = Int(Fixture.now.timeIntervalSince1970)
        let claims: [String: JSONValue] = [
            "iss": .string(Fixture.issuer), "sub": .string("acct-1"),
            "aud": .array([.string("api"), .string("web-app")]),
            "azp": .string("web-app"), "exp": .int(now + 60), "iat": .int(now), "sid": .string("sid-1"),
        ]
        let hint = try Self.signer.sign(payload: JSONBody.encode(claims))
        let decision = try Self.validate([
            ("id_token_hint", hint), ("post_logout_redirect_uri", "https://app.example.com/bye"),
        ])
        #expect(decision.client?.clientID == "web-app")
        #expect(decision.postLogoutRedirect == "https://app.example.com/bye")
    }

    /// A token of this issuer, signed with its key, with the given `typ`.
    static func token(type: String?, claims extra: [String: JSONValue] = [:]) throws -> String {
        let now = Int(Fixture.now.timeIntervalSince1970)
        var claims: [String: JSONValue] = [
            "iss": .string(Fixture.issuer), "sub": .string("acct-1"), "aud": .string("web-app"),
            "exp": .int(now + 60), "iat": .int(now), "sid": .string("sid-1"),
        ]
        claims.merge(extra) { $1 }
        return try signer.sign(payload: JSONBody.encode(claims), type: type)
    }

    @Test(
        arguments: [
            ("not a JWT", "not.a.jwt"),
            ("signed by another key", try! hint(signer: otherSigner)),
            ("from another issuer", try! hint(issuer: "https://evil.example")),
            ("access token (at+jwt)", try! token(type: "at+jwt", claims: ["client_id": .string("web-app")])),
            (
                "logout token (logout+jwt)",
                try! token(
                    type: "logout+jwt",
                    claims: ["events": .object([LogoutToken.event: .object([:])]), "jti": .string("j")])
            ),
            ("no typ", try! token(type: nil)),
            ("audience not a registered client", try! hint(audience: "nobody")),
        ] as [(String, String)])
    func hintThatIsNotOurIDTokenForARegisteredClientIsIgnored(name: String, token: String) throws {
        let decision = try Self.validate([
            ("id_token_hint", token), ("post_logout_redirect_uri", "https://app.example.com/bye"),
            ("state", "s"),
        ])
        #expect(decision.hintRejected)
        #expect(decision.requiresConfirmation, "the user is asked")
        #expect(decision.postLogoutRedirect == nil, "never redirected")
        #expect(decision.hintSubject == nil && decision.hintSessionID == nil && decision.client == nil)
    }

    static let otherSigner = try! JWSSigner(
        privateKey: .p256(P256.Signing.PrivateKey()), algorithm: .ES256, keyID: "k1")

    @Test(
        arguments: [
            (
                "client_id not the hint's audience",
                [("id_token_hint", try! hint()), ("client_id", "native-app")],
                "The 'client_id' does not match the audience of the 'id_token_hint'."
            ),
            ("unknown client_id", [("client_id", "nobody")], "The client is not registered."),
            (
                "redirect without client", [("post_logout_redirect_uri", "https://app.example.com/bye")],
                "The 'post_logout_redirect_uri' requires an 'id_token_hint' or 'client_id'."
            ),
            (
                "unregistered redirect",
                [("client_id", "web-app"), ("post_logout_redirect_uri", "https://app.example.com/bye/")],
                "The 'post_logout_redirect_uri' is not registered for this client."
            ),
            (
                "redirect of another client",
                [
                    ("id_token_hint", try! hint(audience: "native-app")),
                    ("post_logout_redirect_uri", "https://app.example.com/bye"),
                ],
                "The 'post_logout_redirect_uri' is not registered for this client."
            ),
            ("duplicated state", [("state", "a"), ("state", "b")], "The 'state' parameter is duplicated."),
            (
                "duplicated hint", [("id_token_hint", "a"), ("id_token_hint", "b")],
                "The 'id_token_hint' parameter is duplicated."
            ),
        ] as [(String, [(String, String)], String)])
    func refused(name: String, items: [(String, String)], hint: String) throws {
        let error = try #require(throws: OAuthError.self) { try Self.validate(items) }
        #expect(error.error == "invalid_request")
        #expect(error.errorDescription == OAuthErrorCode.invalidRequest.fixedDescription + " " + hint)
        #expect(!error.redirectable)
    }
}
