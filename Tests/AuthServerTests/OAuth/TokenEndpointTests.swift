import Crypto
import Foundation
import OIDC
import Postgres
import Testing

@testable import AuthServer

@Suite("OAuth token endpoint")
struct TokenEndpointTests {
    static let invalidGrantPrefix =
        "The grant or refresh token is invalid, expired, revoked, or was issued to another client or redirect URI."

    @Test func replayedCodeIsRefusedAndRevokesEverythingIssuedFromIt() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let attempt = AuthorizationAttempt()
        let code = try #require(try agent.authorize(attempt)["code"])
        let first = TokenSet(json: try app.redeem(code, attempt).json)
        #expect(try app.userinfo(first.accessToken).status == 200)

        let replay = try app.redeem(code, attempt)
        #expect(replay.status == 400)
        #expect(replay.error == "invalid_grant")
        #expect(
            replay.json["error_description"] as? String == Self.invalidGrantPrefix
                + " The authorization code is invalid, expired or already used.")
        #expect(replay.header("Cache-Control") == "no-store")
        let info = try app.userinfo(first.accessToken)
        #expect(info.status == 401)
        #expect(info.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)
        let refresh = try app.token([
            ("grant_type", "refresh_token"), ("refresh_token", try #require(first.refreshToken)),
        ])
        #expect(refresh.error == "invalid_grant")
    }

    /// Anyone holding a used code (its own, from its own sign-in) can replay it as often as it
    /// likes; each replay revokes what the code issued. That revocation must find the records
    /// through their indexes: a scan of every access-token record per replayed code (20 M rows
    /// at bench/seed --scale 1.0) would let one client tie up the database at will.
    @Test func aReplayedCodesRevocationReadsNoTableFromEndToEnd() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let attempt = AuthorizationAttempt()
        let code = try #require(try agent.authorize(attempt)["code"])
        let first = TokenSet(json: try app.redeem(code, attempt).json)
        let pool = app.database.pool
        // Other clients' records, enough that reading them all is the planner's last resort.
        try pool.query(
            """
            INSERT INTO access_tokens (jti, client_id, family_id, authorization_code_id, scopes, expires_at)
            SELECT 'filler-' || g, 'other', CASE WHEN g % 2 = 0 THEN gen_random_uuid() END,
                   CASE WHEN g % 3 = 0 THEN gen_random_uuid() END, '{openid}', now() + interval '1 hour'
            FROM generate_series(1, 20000) AS g
            """)
        let codeRow = try #require(
            try pool.query(
                "SELECT id, account_id FROM authorization_codes WHERE code_digest = \(TimeOrderedToken.key(code))"
            ).first)
        let codeID: UUID = try codeRow.decode("id")
        let accountID: UUID = try codeRow.decode("account_id")
        try pool.query(
            """
            INSERT INTO refresh_token_families (id, client_id, account_id, authorization_code_id, scopes, auth_time, amr,
                                                absolute_expires_at)
            SELECT gen_random_uuid(), 'other', \(accountID), CASE WHEN g % 3 = 0 THEN gen_random_uuid() END, '{openid}',
                   now(), '{pwd}', now() + interval '1 day'
            FROM generate_series(1, 20000) AS g
            """)
        try pool.query("ANALYZE access_tokens")
        try pool.query("ANALYZE refresh_token_families")

        // A connection of its own: the statistics view also shows a backend's counts not yet
        // flushed from its earlier transactions.
        let fresh = try PostgresConnection(url: try #require(app.configuration.databaseURL))
        defer { fresh.close() }
        let sequentialScans: Int = try fresh.withTransaction { connection in
            // A generic plan, as a pooled connection uses after five executions.
            try connection.query("SET LOCAL plan_cache_mode = force_generic_plan")
            try PostgresTokenStore(db: connection).revokeIssuedFromCode(codeID)
            return try connection.query(
                """
                SELECT coalesce(sum(seq_scan), 0)::int8 AS scans FROM pg_stat_xact_user_tables
                WHERE relname IN ('access_tokens', 'refresh_token_families')
                """
            ).first?.decode("scans") ?? -1
        }
        #expect(sequentialScans == 0)
        #expect(try app.userinfo(first.accessToken).status == 401)
        let refresh = try app.token([
            ("grant_type", "refresh_token"), ("refresh_token", try #require(first.refreshToken)),
        ])
        #expect(refresh.error == "invalid_grant")
    }

    /// A code is keyed like a refresh token (its time, then its digest: `rowKey`); only the
    /// whole code redeems it, and a code issued before codes carried their time (43 characters,
    /// keyed by its whole SHA-256) is still redeemed once.
    @Test func aCodeIsKeyedByItsTimeThenItsDigestAndAnOlderCodeStillRedeems() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let attempt = AuthorizationAttempt()
        let code = try #require(try agent.authorize(attempt)["code"])
        #expect(code.utf8.count == 55)
        let stored = try app.sql("SELECT code_digest FROM authorization_codes").map {
            try $0.decode("code_digest", as: [UInt8].self)
        }
        #expect(stored == [try Self.rowKey(code)])
        let forged = String(code.prefix(12)) + Base64URL.encode(SecureRandom.bytes(count: 32))
        #expect(try app.redeem(forged, attempt).error == "invalid_grant")

        let older = Base64URL.encode([UInt8](repeating: 4, count: 32))
        try app.sql(
            "UPDATE authorization_codes SET code_digest = \(SHA256.hash(data: Array(older.utf8)).bytes)")
        #expect(try app.redeem(code, attempt).error == "invalid_grant")
        #expect(try app.redeem(older, attempt).status == 200)
        #expect(try app.redeem(older, attempt).error == "invalid_grant")
    }

    /// Consuming a code rewrites its row on its own page (a HOT update, migration 0030): on a
    /// page filled with other codes, the new version still fits, so the exchange neither moves
    /// the row to another page nor adds an entry to each of the table's indexes.
    @Test func consumingACodeKeepsItsRowOnItsPage() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let attempt = AuthorizationAttempt()
        let code = try #require(try agent.authorize(attempt)["code"])
        let digest = TimeOrderedToken.key(code)
        // Codes of other sign-ins after it, until its page is as full as the table lets it be.
        try app.sql(
            """
            INSERT INTO authorization_codes (id, code_digest, client_id, redirect_uri, scopes, account_id, auth_time, amr,
                                             expires_at)
            SELECT gen_random_uuid(), sha256(('filler' || g)::bytea), c.client_id, c.redirect_uri, c.scopes, c.account_id,
                   c.auth_time, c.amr, c.expires_at
            FROM authorization_codes c, generate_series(1, 200) AS g WHERE c.code_digest = \(digest)
            """)
        func page() throws -> Int {
            try #require(
                try app.sql(
                    "SELECT (ctid::text::point)[0]::int8 AS page FROM authorization_codes WHERE code_digest = \(digest)"
                ).first?.decode("page"))
        }
        let before = try page()
        #expect(try app.redeem(code, attempt).status == 200)
        #expect(try page() == before)
    }

    /// A code exchange reads the ID token's claims and the signing keys without taking a
    /// second connection while its transaction holds one: with a pool of one it still answers.
    @Test func codeExchangeHoldsOneConnection() throws {
        let app = try OAuthFixtures.app { configuration in configuration.database.maxConnections = 1 }
        let agent = TestAgent(app)
        let email = TestAgent.uniqueEmail()
        try agent.signUp(email: email)
        let attempt = AuthorizationAttempt(extra: [("claims", #"{"id_token":{"email":null}}"#)])
        let code = try #require(try agent.authorize(attempt)["code"])
        app.signingKeys.invalidate()  // the exchange reloads the keys
        let reply = try app.redeem(code, attempt)
        #expect(reply.status == 200, "\(reply.text)")
        let idToken = try #require(TokenSet(json: reply.json).idToken)
        #expect(try app.claims(of: idToken)["email"] == .string(email))
    }

    @Test func pkceMismatchIsRefused() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        var attempt = AuthorizationAttempt()
        let code = try #require(try agent.authorize(attempt)["code"])
        attempt.verifier = Base64URL.encode(SecureRandom.bytes(count: 32))
        let reply = try app.redeem(code, attempt)
        #expect(reply.status == 400)
        #expect(
            reply.json["error_description"] as? String == Self.invalidGrantPrefix
                + " The 'code_verifier' does not match the 'code_challenge'.")
    }

    @Test func wrongRedirectURIAtTheTokenEndpointIsRefused() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        var attempt = AuthorizationAttempt()
        let code = try #require(try agent.authorize(attempt)["code"])
        attempt.redirectURI = "https://rp.example/other"
        let reply = try app.redeem(code, attempt)
        #expect(
            reply.json["error_description"] as? String == Self.invalidGrantPrefix
                + " The 'redirect_uri' does not match the authorization request.")
    }

    @Test func expiredCodeIsRefused() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let attempt = AuthorizationAttempt()
        let code = try #require(try agent.authorize(attempt)["code"])
        try app.sql("UPDATE authorization_codes SET expires_at = now() - interval '1 second'")
        #expect(try app.redeem(code, attempt).error == "invalid_grant")
    }

    @Test func codeIssuedToAnotherClientIsRefused() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let attempt = AuthorizationAttempt()
        let code = try #require(try agent.authorize(attempt)["code"])
        let reply = try app.redeem(code, attempt, auth: OAuthFixtures.basic("post-app"))
        // post-app authenticates with client_secret_post, so Basic is the wrong method.
        #expect(reply.status == 401)
        let other = try app.token(
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", attempt.redirectURI),
                ("client_id", "post-app"), ("client_secret", OAuthFixtures.webSecret),
            ], auth: nil)
        #expect(other.error == "invalid_grant")
    }

    @Test(arguments: [
        ("web-app", "wrong secret"), ("nobody", OAuthFixtures.webSecret),
    ])
    func basicAuthenticationFailuresAnswer401WithAChallenge(_ id: String, _ secret: String) throws {
        let app = try OAuthFixtures.app()
        let reply = try app.token(
            [("grant_type", "client_credentials")], auth: OAuthFixtures.basic(id, secret))
        #expect(reply.status == 401)
        #expect(reply.error == "invalid_client")
        #expect(reply.header("WWW-Authenticate") == #"Basic realm="oauth", charset="UTF-8""#)
        #expect(reply.header("Cache-Control") == "no-store")
    }

    @Test func confidentialClientWithoutCredentialsAndPublicClientWithSecretAreRefused() throws {
        let app = try OAuthFixtures.app()
        let none = try app.token([("grant_type", "client_credentials"), ("client_id", "web-app")], auth: nil)
        #expect(none.status == 401)
        #expect(none.error == "invalid_client")
        let publicWithSecret = try app.token(
            [
                ("grant_type", "authorization_code"), ("code", "x"),
                ("redirect_uri", OAuthFixtures.nativeRedirect),
            ],
            auth: OAuthFixtures.basic("native-app", "guess"))
        #expect(publicWithSecret.status == 401)
    }

    /// The tokens are signed while the grant's COMMIT is under way; a commit that fails
    /// releases none of them, and undoes the grant (its code can still be redeemed).
    @Test func aGrantWhoseCommitFailsAnswersNoTokens() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let attempt = AuthorizationAttempt()
        let code = try #require(try agent.authorize(attempt)["code"])
        // A check PostgreSQL runs only at COMMIT, refusing every new refresh token.
        _ = try app.sql(
            """
            CREATE FUNCTION refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS
            $$ BEGIN RAISE EXCEPTION 'refused at commit' USING ERRCODE = '23514'; END $$
            """)
        _ = try app.sql(
            """
            CREATE CONSTRAINT TRIGGER refuse_at_commit AFTER INSERT ON refresh_tokens
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_at_commit()
            """)
        let failed = try app.redeem(code, attempt)
        #expect(failed.status >= 500, "\(failed.text)")
        #expect(failed.json["access_token"] == nil && failed.json["id_token"] == nil)
        #expect(!failed.text.contains("eyJ"))
        #expect(try app.sql("SELECT jti FROM access_tokens").isEmpty)
        // Nothing was spent: the same code works once the check is gone.
        _ = try app.sql("DROP TRIGGER refuse_at_commit ON refresh_tokens")
        let redeemed = try app.redeem(code, attempt)
        #expect(redeemed.status == 200, "\(redeemed.text)")
        #expect(redeemed.json["access_token"] is String)
    }

    @Test func refreshTokensRotateAndReuseRevokesTheFamily() throws {
        let app = try OAuthFixtures.app()
        let (_, tokens) = try app.signedInFlow()
        let first = try #require(tokens.refreshToken)
        let rotated = try app.token([("grant_type", "refresh_token"), ("refresh_token", first)])
        #expect(rotated.status == 200)
        let second = try #require(rotated.json["refresh_token"] as? String)
        #expect(second != first)
        let secondAccess = try #require(rotated.json["access_token"] as? String)
        #expect(try app.userinfo(secondAccess).status == 200)
        // Narrowing the scope on refresh is allowed; widening is not.
        let third = try app.token([
            ("grant_type", "refresh_token"), ("refresh_token", second), ("scope", "openid email"),
        ])
        #expect(third.json["scope"] as? String == "openid email")
        let thirdToken = try #require(third.json["refresh_token"] as? String)

        let reuse = try app.token([("grant_type", "refresh_token"), ("refresh_token", first)])
        #expect(reuse.status == 400)
        #expect(reuse.error == "invalid_grant")
        // The whole family is gone, including the newest token and its access tokens.
        #expect(
            try app.token([("grant_type", "refresh_token"), ("refresh_token", thirdToken)]).error
                == "invalid_grant")
        #expect(try app.userinfo(secondAccess).status == 401)
    }

    @Test func refreshTokenIsBoundToItsClientAndLifetimes() throws {
        let app = try OAuthFixtures.app()
        let (_, tokens) = try app.signedInFlow()
        let token = try #require(tokens.refreshToken)
        let other = try app.token(
            [("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", "native-app")],
            auth: nil)
        #expect(other.error == "invalid_grant")
        // The other client's attempt did not burn the token.
        #expect(try app.token([("grant_type", "refresh_token"), ("refresh_token", token)]).status == 200)

        let (_, idle) = try app.signedInFlow()
        try app.sql("UPDATE refresh_tokens SET expires_at = now() - interval '1 second'")
        #expect(
            try app.token([
                ("grant_type", "refresh_token"), ("refresh_token", try #require(idle.refreshToken)),
            ]).error == "invalid_grant")
        let (_, absolute) = try app.signedInFlow()
        try app.sql("UPDATE refresh_token_families SET absolute_expires_at = now() - interval '1 second'")
        #expect(
            try app.token([
                ("grant_type", "refresh_token"), ("refresh_token", try #require(absolute.refreshToken)),
            ]).error == "invalid_grant")
        #expect(
            try app.token([("grant_type", "refresh_token"), ("refresh_token", "made-up")]).error
                == "invalid_grant")
    }

    /// A refresh token is the time in milliseconds (12 hex digits), then a drawn token; its row
    /// is keyed by the time's 6 bytes, then the first 26 bytes of the whole token's SHA-256, so
    /// that new rows land at the right edge of the key. Only the whole token finds its row.
    @Test func aRefreshTokenIsKeyedByItsTimeThenItsDigest() throws {
        let app = try OAuthFixtures.app()
        let (_, tokens) = try app.signedInFlow()
        let token = try #require(tokens.refreshToken)
        let time = try #require(Hex.decode(String(token.prefix(12))))
        #expect(token.utf8.count == 55 && time.count == 6)
        let milliseconds = time.reduce(0.0) { $0 * 256 + Double($1) }
        #expect(abs(milliseconds / 1000 - Date().timeIntervalSince1970) < 600)
        let key = try Self.rowKey(token)
        #expect(key.prefix(6) == time[...])
        let stored = try app.sql("SELECT token_digest FROM refresh_tokens").map {
            try $0.decode("token_digest", as: [UInt8].self)
        }
        #expect(stored == [key])

        // Attacks, each refused without burning the token: the victim's time with drawn bytes
        // of the attacker's; the stolen drawn bytes under another time; the row's key itself.
        let drawn = String(token.dropFirst(12))
        let forged = [
            String(token.prefix(12)) + Base64URL.encode(SecureRandom.bytes(count: 32)),
            String(format: "%012llx", UInt64(milliseconds) + 1) + drawn,
            Hex.encode(key),
            Base64URL.encode(key),
        ]
        for attempt in forged {
            #expect(
                try app.token([("grant_type", "refresh_token"), ("refresh_token", attempt)]).error
                    == "invalid_grant")
        }
        #expect(try app.token([("grant_type", "refresh_token"), ("refresh_token", token)]).status == 200)
    }

    /// A refresh token issued before tokens carried their time (43 characters, its row keyed by
    /// its whole SHA-256) keeps working until it expires: it rotates into a time-ordered one, a
    /// second use revokes the family, and introspection and revocation find it.
    @Test func aRefreshTokenFromBeforeTheTimePrefixStillRotates() throws {
        let app = try OAuthFixtures.app()
        let (_, first) = try app.signedInFlow()
        let (_, second) = try app.signedInFlow()
        let legacy = (
            Base64URL.encode([UInt8](repeating: 1, count: 32)),
            Base64URL.encode([UInt8](repeating: 2, count: 32))
        )
        for (issued, old) in [(first, legacy.0), (second, legacy.1)] {
            let current = try #require(issued.refreshToken)
            let key = try Self.rowKey(current)
            try app.sql(
                "UPDATE refresh_tokens SET token_digest = \(SHA256.hash(data: Array(old.utf8)).bytes) WHERE token_digest = \(key)"
            )
        }

        #expect(try CredentialChangeRevocationTests.introspect(app, legacy.0) == true)
        let rotated = try app.token([("grant_type", "refresh_token"), ("refresh_token", legacy.0)])
        #expect(rotated.status == 200)
        let next = try #require(rotated.json["refresh_token"] as? String)
        #expect(next.utf8.count == 55)
        #expect(try CredentialChangeRevocationTests.introspect(app, legacy.0) == false)
        let reuse = try app.token([("grant_type", "refresh_token"), ("refresh_token", legacy.0)])
        #expect(reuse.error == "invalid_grant")
        #expect(
            try app.token([("grant_type", "refresh_token"), ("refresh_token", next)]).error == "invalid_grant"
        )

        let revoked = try TestAgent.Reply(
            response: app.client.post(
                "/revoke", form: [("token", legacy.1), ("token_type_hint", "refresh_token")],
                headers: [OAuthFixtures.basic()]))
        #expect(revoked.status == 200)
        #expect(try CredentialChangeRevocationTests.introspect(app, legacy.1) == false)
        #expect(
            try app.token([("grant_type", "refresh_token"), ("refresh_token", legacy.1)]).error
                == "invalid_grant")
    }

    /// The key a time-ordered refresh token's row has, computed here from the token alone.
    static func rowKey(_ token: String) throws -> [UInt8] {
        try #require(Hex.decode(String(token.prefix(12))))
            + SHA256.hash(data: Array(token.utf8)).bytes.prefix(26)
    }

    @Test func publicClientsGetRefreshTokensOnlyWithOfflineAccess() throws {
        let app = try OAuthFixtures.app()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        let without = AuthorizationAttempt(
            clientID: "native-app", redirectURI: "com.example.app:/callback", scope: "openid profile")
        let (_, plain) = try app.signedInFlow(without, agent: agent)
        #expect(plain.refreshToken == nil)
        #expect(plain.idToken != nil)
        let with = AuthorizationAttempt(
            clientID: "native-app", redirectURI: "com.example.app:/callback", scope: "openid offline_access")
        let (_, offline) = try app.signedInFlow(with, agent: agent)
        let refresh = try #require(offline.refreshToken)
        let rotated = try app.token(
            [("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", "native-app")],
            auth: nil)
        #expect(rotated.status == 200)
        #expect(rotated.json["refresh_token"] != nil)
    }

    @Test func clientCredentialsForConfidentialClientsOnly() throws {
        let app = try OAuthFixtures.app()
        let reply = try app.token([("grant_type", "client_credentials"), ("scope", "api.read openid")])
        #expect(reply.status == 200)
        #expect(reply.json["scope"] as? String == "api.read")
        #expect(reply.json["refresh_token"] == nil)
        #expect(reply.json["id_token"] == nil)
        let claims = try app.claims(of: try #require(reply.json["access_token"] as? String), type: "at+jwt")
        #expect(claims["sub"] == .string("web-app"))
        let refused = try app.token(
            [("grant_type", "client_credentials"), ("client_id", "native-app")], auth: nil)
        #expect(refused.error == "unauthorized_client")
        let unsupported = try app.token([("grant_type", "password"), ("username", "a"), ("password", "b")])
        #expect(unsupported.error == "unsupported_grant_type")
    }

    @Test func privateKeyJWTAuthenticatesOncePerAssertion() throws {
        let key = try P256.Signing.PrivateKey()
        let jwk = try JWK(privateKey: .p256(key), keyID: "k1", algorithm: .ES256)
        let jwks = String(decoding: try JSONEncoder().encode(JWKS(keys: [jwk.publicJWK])), as: UTF8.self)
        let app = try OAuthFixtures.app(privateKeyJWKS: jwks)
        let signer = try JWSSigner(privateKey: .p256(key), algorithm: .ES256, keyID: "k1")
        let now = Int(Date().timeIntervalSince1970)
        let assertion = try signer.sign(
            payload: Array(
                #"{"iss":"jwt-app","sub":"jwt-app","aud":"\#(app.configuration.issuer)/token","jti":"\#(UUID())","iat":\#(now),"exp":\#(now + 60)}"#
                    .utf8))
        let form = [
            ("grant_type", "client_credentials"), ("scope", "api.read"),
            ("client_assertion_type", ClientAuthentication.jwtBearerAssertionType),
            ("client_assertion", assertion),
        ]
        let reply = try app.token(form, auth: nil)
        #expect(reply.status == 200, "\(reply.text)")
        let replay = try app.token(form, auth: nil)
        #expect(replay.status == 401)
        #expect(replay.error == "invalid_client")
        let wrongAudience = try signer.sign(
            payload: Array(
                #"{"iss":"jwt-app","sub":"jwt-app","aud":"https://elsewhere.example","jti":"x1","exp":\#(now + 60)}"#
                    .utf8))
        #expect(
            try app.token(
                [
                    ("grant_type", "client_credentials"),
                    ("client_assertion_type", ClientAuthentication.jwtBearerAssertionType),
                    ("client_assertion", wrongAudience),
                ], auth: nil
            ).status == 401)
    }

    @Test func idTokenUsesTheClientsSigningAlgorithm() throws {
        let app = try OAuthFixtures.app { configuration in
            configuration.clients[0].idTokenSignedResponseAlg = "ES256"
        }
        let (_, tokens) = try app.signedInFlow()
        let idToken = try #require(tokens.idToken)
        let verified = try app.verifier().verify(idToken)
        #expect(verified.header.algorithm == .ES256)
        let claims = try app.claims(of: idToken)
        #expect(
            claims["at_hash"] == .string(IDTokenClaims.accessTokenHash(tokens.accessToken, algorithm: .ES256))
        )
    }

    @Test func tokenEndpointRefusesNonFormBodiesAndDuplicates() throws {
        let app = try OAuthFixtures.app()
        let json = try TestAgent.Reply(
            response: app.client.send(
                method: "POST", target: "/token",
                headers: [("Content-Type", "application/json"), OAuthFixtures.basic()],
                body: Array(#"{"grant_type":"client_credentials"}"#.utf8)))
        #expect(json.status == 400)
        #expect(json.error == "invalid_request")
        let duplicate = try app.token([
            ("grant_type", "client_credentials"), ("grant_type", "client_credentials"),
        ])
        #expect(duplicate.error == "invalid_request")
        #expect(
            duplicate.json["error_description"] as? String
                == "The request is missing a required parameter, has an invalid or duplicated parameter, or is otherwise malformed. The 'grant_type' parameter is duplicated."
        )
    }
}
