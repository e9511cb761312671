import Foundation
import Testing

@testable import HTTPServer

@Suite struct ShutdownTests {
    @Test func gracefulShutdownFinishesInFlightRequestsThenRefusesConnections() throws {
        let gate = Gate()
        let router = Router()
        router.get("/slow") { _, _ in
            gate.pass()
            return .text("finished")
        }
        router.get("/hello") { _, _ in .text("hello") }
        let (server, log) = try startServer(router)
        let port = server.port

        let idle = try RawClient(port: port)
        idle.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try idle.readResponse().status == 200)

        let inFlight = try RawClient(port: port, receiveTimeout: 10)
        inFlight.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(gate.waitUntilEntered())

        let stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            server.shutdown(gracePeriod: .seconds(10))
            stopped.signal()
        }
        // Idle keep-alive connections are closed, new connections refused.
        #expect(idle.waitForClose())
        var refused = false
        for _ in 0..<100 where !refused {
            refused = (try? RawClient(port: port)) == nil
            if !refused { Thread.sleep(forTimeInterval: 0.02) }
        }
        #expect(refused)
        #expect(stopped.wait(timeout: .now()) == .timedOut, "shutdown waits for the in-flight request")

        gate.release()
        let response = try inFlight.readResponse()
        #expect(response.text == "finished")
        #expect(response.header("Connection") == "close")
        #expect(stopped.wait(timeout: .now() + 10) == .success)
        server.waitUntilStopped()
        #expect(log.all.contains("event=http.stopped"))
    }

    @Test func gracePeriodBoundsShutdown() throws {
        let gate = Gate()
        let router = Router()
        router.get("/stuck") { _, _ in
            gate.pass()
            return .text("late")
        }
        let (server, _) = try startServer(router)
        let client = try RawClient(port: server.port, receiveTimeout: 10)
        client.send("GET /stuck HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(gate.waitUntilEntered())
        let stopping = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            // Releases the handler only after the grace period has cut the connection.
            _ = stopping.wait(timeout: .now() + 10)
            gate.release()
        }
        server.shutdown(gracePeriod: .milliseconds(200))
        #expect(client.waitForClose())
        stopping.signal()
    }

    @Test func shutdownIsIdempotentAndWaitReturnsForUnstartedServers() throws {
        let unstarted = HTTPServer(
            configuration: .init(port: 0, workerThreads: 1), responder: Router(), log: { _ in })
        unstarted.waitUntilStopped()
        unstarted.shutdown()
        let (server, _) = try startServer(Router())
        server.shutdown()
        server.shutdown()
        server.waitUntilStopped()
    }

    @Test func sigtermStopsTheServer() throws {
        let (server, _) = try startServer(Router())
        server.stopOnSignals([SIGUSR2])
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            server.waitUntilStopped()
            done.signal()
        }
        // The dispatch source registers asynchronously; repeat the signal until it is seen.
        var stopped = false
        for _ in 0..<100 where !stopped {
            kill(getpid(), SIGUSR2)
            stopped = done.wait(timeout: .now() + 0.1) == .success
        }
        #expect(stopped)
    }
}
