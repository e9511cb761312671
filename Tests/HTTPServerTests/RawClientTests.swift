import Foundation
import Synchronization
import Testing

@testable import HTTPServer

#if canImport(Glibc)
    import Glibc
#endif

/// The raw test client shares its process with servers that other tests start at the same
/// time, so a refused connection must close its own socket once and nothing else.
@Suite struct RawClientTests {
    @Test func aRefusedConnectionClosesNoDescriptorOfAnotherThread() throws {
        // A loopback port that nothing listens on any more.
        let (server, _) = try startServer(Router())
        let port = server.port
        server.shutdown()
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
}
