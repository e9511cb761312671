import Crypto
import Foundation
import Testing

@testable import OIDC

@Suite struct AppleClientSecretTests {
    static let key = try! P256.Signing.PrivateKey()
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func decode(_ part: Substring) throws -> [String: Any] {
        let bytes = try Base64URL.decode(String(part))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test func headerAndClaimsAreApples() throws {
        let secret = try AppleClientSecret(
            teamID: "TEAMID1234", keyID: "KEYID12345", clientID: "com.example.web", privateKey: Self.key,
            issuedAt: Self.now)
        let parts = secret.value.split(separator: ".")
        #expect(parts.count == 3)
        let header = try Self.decode(parts[0])
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == "KEYID12345")
        #expect(header["typ"] == nil)
        let claims = try Self.decode(parts[1])
        #expect(claims["iss"] as? String == "TEAMID1234")
        #expect(claims["sub"] as? String == "com.example.web")
        #expect(claims["aud"] as? String == "https://appleid.apple.com")
        #expect(claims["iat"] as? Int == 1_800_000_000)
        #expect(claims["exp"] as? Int == 1_800_003_600)
        // The signature is the developer key's, over the signing input.
        let input = Array((parts[0] + "." + parts[1]).utf8)
        let signature = try P256.Signing.ECDSASignature(
            rawRepresentation: try Base64URL.decode(String(parts[2])))
        #expect(Self.key.publicKey.isValidSignature(signature, for: input))
    }

    @Test func lifetimeIsBoundedByApplesLimit() throws {
        _ = try AppleClientSecret(
            teamID: "T", keyID: "K", clientID: "c", privateKey: Self.key, issuedAt: Self.now,
            lifetime: 15_777_000)
        #expect(throws: JOSEError.malformed) {
            try AppleClientSecret(
                teamID: "T", keyID: "K", clientID: "c", privateKey: Self.key, issuedAt: Self.now,
                lifetime: 15_777_001)
        }
        #expect(throws: JOSEError.malformed) {
            try AppleClientSecret(
                teamID: "T", keyID: "K", clientID: "c", privateKey: Self.key, issuedAt: Self.now, lifetime: 0)
        }
    }

    @Test func renewedWellBeforeExpiry() throws {
        let secret = try AppleClientSecret(
            teamID: "T", keyID: "K", clientID: "c", privateKey: Self.key, issuedAt: Self.now)
        #expect(secret.isUsable(at: Self.now))
        #expect(secret.isUsable(at: Self.now.addingTimeInterval(3299)))
        #expect(!secret.isUsable(at: Self.now.addingTimeInterval(3300)))
        #expect(!secret.isUsable(at: Self.now.addingTimeInterval(-3600)))
    }
}

@Suite struct AppleNonceTests {
    @Test func hashIsLowercaseHexOfSHA256() {
        // SHA-256("abc"), FIPS 180-2 appendix B.1.
        #expect(
            AppleNonce.hashed("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(AppleNonce.matches(raw: "abc", claim: AppleNonce.hashed("abc")))
        #expect(AppleNonce.matches(raw: "abc", claim: AppleNonce.hashed("abc").uppercased()))
        #expect(!AppleNonce.matches(raw: "abc", claim: "abc"))
        #expect(!AppleNonce.matches(raw: "abd", claim: AppleNonce.hashed("abc")))
        #expect(!AppleNonce.matches(raw: "abc", claim: nil))
    }
}

@Suite struct AppleAppAudienceTests {
    static let apps = ["TEAMID1234.com.example.notes", "OTHERTEAM1.com.example.other"]

    @Test func bundleOfTheClientsAppOfTheTeam() {
        #expect(
            AppleAppAudience.matching(
                audience: ["com.example.notes"], clientAppIDs: Self.apps, teamID: "TEAMID1234",
                providerBundleIDs: ["com.example.notes"]) == "com.example.notes")
    }

