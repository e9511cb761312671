import Crypto
import Foundation
import Postgres
import Synchronization
import Testing
import WebAuthnCore

@testable import AuthServer

/// The sign-in and sign-up flows draw every challenge, id and user handle from the injected
/// `TimeAndRandomness` and hand them to their store: checked here with in-memory stores.
@Suite struct SignInFlowTests {
    /// Each draw returns its own number in every byte: 1, then 2, …
    static func numberedDraws() -> TimeAndRandomness {
        let draws = Atomic<Int>(0)
        return TimeAndRandomness(
            now: { Date(timeIntervalSince1970: 1_800_000_000) },
            randomBytes: { count in
                [UInt8](repeating: UInt8(draws.add(1, ordering: .relaxed).newValue), count: count)
            })
    }

    static func services() -> AccountServices {
        let configuration = Configuration(
            issuer: "http://localhost:8080", listen: .init(host: "127.0.0.1", port: 0),
            databaseURL: "postgresql://unused.invalid/none", dataDirectory: "var", publicDirectory: "public",
            tls: nil, http: .init(), database: .init(), clients: [])
        return AccountServices(
            configuration: configuration,
            pool: PostgresPool(url: "postgresql://unused.invalid/none", maxConnections: 1),
            log: Log(write: { _ in }), hasher: TestApplication.hasher, system: numberedDraws())
    }

    @Test func passkeySignInStartStoresTheDrawnChallenge() throws {
        let services = Self.services()
        let store = PasskeySignInStoreStub()
        let started = try PasskeySignInFlow(services: services, store: store).start()
        // The first draw made the id, the second the challenge.
        let challenge = [UInt8](repeating: 2, count: 32)
        #expect(started.options.challenge == Base64URL.encode(challenge))
        let inserted = try #require(store.inserted.withLock { $0 })
        #expect(inserted.id == started.challengeID)
        #expect(inserted.challenge == challenge)
        #expect(inserted.lifetimeSeconds == services.configuration.webAuthn.challengeLifetimeSeconds)
    }

    @Test func passkeySignUpStartReservesDrawnIDsAndHandle() throws {
        let services = Self.services()
        let store = SignUpStoreStub()
        let started = try SignUpFlow(services: services, store: store).startPasskey(
            email: "Alice@Example.com", displayName: " Alice ")
        let registration = try #require(store.registration.withLock { $0 })
        #expect(registration.id == started.registrationID)
        #expect(registration.prospectiveAccountID != registration.id)
        #expect(registration.userHandle == [UInt8](repeating: 3, count: 32))
        #expect(registration.challenge == [UInt8](repeating: 4, count: 32))
        #expect(started.options.challenge == Base64URL.encode(registration.challenge))
        #expect(started.options.user.id == Base64URL.encode(registration.userHandle))
        #expect(started.options.user.displayName == "Alice")
    }
}

private final class PasskeySignInStoreStub: PasskeySignInStore, Sendable {
    let inserted = Mutex<(id: UUID, challenge: [UInt8], lifetimeSeconds: Int)?>(nil)

    func insertChallenge(id: UUID, challenge: [UInt8], lifetimeSeconds: Int) throws {
        inserted.withLock { $0 = (id, challenge, lifetimeSeconds) }
    }
    func consumeChallenge(id: UUID) throws -> [UInt8]? { nil }
    func passkey(credentialID: [UInt8]) throws -> (PasskeyRecord, userHandle: [UInt8], accountDisabled: Bool)?
    {
        nil
    }
    func recordUse(of passkeyID: UUID, signCount: UInt32, backedUp: Bool) throws {}
    func startSession(_ start: SessionStart) throws -> (token: String, session: CurrentSession) {
        throw StubUnused()
    }
    func record(_ event: AuditEvent) throws {}
    func transaction<T>(_ body: (any PasskeySignInStore) throws -> T) throws -> T { try body(self) }
}

private final class SignUpStoreStub: SignUpStore, Sendable {
    let registration = Mutex<PasskeyStore.AccountRegistration?>(nil)

    func countSignUp(normalizedEmail: String, client: String, windowSeconds: Int) throws -> [WindowCounter
        .Count]
    {
        []
    }
    func insertAccount(id: UUID, displayName: String, email: EmailAddress, userHandle: [UInt8]) throws {}
    func setPassword(accountID: UUID, hash: String) throws {}
    func insertRegistration(_ registration: PasskeyStore.AccountRegistration, lifetimeSeconds: Int) throws {
        self.registration.withLock { $0 = registration }
    }
    func completeRegistration(id: UUID) throws -> PasskeyStore.AccountRegistration? { nil }
    func insertPasskey(_ registration: VerifiedRegistration, accountID: UUID, name: String) throws {}
    func startSession(_ start: SessionStart) throws -> (token: String, session: CurrentSession) {
        throw StubUnused()
    }
    func record(_ event: AuditEvent) throws {}
    func transaction<T>(_ body: (any SignUpStore) throws -> T) throws -> T { try body(self) }
}

private struct StubUnused: Error {}
