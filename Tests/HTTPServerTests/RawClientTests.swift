import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The raw test client shares its process with servers that other tests start at the same
/// time, so a refused connection must close its own socket once and nothing else.
@Suite struct RawClientTests {
    @Test func aRefusedConnectionClosesNoDescriptorOfAnotherThread() throws {
        let port = try unusedPort()
        let stop = Atomic<Bool>(false)
        let lost = Atomic<Int>(0)
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            // Opens descriptors while the refusals run; each must still be open when this
            // thread closes it itself.
            while !stop.load(ordering: .relaxed) {
                let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                guard fd >= 0 else { continue }
                sched_yield()
                if fcntl(fd, F_GETFD) == -1 { lost.add(1, ordering: .relaxed) } else { Glibc.close(fd) }
            }
            finished.signal()
        }
        for _ in 0..<3_000 {
            #expect((try? RawClient(port: port)) == nil)
        }
        stop.store(true, ordering: .relaxed)
        finished.wait()
        #expect(lost.load(ordering: .relaxed) == 0, "descriptors closed under another thread")
    }

    /// A loopback port that nothing listens on: bound, never listened, then released.
    private func unusedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestError() }
        defer { Glibc.close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw TestError() }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