    @Test(arguments: [
        // Another app of the team, not the client's.
        (["com.example.mail"], ["com.example.notes", "com.example.mail"]),
        // The client's app of another team.
        (["com.example.other"], ["com.example.other"]),
        // The client's app the provider does not list.
        (["com.example.notes"], ["com.example.mail"]),
        // Two audiences.
        (["com.example.notes", "com.example.mail"], ["com.example.notes", "com.example.mail"]),
        ([], ["com.example.notes"]),
    ])
    func refused(audience: [String], providerBundles: [String]) {
        #expect(
            AppleAppAudience.matching(
                audience: audience, clientAppIDs: Self.apps, teamID: "TEAMID1234",
                providerBundleIDs: providerBundles)
                == nil)
    }
}

@Suite struct TokenExchangeRequestTests {
    static let base: [(String, String)] = [
        ("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"), ("subject_token", "eyJ.a.b"),
        ("subject_token_type", "urn:ietf:params:oauth:token-type:id_token"),
        ("apple_authorization_code", "c1"),
        ("apple_nonce", "0123456789abcdef0123"),
    ]

    static func parse(_ items: [(String, String)]) throws(OAuthError) -> TokenRequest {
        try TokenRequest.parse(Parameters(items.map { (name: $0.0, value: $0.1) }))
    }

    @Test func parsed() throws {
        #expect(
            try Self.parse(Self.base)
                == .tokenExchange(
                    TokenExchangeRequest(
                        subjectToken: "eyJ.a.b", appleAuthorizationCode: "c1",
                        appleNonce: "0123456789abcdef0123",
                        scope: ["openid"])))
        let scoped = try Self.parse(
            Self.base + [
                ("scope", "openid offline_access"),
                ("requested_token_type", "urn:ietf:params:oauth:token-type:access_token"),
            ])
        #expect(
            scoped
                == .tokenExchange(
                    TokenExchangeRequest(
                        subjectToken: "eyJ.a.b", appleAuthorizationCode: "c1",
                        appleNonce: "0123456789abcdef0123",
                        scope: ["openid", "offline_access"])))
        #expect(scoped.grantType == .tokenExchange)
    }

    static func without(_ name: String) -> [(String, String)] { base.filter { $0.0 != name } }
    static func replacing(_ name: String, _ value: String) -> [(String, String)] {
        without(name) + [(name, value)]
    }

    @Test(arguments: [
        (
            without("subject_token"), OAuthErrorCode.invalidRequest,
            "The 'subject_token' parameter is missing."
        ),
        (without("subject_token_type"), .invalidRequest, "The 'subject_token_type' parameter is missing."),
        (
            replacing("subject_token_type", "urn:ietf:params:oauth:token-type:access_token"), .invalidRequest,
            "The 'subject_token_type' must be urn:ietf:params:oauth:token-type:id_token: only Sign in with Apple identity tokens are exchanged."
        ),
        (
            base + [("requested_token_type", "urn:ietf:params:oauth:token-type:refresh_token")],
            .invalidRequest,
            "The 'requested_token_type' may only be urn:ietf:params:oauth:token-type:access_token."
        ),
        (base + [("actor_token", "x")], .invalidRequest, "Delegation ('actor_token') is not supported."),
        (
            base + [("audience", "https://api")], .invalidTarget,
            "Name the API with 'resource' instead of 'audience'."
        ),
        (
            without("apple_authorization_code"), .invalidRequest,
            "The 'apple_authorization_code' parameter is missing."
        ),
        (without("apple_nonce"), .invalidRequest, "The 'apple_nonce' parameter is missing."),
        (
            replacing("apple_nonce", "short"), .invalidRequest,
            "The 'apple_nonce' must be the raw nonce of 16 to 512 characters."
        ),
        (
            base + [("subject_token", "other")], .invalidRequest,
            "The 'subject_token' parameter is duplicated."
        ),
    ])
    func refused(items: [(String, String)], code: OAuthErrorCode, hint: String) {
        #expect(throws: OAuthError(code, hint: hint)) { try Self.parse(items) }
    }

    @Test func onlyForClientsWithApps() throws {
        let grant = try Self.parse(Self.base)
        let without = OAuthClient(
            clientID: "app", applicationType: .native, redirectURIs: ["com.example:/cb"],
            tokenEndpointAuthMethod: .none)
        #expect(
            throws: OAuthError(
                .unauthorizedClient, hint: "The client names no apps whose Apple sign-in it may exchange.")
        ) { try grant.checkAllowed(for: without) }
        var with = without
        with.appleAppIDs = ["TEAMID1234.com.example.notes"]
        try grant.checkAllowed(for: with)
    }
}

