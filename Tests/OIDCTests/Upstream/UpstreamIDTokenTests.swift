import Crypto
import Foundation
import Testing

@testable import OIDC

@Suite struct UpstreamIDTokenTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    struct Provider {
        let key: SigningPrivateKey
        let jwk: JWK
        init(kid: String = "apple-1") throws {
            key = .p256(try P256.Signing.PrivateKey())
            jwk = try JWK(publicKey: key.publicKey, keyID: kid, algorithm: .ES256)
        }
        func token(_ claims: [String: Any], kid: String? = nil) throws -> String {
            let payload = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
            return try JWSSigner(privateKey: key, algorithm: .ES256, keyID: kid ?? jwk.kid).sign(
                payload: Array(payload))
        }
    }

    static func claims(_ changes: [String: Any] = [:]) -> [String: Any] {
        var claims: [String: Any] = [
            "iss": "https://appleid.apple.com", "aud": "com.example.app", "sub": "001234.abcd",
            "iat": 1_800_000_000 - 10, "exp": 1_800_000_000 + 600, "nonce": "n-1",
            "email": "a@privaterelay.appleid.com", "email_verified": "true", "is_private_email": "true",
        ]
        for (key, value) in changes { claims[key] = value }
        return claims
    }

    func verifier(_ provider: Provider) -> UpstreamIDTokenVerifier {
        UpstreamIDTokenVerifier(
            issuer: "https://appleid.apple.com", audiences: ["com.example.app", "com.example.web"],
            keys: JWKS(keys: [provider.jwk]))
    }

    @Test func acceptsAppleShapes() throws {
        let provider = try Provider()
        let token = try verifier(provider).verify(
            try provider.token(Self.claims()), nonce: "n-1", now: Self.now)
        #expect(token.subject == "001234.abcd" && token.emailVerified && token.isPrivateEmail)
        #expect(token.email == "a@privaterelay.appleid.com" && token.audience == ["com.example.app"])
        let booleans = try verifier(provider).verify(
            try provider.token(Self.claims(["email_verified": true, "is_private_email": false])), nonce: nil,
            now: Self.now)
        #expect(booleans.emailVerified && !booleans.isPrivateEmail)
        let named = try verifier(provider).verify(
            try provider.token(Self.claims(["given_name": "Ada", "family_name": "Lovelace"])), nonce: nil,
            now: Self.now)
        #expect(named.name == "Ada Lovelace")
    }

    @Test func refusals() throws {
        let provider = try Provider()
        let other = try Provider()
        let cases: [(String, String?, UpstreamIDTokenError)] = [
            (try provider.token(Self.claims(["aud": "com.attacker.app"])), "n-1", .audience),
            (try provider.token(Self.claims(["aud": ["com.example.app", "x"]])), "n-1", .audience),
            (try provider.token(Self.claims(["iss": "https://appleid.apple.com/"])), "n-1", .issuer),
            (try provider.token(Self.claims(["exp": 1_800_000_000 - 61])), "n-1", .expired),
            (try provider.token(Self.claims(["iat": 1_800_000_000 + 120])), "n-1", .issuedInFuture),
            (try provider.token(Self.claims(["nonce": "n-2"])), "n-1", .nonce),
            (try provider.token(Self.claims().filter { $0.key != "nonce" }), "n-1", .nonce),
            (try provider.token(Self.claims(["sub": ""])), "n-1", .subject),
            (try other.token(Self.claims()), "n-1", .signature),
            (try provider.token(Self.claims(), kid: "rotated"), "n-1", .unknownKey),
            ("a.b", "n-1", .malformed),
        ]
        for (token, nonce, expected) in cases {
            #expect(throws: expected) { try verifier(provider).verify(token, nonce: nonce, now: Self.now) }
        }
        // Several audiences: `azp` must be one of ours.
        let azp = try provider.token(
            Self.claims(["aud": ["com.example.app", "x"], "azp": "com.example.app"]))
        #expect(try verifier(provider).verify(azp, nonce: "n-1", now: Self.now).subject == "001234.abcd")
        #expect(UpstreamIDTokenVerifier.keyID(of: try provider.token(Self.claims())) == "apple-1")
    }
}
