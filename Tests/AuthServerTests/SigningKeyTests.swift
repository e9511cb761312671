import Crypto
import Foundation
import OIDC
import Postgres
import Synchronization
import Testing

@testable import AuthServer

/// A clock tests move by hand.
final class TestClock: Sendable {
    private let current: Mutex<Date>
    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Mutex(start) }
    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

@Suite struct SigningKeyTests {
    static let kek = SymmetricKey(bytes: Array(0..<32))
    let settings = Configuration.SigningKeySettings(prePublicationSeconds: 3_600, retentionSeconds: 86_400)

    func ring(_ pool: PostgresPool, clock: TestClock, kek: SymmetricKey = kek) -> SigningKeyRing {
        SigningKeyRing(
            pool: pool, keyEncryptionKey: kek, settings: settings, refreshInterval: 60, now: { clock.now })
    }

    func migratedPool() throws -> PostgresPool {
        let pool = PostgresPool(url: try TestCluster.freshDatabaseURL(), maxConnections: 4)
        _ = try Migrator(directory: try Database.migrationsDirectory()).migrate(pool)
        return pool
    }

    @Test func firstStartCreatesRS256AndES256KeysNamedByThumbprint() throws {
        let pool = try migratedPool()
        defer { pool.close() }
        let keys = ring(pool, clock: TestClock())
        #expect(try keys.ensureSigningKeys().count == 2)
        #expect(try keys.ensureSigningKeys().isEmpty, "a second start creates nothing")
        let jwks = try keys.publishedJWKS()
        #expect(Set(jwks.keys.compactMap(\.alg)) == ["RS256", "ES256"])
        for jwk in jwks.keys {
            #expect(!jwk.isPrivate)
            var withoutKid = jwk
            withoutKid.kid = nil
            #expect(jwk.kid == (try withoutKid.thumbprint()))
        }
        #expect(try keys.signer(for: .RS256).keyID == jwks.keys.first { $0.alg == "RS256" }?.kid)
    }