@Suite struct AppleNotificationVerifierTests {
    static let appleKey = try! RSA.Signing.PrivateKey()
    static let otherKey = try! RSA.Signing.PrivateKey()
    static let keys = JWKS(keys: [
        try! JWK(publicKey: .rsa(appleKey.publicKey), keyID: "A1", algorithm: .RS256)
    ])
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let verifier = AppleNotificationVerifier(
        audiences: ["com.example.web", "com.example.notes"], keys: keys)

    static func payload(
        iss: String = "https://appleid.apple.com", aud: String = "com.example.web", iat: Int = 1_800_000_000,
        jti: String? = "j1",
        events: JSONValue = .string(
            #"{"type":"email-disabled","sub":"001.abc","email":"x@privaterelay.appleid.com","is_private_email":"true","event_time":1800000000000}"#
        ), key: RSA.Signing.PrivateKey = appleKey, kid: String = "A1"
    ) throws -> String {
        var claims: [String: JSONValue] = [
            "iss": .string(iss), "aud": .string(aud), "iat": .int(iat), "events": events,
        ]
        if let jti { claims["jti"] = .string(jti) }
        let signer = try JWSSigner(privateKey: .rsa(key), algorithm: .RS256, keyID: kid)
        return try signer.sign(payload: JSONBody.encode(claims), type: nil)
    }

    @Test func verified() throws {
        let notification = try Self.verifier.verify(try Self.payload(), now: Self.now)
        #expect(notification.audience == "com.example.web")
        #expect(notification.type == .emailDisabled)
        #expect(notification.subject == "001.abc")
        #expect(notification.email == "x@privaterelay.appleid.com")
        #expect(notification.isPrivateEmail == true)
        #expect(notification.jwtID == "j1")
    }

    @Test func eventsAsAnObjectAndUnknownTypes() throws {
        let notification = try Self.verifier.verify(
            try Self.payload(events: .object(["type": .string("new-thing"), "sub": .string("001.abc")])),
            now: Self.now)
        #expect(notification.typeName == "new-thing" && notification.type == nil)
    }

    @Test func refusals() throws {
        func refused(_ compact: String) -> AppleNotificationError? {
            do {
                _ = try Self.verifier.verify(compact, now: Self.now)
                return nil
            } catch { return error }
        }
        #expect(refused(try Self.payload(key: Self.otherKey)) == .signature)
        #expect(refused(try Self.payload(kid: "Z9")) == .unknownKey)
        #expect(refused(try Self.payload(iss: "https://evil.example")) == .issuer)
        #expect(refused(try Self.payload(aud: "com.other.app")) == .audience)
        #expect(refused(try Self.payload(iat: 1_800_000_000 - 3601)) == .stale)
        #expect(refused(try Self.payload(iat: 1_800_000_000 + 301)) == .issuedInFuture)
        #expect(refused(try Self.payload(jti: nil)) == .missingJWTID)
        #expect(refused(try Self.payload(events: .string("not json"))) == .events)
        #expect(refused(try Self.payload(events: .string(#"{"type":"consent-revoked"}"#))) == .events)
        #expect(refused("a.b") == .malformed)
    }

    @Test func keyIDOfTheHeader() throws {
        #expect(AppleNotificationVerifier.keyID(of: try Self.payload()) == "A1")
        #expect(AppleNotificationVerifier.keyID(of: "!!.x.y") == nil)
    }
}
