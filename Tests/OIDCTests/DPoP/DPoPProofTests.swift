import Crypto
import Foundation
import Testing
@testable import OIDC

/// Builds DPoP proofs the way a client does, with knobs to break each part.
struct ProofBuilder {
    var key: SigningPrivateKey
    var algorithm: JWSAlgorithm
    var header: [String: JSONValue]
    var claims: [String: JSONValue]

    init(key: SigningPrivateKey, algorithm: JWSAlgorithm, now: Date = Fixture.now) throws {
        self.key = key
        self.algorithm = algorithm
        header = [
            "typ": .string("dpop+jwt"), "alg": .string(algorithm.rawValue),
            "jwk": .object(try JWK(publicKey: key.publicKey).json.filter { $0.key != "use" }),
        ]
        claims = [
            "jti": .string("proof-1"), "htm": .string("POST"), "htu": .string(Fixture.tokenEndpoint),
            "iat": .int(Int(now.timeIntervalSince1970)),
        ]
    }

    static func es256() throws -> ProofBuilder {
        try ProofBuilder(key: .p256(P256.Signing.PrivateKey()), algorithm: .ES256)
    }

    func with(_ name: String, _ value: JSONValue?) -> ProofBuilder {
        var copy = self
        copy.claims[name] = value
        return copy
    }

    func withHeader(_ name: String, _ value: JSONValue?) -> ProofBuilder {
        var copy = self
        copy.header[name] = value
        return copy
    }

    func compact() throws -> String {
        let input =
            Base64URL.encode(JSONBody.encode(header)) + "." + Base64URL.encode(JSONBody.encode(claims))
        return input + "." + Base64URL.encode(try key.sign(Array(input.utf8), algorithm: algorithm))
    }

    var thumbprint: String { get throws { try JWK(publicKey: key.publicKey).thumbprint() } }
}

@Suite struct DPoPProofTests {
    let request = DPoPRequest(method: "POST", uri: Fixture.tokenEndpoint)

    func verify(_ proof: String, _ request: DPoPRequest? = nil, now: Date = Fixture.now) throws(DPoPError)
        -> DPoPProof
    {
        try DPoPProofVerifier.verify(proof, request: request ?? self.request, now: now)
    }

    @Test(arguments: [JWSAlgorithm.ES256, .EdDSA, .RS256, .PS256])
    func validProofOfEachAlgorithm(_ algorithm: JWSAlgorithm) throws {
        let key: SigningPrivateKey
        switch algorithm {
        case .ES256: key = .p256(try P256.Signing.PrivateKey())
        case .EdDSA: key = .ed25519(try Curve25519.Signing.PrivateKey())
        case .RS256, .PS256: key = .rsa(try RSA.Signing.PrivateKey(keySize: 2048))
        }
        let builder = try ProofBuilder(key: key, algorithm: algorithm)
        let proof = try verify(try builder.compact())
        #expect(proof.jwtID == "proof-1")
        #expect(proof.thumbprint == (try builder.thumbprint))
        #expect(proof.nonce == nil)
    }

