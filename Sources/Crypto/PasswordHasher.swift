import Dispatch
import Foundation

/// The outcome of checking a password against a stored hash.
public struct PasswordVerification: Sendable, Equatable {
    /// The password matches.
    public let isValid: Bool
    /// The stored hash uses an older scheme or weaker parameters than the current policy:
    /// after a successful sign-in the caller should store `hash(password)` instead.
    public let needsRehash: Bool

    public init(isValid: Bool, needsRehash: Bool) {
        self.isValid = isValid
        self.needsRehash = needsRehash
    }
}

/// Hashes passwords with Argon2id into PHC strings, and verifies Argon2 (any variant),
/// scrypt and PBKDF2-SHA256/512 hashes imported from other systems.
///
/// Each computation needs `memoryKiB` of memory (19 MiB by default), so the number running
/// at once is bounded: beyond `maxConcurrent`, callers wait up to `maxWait` and then get
/// `CryptoError.overloaded`, so a burst of sign-ins cannot exhaust memory. Copies of a
/// hasher share one bound. Both methods block the calling thread; call them from a worker
/// thread, not from a cooperative-pool task.
public struct PasswordHasher: Sendable {
    /// Argon2id cost parameters. The defaults are the OWASP minimum
    /// (m = 19 MiB, t = 2, p = 1); raise them where the hardware allows.
    public struct Parameters: Sendable, Equatable {
        public var memoryKiB: UInt32
        public var iterations: UInt32
        public var parallelism: UInt32

        public init(memoryKiB: UInt32 = 19_456, iterations: UInt32 = 2, parallelism: UInt32 = 1) {
            self.memoryKiB = memoryKiB
            self.iterations = iterations
            self.parallelism = parallelism
        }
    }

    public let parameters: Parameters
    public let maxWait: Duration
    let limiter: ConcurrencyLimiter
    /// One Argon2 block per permit of `limiter`, reused: `maxConcurrent` × `memoryKiB` at most.
    let memory: Argon2Memory

    static let saltByteCount = 16
    static let hashByteCount = 32

    public init(
        parameters: Parameters = .init(),
        maxConcurrent: Int = ProcessInfo.processInfo.activeProcessorCount,
        maxWait: Duration = .seconds(2)
    ) {
        self.parameters = parameters
        self.maxWait = maxWait
        self.limiter = ConcurrencyLimiter(limit: max(1, maxConcurrent))
        self.memory = Argon2Memory(memoryKiB: parameters.memoryKiB, capacity: max(1, maxConcurrent))
    }

    /// Hashes with Argon2id v1.3, a fresh 16-byte salt and a 32-byte tag:
    /// `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>` (base64 without padding).
    public func hash(_ password: String) throws(CryptoError) -> String {
        let salt = SecureRandom.bytes(count: Self.saltByteCount)
        let tag = try limiter.run(maxWait: maxWait) { () throws(CryptoError) -> [UInt8] in
            try memory.withBlock { block throws(CryptoError) -> [UInt8] in
                try Argon2.hash(
                    password: Array(password.utf8), salt: salt, variant: .argon2id,
                    iterations: parameters.iterations, memoryKiB: parameters.memoryKiB,
                    parallelism: parameters.parallelism, length: Self.hashByteCount, memory: block)
            }
        }
        let p = parameters
        return "$argon2id$v=19$m=\(p.memoryKiB),t=\(p.iterations),p=\(p.parallelism)$"
            + Base64Codec.standard.encode(salt) + "$" + Base64Codec.standard.encode(tag)
    }

    /// Checks `password` against a stored PHC string. A wrong password is
    /// `isValid == false`; an unparseable or unsupported stored hash is
    /// `CryptoError.invalidPasswordHash`.
    public func verify(_ password: String, against phc: String) throws(CryptoError) -> PasswordVerification {
        let stored = try PHCString(parsing: phc)
        let computed = try limiter.run(maxWait: maxWait) { () throws(CryptoError) -> [UInt8] in
            try memory.withBlock { block throws(CryptoError) -> [UInt8] in
                try stored.compute(password: Array(password.utf8), memory: block)
            }
        }
        let isValid = constantTimeEquals(computed, stored.hash)
        return PasswordVerification(isValid: isValid, needsRehash: stored.isWeaker(than: parameters))
    }
}

extension PasswordHasher {
    /// Spends the same work as verifying against a current hash, for a sign-in attempt
    /// whose account does not exist or has no password, so response time does not reveal
    /// which accounts exist.
    public func verifyWithoutAccount(_ password: String) throws(CryptoError) {
        let salt = [UInt8](repeating: 0x5a, count: Self.saltByteCount)
        _ = try limiter.run(maxWait: maxWait) { () throws(CryptoError) -> [UInt8] in
            try memory.withBlock { block throws(CryptoError) -> [UInt8] in
                try Argon2.hash(
                    password: Array(password.utf8), salt: salt, variant: .argon2id,
                    iterations: parameters.iterations, memoryKiB: parameters.memoryKiB,
                    parallelism: parameters.parallelism, length: Self.hashByteCount, memory: block)
            }
        }
    }
}

/// A counting semaphore with a timeout, bounding concurrent password computations.
final class ConcurrencyLimiter: Sendable {
    private let semaphore: DispatchSemaphore

    init(limit: Int) { semaphore = DispatchSemaphore(value: limit) }

    /// Waits for a permit up to `maxWait`; `false` when none came.
    func acquire(maxWait: Duration) -> Bool {
        let (seconds, attoseconds) = maxWait.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        let clamped = Int(min(nanoseconds, Int64(Int32.max) * 1_000_000_000))
        return semaphore.wait(timeout: .now() + .nanoseconds(clamped)) == .success
    }

    func release() { semaphore.signal() }

    func run<T>(maxWait: Duration, _ body: () throws(CryptoError) -> T) throws(CryptoError) -> T {
        guard acquire(maxWait: maxWait) else { throw .overloaded }
        defer { release() }
        return try body()
    }
}
