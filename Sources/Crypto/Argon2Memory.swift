#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Dispatch
import Synchronization

/// Memory blocks for Argon2 kept between computations, at most one per computation that may
/// run at once (the `PasswordHasher`'s concurrency bound), each of the configured size.
///
/// libargon2 otherwise takes `m` KiB (19 MiB by default) from `malloc` for every hash. After
/// the first such block is freed, glibc raises its mmap threshold above that size, so later
/// blocks come from per-thread heap arenas that keep the freed memory: the server's resident
/// memory grew by a block per arena that ever hashed. Here each block is its own anonymous
/// mapping. While sign-ins follow each other its pages stay resident (faulting 19 MiB of fresh
/// pages into every computation cost a quarter of the password sign-in throughput); once no
/// computation has run for `releaseDelay`, the idle blocks' pages go back to the system
/// (`MADV_DONTNEED`): an idle server holds the address ranges only, a busy one at most
/// `capacity` blocks. A block lent here is wiped by libargon2 before it comes back (its
/// `free_memory` clears the memory before calling the release callback), and released pages
/// read as zeros afterwards, so no password-derived state stays in it between computations. A
/// computation that needs more memory than a block (a stored hash with larger parameters)
/// allocates its own, as before.
final class Argon2Memory: Sendable {
    /// Bytes per block: the configured `m` KiB.
    let blockBytes: Int
    /// The most blocks that exist at once.
    let capacity: Int
    /// How long the blocks stay resident after the last computation ended.
    let releaseDelay: DispatchTimeInterval

    private struct State {
        /// Idle blocks, as addresses (an address is `Sendable`, a pointer is not).
        var idle: [UInt] = []
        /// Blocks lent to computations running now.
        var lent = 0
        /// Moves on every lend and return, so a release scheduled before either does nothing.
        var generation: UInt64 = 0
        /// Whether the idle blocks' pages went back since their last use.
        var released = true
    }
    private let state = Mutex(State())

    init(memoryKiB: UInt32, capacity: Int, releaseDelay: DispatchTimeInterval = .seconds(1)) {
        blockBytes = Int(memoryKiB) * 1024
        self.capacity = max(1, capacity)
        self.releaseDelay = releaseDelay
    }

    deinit {
        for address in state.withLock({ $0.idle }) {
            if let block = UnsafeMutableRawPointer(bitPattern: address) { unmap(block) }
        }
    }

    /// The blocks kept for the next computations (at most `capacity`).
    var idleBlocks: Int { state.withLock { $0.idle.count } }

    /// Whether the idle blocks hold no pages (none has been used since they were released).
    var isReleased: Bool { state.withLock { $0.released } }

    /// Runs `body` with a block for `Argon2.hash(memory:)`. The caller holds one of the
    /// `capacity` permits, so at most `capacity` blocks are ever lent or idle.
    func withBlock<T>(_ body: (UnsafeMutableRawBufferPointer) throws(CryptoError) -> T) throws(CryptoError)
        -> T
    {
        let taken = state.withLock { state -> UInt? in
            state.lent += 1
            state.generation &+= 1
            state.released = false
            return state.idle.popLast()
        }.flatMap(UnsafeMutableRawPointer.init(bitPattern:))
        guard let block = taken ?? map() else {
            giveBack(nil)
            throw .openSSLFailure("argon2: memory allocation")
        }
        defer { giveBack(block) }
        return try body(UnsafeMutableRawBufferPointer(start: block, count: blockBytes))
    }

    /// Keeps `block` for the next computation (or unmaps it beyond `capacity`) and, when it was
    /// the last one lent, schedules the release of the idle blocks' pages.
    private func giveBack(_ block: UnsafeMutableRawPointer?) {
        let address = block.map { UInt(bitPattern: $0) }
        let (kept, generation) = state.withLock { state -> (Bool, UInt64?) in
            state.lent -= 1
            state.generation &+= 1
            var kept = false
            if let address, state.idle.count < capacity {
                state.idle.append(address)
                kept = true
            }
            return (kept, state.lent == 0 ? state.generation : nil)
        }
        if let block, !kept { unmap(block) }
        guard let generation else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + releaseDelay) { [weak self] in
            self?.release(ifStill: generation)
        }
    }

    /// Returns the idle blocks' pages to the system if nothing was lent or returned since
    /// `generation`; the ranges stay for the next computation.
    private func release(ifStill generation: UInt64) {
        state.withLock { state in
            guard state.generation == generation, state.lent == 0 else { return }
            for address in state.idle {
                if let block = UnsafeMutableRawPointer(bitPattern: address) {
                    _ = madvise(block, blockBytes, Int32(MADV_DONTNEED))
                }
            }
            state.released = true
        }
    }

    private func map() -> UnsafeMutableRawPointer? {
        let block = mmap(nil, blockBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        return block == MAP_FAILED ? nil : block
    }

    private func unmap(_ block: UnsafeMutableRawPointer) {
        _ = munmap(block, blockBytes)
    }
}