    @Test func privateKeysAreEncryptedAtRest() throws {
        let pool = try migratedPool()
        defer { pool.close() }
        try ring(pool, clock: TestClock()).ensureSigningKeys()
        for row in try pool.query("SELECT kid, sealed_private_key FROM signing_keys") {
            let sealed: [UInt8] = try row.decode("sealed_private_key")
            let text = String(decoding: sealed, as: UTF8.self)
            #expect(!text.contains("\"d\""), "no private JWK member in the clear")
            #expect(!text.contains("kty"))
            // Bound to its row: opening with another kid as associated data fails.
            #expect(throws: CryptoError.authenticationFailure) {
                _ = try AES.GCM.open(
                    AES.GCM.SealedBox(combined: sealed), using: Self.kek, authenticating: Array("other".utf8))
            }
        }
    }

    @Test func aWrongKeyEncryptionKeyIsAClearError() throws {
        let pool = try migratedPool()
        defer { pool.close() }
        try ring(pool, clock: TestClock()).ensureSigningKeys()
        let wrong = ring(pool, clock: TestClock(), kek: SymmetricKey(bytes: [UInt8](repeating: 7, count: 32)))
        do {
            _ = try wrong.keys()
            Issue.record("opening keys with the wrong key-encryption key must fail")
        } catch let error as SigningKeyRing.KeyRingError {
            #expect(error.description.hasPrefix("the key-encryption key does not open signing key "))
        }
    }

    @Test func rotationPrePublishesThenSwitchesThenExpires() throws {
        let pool = try migratedPool()
        defer { pool.close() }
        let clock = TestClock()
        let keys = ring(pool, clock: clock)
        try keys.ensureSigningKeys()
        let oldKid = try #require(try keys.signer(for: .ES256).keyID)

        let added = try keys.rotate([.ES256])
        let newKid = try #require(added.first?.kid)
        #expect(added.count == 1 && newKid != oldKid)
        // Published at once, but the old key still signs during pre-publication.
        #expect(try keys.publishedJWKS().keys.compactMap(\.kid).contains(newKid))
        #expect(try keys.signer(for: .ES256).keyID == oldKid)
        #expect(try keys.signer(for: .RS256).keyID != nil, "other algorithms are untouched")

        clock.advance(3_600)
        #expect(try keys.signer(for: .ES256).keyID == newKid)
        #expect(
            try keys.publishedJWKS().keys.compactMap(\.kid).contains(oldKid), "retired keys stay published")
        #expect(try keys.allKeys().first { $0.kid == oldKid }?.state(at: clock.now) == "retired")

        clock.advance(86_400)
        #expect(!(try keys.publishedJWKS().keys.compactMap(\.kid).contains(oldKid)))
        #expect(try keys.publishedJWKS().keys.count == 2)
    }

    @Test func anotherInstancePicksUpARotationWithoutRestart() throws {
        let pool = try migratedPool()
        defer { pool.close() }
        let clock = TestClock()
        let first = ring(pool, clock: clock)
        let second = ring(pool, clock: clock)
        try first.ensureSigningKeys()
        #expect(try second.publishedJWKS().keys.count == 2)
        let added = try first.rotate()
        #expect(added.count == 2)
        clock.advance(61)  // past the refresh interval
        #expect(try second.publishedJWKS().keys.count == 4)
        clock.advance(3_600)
        #expect(try second.signer(for: .RS256).keyID == added.first { $0.algorithm == .RS256 }?.kid)
    }

    @Test func instancesStartingTogetherCreateOneSetOfKeys() throws {
        let pool = try migratedPool()
        defer { pool.close() }
        let created = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let count = (try? ring(pool, clock: TestClock()).ensureSigningKeys().count) ?? -100
            created.withLock { $0 += count }
        }
        #expect(created.withLock { $0 } == 2)
        #expect(
            try pool.query("SELECT count(*) AS n FROM signing_keys").first?.decode("n", as: Int.self) == 2)
    }

    @Test func jwksEndpointServesKeysThatVerifyIssuedTokens() throws {
        let app = try TestApplication()
        let response = try app.client.get("/jwks")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/jwk-set+json")
        #expect(response.header("Cache-Control") == "public, max-age=300")
        let jwks = try JSONDecoder().decode(JWKS.self, from: Data(response.body))
        #expect(jwks.keys.count == 2)
        #expect(!response.text.contains("\"d\""))
        for algorithm in [JWSAlgorithm.RS256, .ES256] {
            let token = try app.signingKeys.signer(for: algorithm).sign(
                payload: Array("{\"sub\":\"x\"}".utf8))
            let verified = try JWSVerifier(keys: jwks, allowedAlgorithms: [algorithm]).verify(token)
            #expect(verified.payload == Array("{\"sub\":\"x\"}".utf8))
        }
    }

    @Test func keyEncryptionKeySources() throws {
        var configuration = try #require(
            ConfigurationLoader.check(
                data: Data(#"{"issuer": "https://id.example.com", "clients": []}"#.utf8)
            ).configuration)
        configuration.databaseURL = "postgresql://db/auth"
        #expect(throws: StartupError.self) { _ = try KeyEncryptionKey.load(configuration, environment: [:]) }
        let fromEnvironment = try KeyEncryptionKey.load(
            configuration, environment: ["AUTH_SERVER_KEY_ENCRYPTION_KEY": TestApplication.keyEncryptionKey])
        #expect(fromEnvironment.bytes == Array(0..<32))
        do {
            _ = try KeyEncryptionKey.load(
                configuration, environment: ["AUTH_SERVER_KEY_ENCRYPTION_KEY": "short"])
            Issue.record("a short key must be refused")
        } catch let error as StartupError {
            #expect(error.description.contains("must be 32 bytes in base64url"))
        }

        // The embedded database keeps a generated key beside its data, readable only by its owner.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "kek-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        configuration.databaseURL = nil
        configuration.dataDirectory = directory.path
        let generated = try KeyEncryptionKey.load(configuration, environment: [:])
        let again = try KeyEncryptionKey.load(configuration, environment: [:])
        #expect(generated == again)
        let attributes = try FileManager.default.attributesOfItem(
            atPath: directory.appendingPathComponent(KeyEncryptionKey.embeddedFileName).path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }
}
