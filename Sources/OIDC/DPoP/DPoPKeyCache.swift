import Synchronization

/// The checked headers of recent DPoP proofs: algorithm, public key (converted and validated)
/// and thumbprint, by the header's exact text. A client sends the same header (its key) with
/// every proof, and turning a JWK into a validated OpenSSL key (the point check includes a
/// scalar multiplication) costs about as much as the signature verification itself; with the
/// cache, a proof check costs little more than its one verification. Only headers that passed
/// every check are kept, and a hit is byte-for-byte the same header, so the verdict is the same.
public final class DPoPKeyCache: Sendable {
    public struct Entry: Sendable {
        public let algorithm: JWSAlgorithm
        public let jwk: JWK
        public let key: SigningPublicKey
        public let thumbprint: String
    }

    private let capacity: Int
    private let entries = Mutex<[String: Entry]>([:])

    /// `capacity`: the number of headers kept; when it is reached the cache starts again empty
    /// (cheap, and a burst of new keys cannot grow memory).
    public init(capacity: Int = 10_000) {
        self.capacity = max(1, capacity)
    }

    func entry(forHeader header: String, _ check: () throws(DPoPError) -> Entry) throws(DPoPError) -> Entry {
        if let hit = entries.withLock({ $0[header] }) { return hit }
        let checked = try check()
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[header] = checked
        }
        return checked
    }

    /// The number of headers held.
    public var count: Int { entries.withLock { $0.count } }
}
