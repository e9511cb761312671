#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Synchronization

/// Memory blocks for Argon2 kept between computations, at most one per computation that may
/// run at once (the `PasswordHasher`'s concurrency bound), each of the configured size.
///
/// libargon2 otherwise takes `m` KiB (19 MiB by default) from `malloc` for every hash. After
/// the first such block is freed, glibc raises its mmap threshold above that size, so later
/// blocks come from per-thread heap arenas that keep the freed memory: the server's resident
/// memory grew by a block per arena that ever hashed. Here each block is its own anonymous
/// mapping, and its pages go back to the system (`MADV_DONTNEED`) as soon as a computation
/// ends: an idle server holds the address ranges only, and a busy one at most `capacity`
/// blocks. A block lent here is wiped by libargon2 before it comes back (its `free_memory`
/// clears the memory before calling the release callback), and the released pages read as
/// zeros afterwards, so no password-derived state stays in it between computations. A
/// computation that needs more memory than a block (a stored hash with larger parameters)
/// allocates its own, as before.
final class Argon2Memory: Sendable {
    /// Bytes per block: the configured `m` KiB.
    let blockBytes: Int
    /// The most blocks that exist at once.
    let capacity: Int
    /// Idle blocks, as addresses (an address is `Sendable`, a pointer is not).
    private let idle = Mutex<[UInt]>([])

    init(memoryKiB: UInt32, capacity: Int) {
        blockBytes = Int(memoryKiB) * 1024
        self.capacity = max(1, capacity)
    }

    deinit {
        for address in idle.withLock({ $0 }) {
            if let block = UnsafeMutableRawPointer(bitPattern: address) { unmap(block) }
        }
    }

    /// The blocks kept for the next computations (at most `capacity`).
    var idleBlocks: Int { idle.withLock { $0.count } }

    /// Runs `body` with a block for `Argon2.hash(memory:)`. The caller holds one of the
    /// `capacity` permits, so at most `capacity` blocks are ever lent or idle.
    func withBlock<T>(_ body: (UnsafeMutableRawBufferPointer) throws(CryptoError) -> T) throws(CryptoError)
        -> T
    {
        let taken = idle.withLock { $0.popLast() }.flatMap(UnsafeMutableRawPointer.init(bitPattern:))
        guard let block = taken ?? map() else { throw .openSSLFailure("argon2: memory allocation") }
        defer {
            // The pages go back to the system; the range stays for the next computation.
            _ = madvise(block, blockBytes, Int32(MADV_DONTNEED))
            let address = UInt(bitPattern: block)
            let kept = idle.withLock { idle -> Bool in
                guard idle.count < capacity else { return false }
                idle.append(address)
                return true
            }
            if !kept { unmap(block) }
        }
        return try body(UnsafeMutableRawBufferPointer(start: block, count: blockBytes))
    }

    private func map() -> UnsafeMutableRawPointer? {
        let block = mmap(nil, blockBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        return block == MAP_FAILED ? nil : block
    }

    private func unmap(_ block: UnsafeMutableRawPointer) {
        _ = munmap(block, blockBytes)
    }
}
