import Foundation
import Testing

@testable import HTTPServer

/// A gate a handler waits on, so tests control exactly when a "slow" handler finishes
/// instead of relying on sleeps.
final class Gate: Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let released = DispatchSemaphore(value: 0)

    /// Called by the handler: signal arrival, then block until released (at most 10 s).
    func pass() {
        entered.signal()
        _ = released.wait(timeout: .now() + 10)
    }

    func waitUntilEntered() -> Bool { entered.wait(timeout: .now() + 10) == .success }

    func release() { released.signal() }
}

private func limitsRouter(gate: Gate? = nil) -> Router {
    let router = Router()
    router.get("/hello") { _, _ in .text("hello") }
    router.post("/echo") { request, _ in HTTPResponse(body: request.body) }
    router.get("/slow") { _, _ in
        gate?.pass()
        return .text("slow")
    }
    return router
}

@Suite struct LimitsTests {
    @Test func oversizedHeadIs431ThenClose() throws {
        let (server, _) = try startServer(limitsRouter())
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send(
            "GET /hello HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: 17_000))\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 431)
        #expect(response.header("Connection") == "close")
        #expect(client.waitForClose())
        // Just under the limit is fine.
        let ok = try get(
            server.port, "/hello", headers: "X-Big: \(String(repeating: "a", count: 16_000))\r\n")
        #expect(ok.status == 200)
    }

    @Test func oversizedBodyIs413ThenClose() throws {
        let (server, _) = try startServer(limitsRouter()) { $0.maxBodyBytes = 1000 }
        defer { server.shutdown() }
        let declared = try RawClient(port: server.port)
        declared.send(
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n"
                + String(repeating: "b", count: 1001))
        #expect(try declared.readResponse().status == 413)
        #expect(declared.waitForClose())

        let chunked = try RawClient(port: server.port)
        chunked.send(
            "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n\(String(repeating: "c", count: 1000))\r\n1\r\nd\r\n0\r\n\r\n"
        )
        #expect(try chunked.readResponse().status == 413)
        #expect(chunked.waitForClose())

        let exact = try fetch(
            server.port,
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n"
                + String(repeating: "e", count: 1000))
        #expect(exact.status == 200 && exact.body.count == 1000)
    }

    @Test(arguments: [
        "GARBAGE\r\n\r\n",
        "GET /hello\r\n\r\n",
        "GET /hello HTTP/2.0\r\nHost: x\r\n\r\n",
        "GET /hello HTTP/1.1 extra\r\nHost: x\r\n\r\n",
        "GET hello HTTP/1.1\r\nHost: x\r\n\r\n",
        "G(T /hello HTTP/1.1\r\nHost: x\r\n\r\n",
        "GET /hello HTTP/1.1\r\nHost: x\r\nBad Header: x\r\n\r\n",
        "GET /hello HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n",
        "GET /hello HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
        "GET /hello HTTP/1.1\nHost: x\n\n",
        "GET /hello HTTP/1.1\r\nHost: x\r\nX: a\u{1}b\r\n\r\n",
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3, 3\r\n\r\nabc",
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
        "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
        "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n",
        "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
        "POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "GET /hello HTTP/1.1\r\nConnection: close\r\n\r\n",
        "GET /hello HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
    ])
    func malformedRequestsAre400ThenClose(request: String) throws {
        let (server, _) = try startServer(limitsRouter())
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send(request)
        let response = try client.readResponse()
        #expect(response.status == 400)
        #expect(client.waitForClose())
        // The server is still serving.
        #expect(try get(server.port, "/hello").text == "hello")
    }

    @Test func unsupportedTransferCodingIs501() throws {
        let (server, _) = try startServer(limitsRouter())
        defer { server.shutdown() }
        let response = try fetch(
            server.port, "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"
        )
        #expect(response.status == 501)
    }

    @Test func randomBytesNeverCrashTheServer() throws {
        let (server, _) = try startServer(limitsRouter())
        defer { server.shutdown() }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            let client = try RawClient(port: server.port, receiveTimeout: 2)
            let bytes = (0..<Int.random(in: 1...3000, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            client.send(bytes)
        }
        #expect(try get(server.port, "/hello").text == "hello")
    }

    @Test func connectionsOverTheLimitGet503() throws {
        let (server, _) = try startServer(limitsRouter()) { $0.maxConnections = 2 }
        defer { server.shutdown() }
        let first = try RawClient(port: server.port)
        let second = try RawClient(port: server.port)
        for client in [first, second] {
            client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
        }
        let third = try RawClient(port: server.port)
        let rejected = try third.readResponse()
        #expect(rejected.status == 503)
        #expect(third.waitForClose())
        // Closing one frees a slot.
        first.send("GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        _ = try first.readResponse()
        #expect(first.waitForClose())
        var served = false
        for _ in 0..<50 where !served {
            let retry = try RawClient(port: server.port)
            retry.send("GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            served = (try? retry.readResponse().status) == 200
            if !served { Thread.sleep(forTimeInterval: 0.05) }
        }
        #expect(served)
    }

    @Test func headerReadTimeoutClosesTheConnection() throws {
        let (server, log) = try startServer(limitsRouter()) { $0.headerReadTimeout = .milliseconds(300) }
        defer { server.shutdown() }
        let partial = try RawClient(port: server.port)
        partial.send("GET /hello HTTP/1.1\r\nHost:")
        #expect(partial.waitForClose())
        let silent = try RawClient(port: server.port)
        #expect(silent.waitForClose())
        #expect(!log.all.contains { $0.contains("event=http.request ") })
    }

    /// Empty lines before a request line are skipped (RFC 9112 §2.2), but they are bytes of
    /// the head: a client dripping CR and LF, one byte at a time, gets the head's time limit
    /// once, not a new one with each empty line (which held a connection open for ever).
    @Test func emptyLinesDrippedBeforeARequestDoNotExtendTheHeadsTimeLimit() throws {
        let (server, _) = try startServer(limitsRouter()) { $0.headerReadTimeout = .milliseconds(600) }
        defer { server.shutdown() }
        let client = try RawClient(port: server.port, receiveTimeout: 0.2)
        let started = ContinuousClock.now
        var closed = false
        for index in 0..<20 where !closed {
            if client.waitForClose() { closed = true } else { client.send(index % 2 == 0 ? "\r" : "\n") }
        }
        #expect(closed)
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test func idleKeepAliveConnectionsAreClosed() throws {
        let (server, _) = try startServer(limitsRouter()) { $0.idleTimeout = .milliseconds(300) }
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        #expect(client.waitForClose())
    }

    @Test func slowlorisClientsDoNotBlockOthers() throws {
        let (server, _) = try startServer(limitsRouter()) { $0.workerThreads = 2 }
        defer { server.shutdown() }
        let slow = try (0..<20).map { _ in try RawClient(port: server.port) }
        let line = Array("GET /hello HTTP/1.1\r\nHost: x\r\n".utf8)
        for index in 0..<3 {
            for client in slow { client.send([line[index]]) }
            #expect(try get(server.port, "/hello").text == "hello")
        }
    }

    @Test func blockedHandlerDoesNotBlockOtherRequests() throws {
        let gate = Gate()
        let (server, _) = try startServer(limitsRouter(gate: gate))
        defer { server.shutdown() }
        let slow = try RawClient(port: server.port, receiveTimeout: 10)
        slow.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(gate.waitUntilEntered())
        // While the slow handler is still blocked, other requests are answered.
        for _ in 0..<3 { #expect(try get(server.port, "/hello").text == "hello") }
        gate.release()
        #expect(try slow.readResponse().text == "slow")
    }

    @Test func fullWorkerQueueIs503() throws {
        let gate = Gate()
        let (server, _) = try startServer(limitsRouter(gate: gate)) {
            $0.workerThreads = 1
            $0.maxQueuedRequests = 1
        }
        defer { server.shutdown() }
        let busy = try RawClient(port: server.port, receiveTimeout: 10)
        busy.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(gate.waitUntilEntered())
        let queued = try RawClient(port: server.port, receiveTimeout: 10)
        queued.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        // The queue holds one request; wait until it is taken so the next one overflows.
        var overflowed = false
        for _ in 0..<50 where !overflowed {
            let response = try get(server.port, "/hello")
            overflowed = response.status == 503
            if !overflowed { Thread.sleep(forTimeInterval: 0.02) }
        }
        #expect(overflowed)
        gate.release()
        #expect(try busy.readResponse().text == "slow")
        #expect(try queued.readResponse().text == "hello")
    }

    @Test func addressInUseIsAClearError() throws {
        let (server, _) = try startServer(limitsRouter())
        defer { server.shutdown() }
        let second = HTTPServer(
            configuration: .init(port: server.port, workerThreads: 1), responder: limitsRouter(),
            log: { _ in })
        #expect(throws: HTTPServerError.addressInUse(host: "127.0.0.1", port: server.port)) {
            try second.start()
        }
    }
}

@Suite struct ConnectionsPerAddressTests {
    @Test func oneAddressCannotTakeEveryConnection() throws {
        // Defaults, apart from an ephemeral port: 64 connections per client address.
        let (server, _) = try startServer(limitsRouter())
        defer { server.shutdown() }
        var held: [RawClient] = []
        for _ in 0..<64 {
            let client = try RawClient(port: server.port)
            client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            held.append(client)
        }
        let over = try RawClient(port: server.port)
        #expect(try over.readResponse().status == 503)
        #expect(over.waitForClose())
        // Another address is still served while the first holds its 64.
        let other = try RawClient(port: server.port, source: "127.0.0.2")
        other.send("GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(try other.readResponse().status == 200)
    }

    @Test func keepAliveConnectionsIdleAtMostFifteenSecondsByDefault() {
        #expect(HTTPServer.Configuration().idleTimeout <= .seconds(15))
    }
}

@Suite struct ConnectionLimitExemptionTests {
    @Test func aTrustedProxyIsNotHeldToThePerAddressLimit() throws {
        let (server, _) = try startServer(limitsRouter()) {
            $0.maxConnectionsPerAddress = 2
            $0.connectionLimitExemptions = [AddressRange("127.0.0.1/32")].compactMap { $0 }
        }
        defer { server.shutdown() }
        var held: [RawClient] = []
        for _ in 0..<5 {
            let client = try RawClient(port: server.port)
            client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            held.append(client)
        }
        // Another loopback address is not exempt.
        let first = try RawClient(port: server.port, source: "127.0.0.3")
        let second = try RawClient(port: server.port, source: "127.0.0.3")
        for client in [first, second] {
            client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
        }
        let third = try RawClient(port: server.port, source: "127.0.0.3")
        #expect(try third.readResponse().status == 503)
    }
}

@Suite struct AddressConnectionCountsTests {
    @Test func eachAddressHasItsOwnLimit() {
        var counts = AddressConnectionCounts(limit: 2)
        let admitted = (0..<3).map { _ in counts.admit("192.0.2.1") }
        #expect(admitted == [true, true, false])
        let other = counts.admit("192.0.2.2")
        #expect(other)
        counts.release("192.0.2.1")
        #expect(counts.count("192.0.2.1") == 1)
        let again = counts.admit("192.0.2.1")
        #expect(again)
        counts.release("192.0.2.2")
        counts.release("192.0.2.2")
        #expect(counts.count("192.0.2.2") == 0)
    }
}