    @Test func noHeaderIsNoProofAndTwoHeadersAreRefused() throws {
        #expect(try DPoPProofVerifier.verify(headerValues: [], request: request, now: Fixture.now) == nil)
        let proof = try ProofBuilder.es256().compact()
        #expect(throws: DPoPError.multipleHeaders) {
            try DPoPProofVerifier.verify(headerValues: [proof, proof], request: request, now: Fixture.now)
        }
    }

    @Test func malformedProofs() throws {
        let proof = try ProofBuilder.es256().compact()
        for bad in ["", "a.b", "not.a.jwt", proof + ".x", "e30..", "eyJ9.e30.AA"] {
            #expect(throws: DPoPError.malformed) { try verify(bad) }
        }
        #expect(throws: DPoPError.malformed) { try verify(String(repeating: "a", count: 9_000)) }
        #expect(throws: DPoPError.malformed) {
            try verify(try ProofBuilder.es256().withHeader("crit", .array([.string("x")])).compact())
        }
    }

    @Test func wrongType() throws {
        for type: JSONValue? in [
            nil, .string("JWT"), .string("at+jwt"), .string("application/dpop+jwt"), .int(1),
        ] {
            #expect(throws: DPoPError.wrongType) {
                try verify(try ProofBuilder.es256().withHeader("typ", type).compact())
            }
        }
    }

    @Test func unsupportedAlgorithms() throws {
        for alg: JSONValue? in [nil, .string("none"), .string("HS256"), .string("ES384")] {
            #expect(throws: DPoPError.unsupportedAlgorithm) {
                try verify(try ProofBuilder.es256().withHeader("alg", alg).compact())
            }
        }
    }

    /// A FAPI 2.0 client's proofs are PS256, ES256 or EdDSA (FAPI 2.0 Security Profile §5.4.1):
    /// an RS256 proof is refused for it, whether its key was checked before or not, and
    /// accepted for a client without the profile.
    @Test func aRequestCanNarrowTheAlgorithms() throws {
        let rsa = SigningPrivateKey.rsa(try RSA.Signing.PrivateKey(keySize: 2048))
        let cache = DPoPKeyCache()
        var narrowed = DPoPRequest(method: "POST", uri: Fixture.tokenEndpoint, keys: cache)
        narrowed.algorithms = [.PS256, .ES256, .EdDSA]
        let rs256 = try ProofBuilder(key: rsa, algorithm: .RS256).compact()
        _ = try verify(rs256, DPoPRequest(method: "POST", uri: Fixture.tokenEndpoint, keys: cache))
        #expect(throws: DPoPError.algorithmNotAllowed) { try verify(rs256, narrowed) }
        narrowed.keys = nil
        #expect(throws: DPoPError.algorithmNotAllowed) { try verify(rs256, narrowed) }
        _ = try verify(try ProofBuilder(key: rsa, algorithm: .PS256).compact(), narrowed)
    }

    @Test func keyMustBePublicAndFitTheAlgorithm() throws {
        let builder = try ProofBuilder.es256()
        #expect(throws: DPoPError.invalidKey) { try verify(try builder.withHeader("jwk", nil).compact()) }
        #expect(throws: DPoPError.invalidKey) {
            try verify(try builder.withHeader("jwk", .string("key")).compact())
        }
        #expect(throws: DPoPError.invalidKey) {
            try verify(try builder.withHeader("jwk", .object(["kty": .string("oct")])).compact())
        }
        // A private key in the header is refused before it is used.
        let privateJWK = try JWK(privateKey: builder.key)
        #expect(throws: DPoPError.privateKey) {
            try verify(try builder.withHeader("jwk", .object(privateJWK.json)).compact())
        }
        // An Ed25519 key with alg ES256: no algorithm confusion.
        let other = try JWK(
            publicKey: SigningPrivateKey.ed25519(try Curve25519.Signing.PrivateKey()).publicKey)
        #expect(throws: DPoPError.invalidKey) {
            try verify(try builder.withHeader("jwk", .object(other.json)).compact())
        }
    }

    @Test func signatureOfAnotherKey() throws {
        let builder = try ProofBuilder.es256()
        let other = try JWK(publicKey: SigningPrivateKey.p256(try P256.Signing.PrivateKey()).publicKey)
        #expect(throws: DPoPError.signatureInvalid) {
            try verify(try builder.withHeader("jwk", .object(other.json)).compact())
        }
        // A payload changed after signing.
        let proof = try builder.compact()
        let parts = proof.split(separator: ".")
        let changed =
            parts[0] + "." + Base64URL.encode(JSONBody.encode(builder.with("htm", .string("GET")).claims))
            + "." + parts[2]
        #expect(throws: DPoPError.signatureInvalid) { try verify(String(changed)) }
    }

    @Test func requiredClaims() throws {
        let builder = try ProofBuilder.es256()
        for name in ["jti", "htm", "htu", "iat"] {
            #expect(throws: DPoPError.missingClaim(name)) {
                try verify(try builder.with(name, nil).compact())
            }
        }
        #expect(throws: DPoPError.missingClaim("jti")) {
            try verify(try builder.with("jti", .string("")).compact())
        }
        #expect(throws: DPoPError.missingClaim("iat")) {
            try verify(try builder.with("iat", .string("1800000000")).compact())
        }
        #expect(throws: DPoPError.missingClaim("iat")) {
            try verify(try builder.with("iat", .bool(true)).compact())
        }
        #expect(throws: DPoPError.identifierTooLong) {
            try verify(try builder.with("jti", .string(String(repeating: "j", count: 129))).compact())
        }
    }

    @Test func methodMustMatch() throws {
        let builder = try ProofBuilder.es256()
        #expect(throws: DPoPError.methodMismatch) {
            try verify(try builder.with("htm", .string("GET")).compact())
        }
        #expect(throws: DPoPError.methodMismatch) {
            try verify(try builder.with("htm", .string("post")).compact())
        }
    }

    @Test(arguments: [
        "https://id.example.com/userinfo", "https://id.example.com/token/x",
        "https://other.example.com/token",
        "http://id.example.com/token", "https://id.example.com:8443/token",
        "https://user@id.example.com/token",
        "id.example.com/token", "https://id.example.com/Token",
    ])
    func uriMustMatch(_ htu: String) throws {
        #expect(throws: DPoPError.uriMismatch) {
            try verify(try ProofBuilder.es256().with("htu", .string(htu)).compact())
        }
    }

    @Test(arguments: [
        "https://id.example.com/token", "HTTPS://ID.Example.COM/token", "https://id.example.com:443/token",
        "https://id.example.com/token?x=1", "https://id.example.com/token#frag",
        "https://id.example.com/./token",
        "https://id.example.com/a/../token", "https://id.example.com/%74oken",
    ])
    func uriMatchesAfterNormalisation(_ htu: String) throws {
        _ = try verify(try ProofBuilder.es256().with("htu", .string(htu)).compact())
    }

    @Test func normalisation() {
        #expect(DPoPURI.normalised("HTTP://Host:80") == "http://host/")
        #expect(DPoPURI.normalised("https://h/a%2fb") == "https://h/a%2Fb")
        #expect(DPoPURI.normalised("https://[::1]:8443/x") == "https://[::1]:8443/x")
        #expect(DPoPURI.normalised("https://h:99999/") == nil)
        #expect(DPoPURI.normalised("https://h/%zz") == nil)
        #expect(DPoPURI.normalised("ftp://h/") == nil)
    }

    @Test func issuedAtWindow() throws {
        let builder = try ProofBuilder.es256()
        let proof = try builder.compact()
        _ = try verify(proof, now: Fixture.now.addingTimeInterval(60))
        _ = try verify(proof, now: Fixture.now.addingTimeInterval(-5))
        #expect(throws: DPoPError.staleOrFuture) {
            try verify(proof, now: Fixture.now.addingTimeInterval(61))
        }
        #expect(throws: DPoPError.staleOrFuture) {
            try verify(proof, now: Fixture.now.addingTimeInterval(-6))
        }
    }

    @Test func accessTokenHash() throws {
        let resource = DPoPRequest(
            method: "GET", uri: "https://id.example.com/userinfo", accessToken: "token-1")
        let builder = try ProofBuilder.es256().with("htm", .string("GET")).with(
            "htu", .string("https://id.example.com/userinfo"))
        // RFC 9449 §7.1 example: ath of the access token "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU".
        #expect(
            DPoPProofVerifier.accessTokenHash("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU")
                == "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo")
        #expect(throws: DPoPError.accessTokenHashMismatch) { try verify(try builder.compact(), resource) }
        let wrong = builder.with("ath", .string(DPoPProofVerifier.accessTokenHash("token-2")))
        #expect(throws: DPoPError.accessTokenHashMismatch) { try verify(try wrong.compact(), resource) }
        let right = builder.with("ath", .string(DPoPProofVerifier.accessTokenHash("token-1")))
        _ = try verify(try right.compact(), resource)
    }

    @Test func nonceWhenRequired() throws {
        let nonces = DPoPNonce(key: SymmetricKey(bytes: Array(repeating: 7, count: 32)), stepSeconds: 300)
        let requiring = DPoPRequest(method: "POST", uri: Fixture.tokenEndpoint, nonces: nonces)
        let builder = try ProofBuilder.es256()
        #expect(throws: DPoPError.nonceRequired) { try verify(try builder.compact(), requiring) }
        #expect(throws: DPoPError.nonceRequired) {
            try verify(try builder.with("nonce", .string("made-up")).compact(), requiring)
        }
        let current = nonces.current(now: Fixture.now)
        let proof = try verify(try builder.with("nonce", .string(current)).compact(), requiring)
        #expect(proof.nonce == current)
    }

    @Test func noncesRotate() {
        let nonces = DPoPNonce(key: SymmetricKey(bytes: Array(repeating: 7, count: 32)), stepSeconds: 300)
        let stepStart = Date(timeIntervalSince1970: 1_800_000_000)  // a multiple of 300
        let nonce = nonces.current(now: stepStart)
        #expect(nonces.current(now: stepStart.addingTimeInterval(299)) == nonce)
        #expect(nonces.current(now: stepStart.addingTimeInterval(300)) != nonce)
        // Accepted during its own step and the next one, not after.
        #expect(nonces.isValid(nonce, now: stepStart.addingTimeInterval(599)))
        #expect(!nonces.isValid(nonce, now: stepStart.addingTimeInterval(600)))
        #expect(!nonces.isValid(nonce, now: stepStart.addingTimeInterval(-1)))
        // Another server key makes other nonces.
        let other = DPoPNonce(key: SymmetricKey(bytes: Array(repeating: 8, count: 32)), stepSeconds: 300)
        #expect(!other.isValid(nonce, now: stepStart))
    }

    @Test func errorsAtEachEndpoint() {
        let atToken = DPoPError.signatureInvalid.oauthError(at: .authorizationServer)
        #expect(atToken.error == "invalid_dpop_proof")
        #expect(atToken.status == 400)
        let atResource = DPoPError.staleOrFuture.oauthError(at: .resource)
        #expect(atResource.status == 401)
        let nonce = DPoPError.nonceRequired.oauthError(at: .authorizationServer, nonce: "n-1")
        #expect(nonce.error == "use_dpop_nonce")
        #expect(nonce.dpopNonce == "n-1")
    }

    @Test func policy() {
        var native = Fixture.native
        #expect(!DPoPPolicy.required(for: native, requiredForPublicClients: false))
        #expect(DPoPPolicy.required(for: native, requiredForPublicClients: true))
        #expect(!DPoPPolicy.required(for: Fixture.web, requiredForPublicClients: true))
        var web = Fixture.web
        web.dpopBoundAccessTokens = true
        #expect(DPoPPolicy.required(for: web, requiredForPublicClients: false))
        native.dpopBoundAccessTokens = true
        #expect(DPoPPolicy.required(for: native, requiredForPublicClients: false))
        #expect(DPoPPolicy.bindsRefreshToken(for: Fixture.native))
        #expect(!DPoPPolicy.bindsRefreshToken(for: Fixture.web))
    }
}
