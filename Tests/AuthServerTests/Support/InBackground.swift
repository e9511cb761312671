import Foundation
import Synchronization
import Testing

/// A request sent on a thread of its own, for a test that holds a lock meanwhile; `reply()`
/// waits for its answer.
final class InBackground: Sendable {
    private let answer = Mutex<TestAgent.Reply?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ send: @escaping @Sendable () throws -> TestAgent.Reply) {
        Thread { [self] in
            let reply = try? send()
            answer.withLock { $0 = reply }
            done.signal()
        }.start()
    }

    func reply() throws -> TestAgent.Reply {
        done.wait()
        return try #require(answer.withLock { $0 })
    }
}
