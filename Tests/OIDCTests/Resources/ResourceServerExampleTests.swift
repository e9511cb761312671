import Crypto
import Foundation
import Testing
@testable import OIDC

// The code between the two markers is the Swift example of docs/apis.md, character for
// character (`documentedCodeIsTheTestedCode` checks it).
// BEGIN docs/apis.md
/// An API's check of the bearer token on each request, built on this project's OIDC module.
struct OrdersAPIAuthorization {
    /// The issuer's JWK Set, fetched from `jwks_uri` of its discovery document (and fetched
    /// again when a token names a `kid` it does not hold).
    let jwks: JWKS
    /// The issuer's identifier, exactly as in discovery.
    let issuer: String
    /// This API's `identifier` in the server's configuration.
    let audience: String

    enum Refusal: Error, Equatable {
        /// 401 with `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750 §3.1).
        case invalidToken
        /// 403 with `error="insufficient_scope"`.
        case insufficientScope
    }

    /// RFC 9068 §4: the signature (RS256 only, never `none`), `typ` `at+jwt`, `iss`, `aud`
    /// and `exp`; then the scope the operation needs.
    func authorize(bearer token: String, requiring scope: String, now: Date = Date()) throws(Refusal)
        -> AccessTokenClaims
    {
        let verifier = JWSVerifier(keys: jwks, allowedAlgorithms: [.RS256])
        let claims: AccessTokenClaims
        do {
            claims = try AccessTokenClaims.verify(
                token, verifier: verifier, issuer: issuer, audience: audience, now: now)
        } catch {
            throw .invalidToken
        }
        guard claims.scope.contains(scope) else { throw .insufficientScope }
        return claims
    }
}
// END docs/apis.md

@Suite struct ResourceServerExampleTests {
    static let orders = "https://api.example.com/orders"
    static let now = Fixture.now

    static func api() throws -> OrdersAPIAuthorization {
        let key = try JWK(publicKey: try Vectors.rsaJWK.privateKey().publicKey, keyID: "k1")
        return OrdersAPIAuthorization(jwks: JWKS(keys: [key]), issuer: Fixture.issuer, audience: orders)
    }

    static func token(
        audience: String = orders, scope: [String] = ["orders:read"], expiresIn: TimeInterval = 300,
        algorithm: JWSAlgorithm = .RS256
    ) throws -> String {
        var claims = AccessTokenClaims(
            issuer: Fixture.issuer, audience: audience, subject: "user-1", clientID: "web-app",
            expiresAt: now.addingTimeInterval(expiresIn), issuedAt: now, jwtID: "j1", scope: scope,
            authTime: nil)
        claims.extraClaims = ["roles": .array([.string("orders-admin")])]
        let signer = try JWSSigner(privateKey: Vectors.rsaJWK.privateKey(), algorithm: algorithm, keyID: "k1")
        return try claims.sign(with: signer)
    }

    @Test func aTokenForThisAPIWithTheScopePasses() throws {
        let claims = try Self.api().authorize(bearer: Self.token(), requiring: "orders:read", now: Self.now)
        #expect(claims.subject == "user-1" && claims.clientID == "web-app")
        #expect(claims.extraClaims["roles"] == .array([.string("orders-admin")]))
    }

    @Test func anotherAPIsTokenIsRefused() throws {
        #expect(throws: OrdersAPIAuthorization.Refusal.invalidToken) {
            try Self.api().authorize(
                bearer: Self.token(audience: "urn:example:billing"), requiring: "orders:read", now: Self.now)
        }
        // A token for the issuer's own endpoints (userinfo) is not one for the API either.
        #expect(throws: OrdersAPIAuthorization.Refusal.invalidToken) {
            try Self.api().authorize(
                bearer: Self.token(audience: Fixture.issuer), requiring: "orders:read", now: Self.now)
        }
    }

    @Test func expiredOrOtherAlgorithmOrNotAnAccessTokenIsRefused() throws {
        #expect(throws: OrdersAPIAuthorization.Refusal.invalidToken) {
            try Self.api().authorize(
                bearer: Self.token(expiresIn: -120), requiring: "orders:read", now: Self.now)
        }
        #expect(throws: OrdersAPIAuthorization.Refusal.invalidToken) {
            try Self.api().authorize(
                bearer: Self.token(algorithm: .PS256), requiring: "orders:read", now: Self.now)
        }
        // An ID token (`typ` JWT) with the same claims must not pass as an access token.
        let signer = try JWSSigner(privateKey: Vectors.rsaJWK.privateKey(), algorithm: .RS256, keyID: "k1")
        let parts = try Self.token().split(separator: ".")
        let payload = try Base64URL.decode(String(parts[1]))
        let idToken = try signer.sign(payload: payload, type: "JWT")
        #expect(throws: OrdersAPIAuthorization.Refusal.invalidToken) {
            try Self.api().authorize(bearer: idToken, requiring: "orders:read", now: Self.now)
        }
    }

    @Test func aMissingScopeIsInsufficientScope() throws {
        #expect(throws: OrdersAPIAuthorization.Refusal.insufficientScope) {
            try Self.api().authorize(bearer: Self.token(), requiring: "orders:write", now: Self.now)
        }
    }

    @Test func documentedCodeIsTheTestedCode() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let docs = try String(contentsOf: root.appendingPathComponent("docs/apis.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let block = try #require(docs.components(separatedBy: "```swift\n").dropFirst().first)
            .components(separatedBy: "```").first
        let region = try #require(source.components(separatedBy: "// BEGIN docs/apis.md\n").dropFirst().first)
            .components(separatedBy: "// END docs/apis.md").first
        #expect(block == "import Foundation\nimport OIDC\n\n" + (region ?? ""))
    }
}
