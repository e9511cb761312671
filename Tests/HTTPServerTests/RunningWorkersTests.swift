import Foundation
import HTTPServer
import Synchronization
import Testing
import Turnstile

/// More worker threads than `runningWorkers`: the turnstile bounds the handlers running at once,
/// and a handler that waits through `Turnstile.whileBlocked` lets another run meanwhile.
@Suite struct RunningWorkersTests {
    @Test func noMoreHandlersRunAtOnceThanRunningWorkers() throws {
        let running = Mutex(0)
        let highest = Mutex(0)
        let router = Router()
        router.get("/busy") { _, _ in
            let now = running.withLock { value in
                value += 1
                return value
            }
            highest.withLock { $0 = max($0, now) }
            usleep(30_000)
            running.withLock { $0 -= 1 }
            return .text("done")
        }
        let (server, _) = try startServer(router) {
            $0.workerThreads = 4
            $0.runningWorkers = 1
        }
        defer { server.shutdown() }
        let answers = Mutex<[String]>([])
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread {
                let text = (try? get(server.port, "/busy").text) ?? "failed"
                answers.withLock { $0.append(text) }
                group.leave()
            }.start()
        }
        #expect(group.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(answers.withLock { $0 } == ["done", "done", "done", "done"])
        #expect(highest.withLock { $0 } == 1)
    }

    @Test func aHandlerWaitingLetsAnotherRun() throws {
        let entered = DispatchSemaphore(value: 0)
        let signal = DispatchSemaphore(value: 0)
        let router = Router()
        router.get("/wait") { _, _ in
            entered.signal()
            let signalled = Turnstile.whileBlocked { signal.wait(timeout: .now() + .seconds(3)) == .success }
            return .text(signalled ? "signalled" : "timed out")
        }
        router.get("/signal") { _, _ in
            signal.signal()
            return .text("sent")
        }
        let (server, _) = try startServer(router) {
            $0.workerThreads = 2
            $0.runningWorkers = 1
        }
        defer { server.shutdown() }
        let waiting = try RawClient(port: server.port, receiveTimeout: 10)
        waiting.send("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(entered.wait(timeout: .now() + .seconds(5)) == .success)
        #expect(try get(server.port, "/signal").text == "sent")
        #expect(try waiting.readResponse().text == "signalled")
    }
}
