import Synchronization

/// Memory blocks for Argon2 kept between computations, at most one per computation that may
/// run at once (the `PasswordHasher`'s concurrency bound), each of the configured size.
///
/// libargon2 otherwise allocates and frees `m` KiB (19 MiB by default) for every hash, and a
/// fresh mapping costs a page fault per 4 KiB page before the first pass can write it. A
/// block lent here is wiped by libargon2 before it comes back (its `free_memory` clears the
/// memory before calling the release callback), so no password-derived state stays in it
/// between computations. A computation that needs more memory than a block (a stored hash
/// with larger parameters) allocates its own, as before.
final class Argon2Memory: Sendable {
    /// Bytes per block: the configured `m` KiB.
    let blockBytes: Int
    /// The most blocks that exist at once.
    let capacity: Int
    /// Idle blocks, as addresses (an address is `Sendable`, a pointer is not).
    private let idle = Mutex<[UInt]>([])
    private static let alignment = 64

    init(memoryKiB: UInt32, capacity: Int) {
        blockBytes = Int(memoryKiB) * 1024
        self.capacity = max(1, capacity)
    }

    deinit {
        for address in idle.withLock({ $0 }) {
            UnsafeMutableRawPointer(bitPattern: address)?.deallocate()
        }
    }

    /// The blocks kept for the next computations (at most `capacity`).
    var idleBlocks: Int { idle.withLock { $0.count } }

    /// Runs `body` with a block for `Argon2.hash(memory:)`. The caller holds one of the
    /// `capacity` permits, so at most `capacity` blocks are ever lent or idle.
    func withBlock<T>(_ body: (UnsafeMutableRawBufferPointer) throws(CryptoError) -> T) throws(CryptoError)
        -> T
    {
        let taken = idle.withLock { $0.popLast() }
        let block =
            taken.flatMap(UnsafeMutableRawPointer.init(bitPattern:))
            ?? UnsafeMutableRawPointer.allocate(byteCount: blockBytes, alignment: Self.alignment)
        defer {
            let address = UInt(bitPattern: block)
            let kept = idle.withLock { idle -> Bool in
                guard idle.count < capacity else { return false }
                idle.append(address)
                return true
            }
            if !kept { block.deallocate() }
        }
        return try body(UnsafeMutableRawBufferPointer(start: block, count: blockBytes))
    }
}
