import Foundation
import Testing

@testable import HTTPServer

/// Larger than any socket buffer, so a worker's write of it stops part-way.
private let bigBody = [UInt8](unsafeUninitializedCapacity: 6_000_000) { buffer, count in
    for index in 0..<buffer.count { buffer[index] = UInt8(truncatingIfNeeded: index % 251) }
    count = buffer.count
}

private func echoRouter() -> Router {
    let router = Router()
    router.get("/hello") { _, _ in .text("hello") }
    router.get("/n/:n") { _, context in .text(context.pathParameters["n"] ?? "") }
    router.post("/echo") { request, _ in HTTPResponse(body: request.body) }
    router.get("/close") { _, _ in HTTPResponse(headers: ["Connection": "close"], body: Array("bye".utf8)) }
    router.get("/big") { _, _ in HTTPResponse(body: bigBody) }
    return router
}

@Suite struct ConnectionTests {
    @Test func keepAliveServesSeveralRequestsOnOneConnection() throws {
        let (server, _) = try startServer(echoRouter())
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        let first = try client.readResponse()
        #expect(first.text == "hello")
        #expect(first.header("Connection") == nil)
        client.send("GET /n/2 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "2")
    }

    /// The worker writes what the socket takes; the loop writes the rest when the client
    /// reads, then serves the next pipelined request on the same connection.
    @Test func responseLargerThanTheSocketBufferIsCompletedByTheLoop() throws {
        let (server, _) = try startServer(echoRouter())
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send("GET /big HTTP/1.1\r\nHost: x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        // Not reading for a moment lets the socket buffers fill while the worker writes.
        Thread.sleep(forTimeInterval: 0.2)
        let big = try client.readResponse()
        #expect(big.status == 200)
        #expect(big.body.count == bigBody.count)
        #expect(big.body == bigBody)
        #expect(try client.readResponse().text == "hello")
    }

    @Test func severalEventLoopsShareTheConnections() throws {
        let (server, _) = try startServer(echoRouter()) { $0.eventLoopThreads = 3 }
        defer { server.shutdown() }
        let clients = try (0..<6).map { _ in try RawClient(port: server.port) }
        for round in 1...2 {
            for (index, client) in clients.enumerated() {
                client.send("GET /n/\(index * 10 + round) HTTP/1.1\r\nHost: x\r\n\r\n")
            }
            for (index, client) in clients.enumerated() {
                #expect(try client.readResponse().text == "\(index * 10 + round)")
            }
        }
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let (server, _) = try startServer(echoRouter())
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        let requests = (1...5).map { "GET /n/\($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined()
        client.send(requests + "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
        for n in 1...5 { #expect(try client.readResponse().text == "\(n)") }
        #expect(try client.readResponse().text == "abc")
    }

    @Test func http10ClosesUnlessKeepAliveIsAsked() throws {
        let (server, _) = try startServer(echoRouter())
        defer { server.shutdown() }
        let plain = try RawClient(port: server.port)
        plain.send("GET /hello HTTP/1.0\r\n\r\n")
        #expect(try plain.readResponse().header("Connection") == "close")
        #expect(plain.waitForClose())

        let keepAlive = try RawClient(port: server.port)
        keepAlive.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try keepAlive.readResponse().header("Connection") == "keep-alive")
        keepAlive.send("GET /n/7 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try keepAlive.readResponse().text == "7")
    }

    @Test func handlerAskingForCloseClosesTheConnection() throws {
        let (server, _) = try startServer(echoRouter())
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send("GET /close HTTP/1.1\r\nHost: x\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.text == "bye" && response.header("Connection") == "close")
        #expect(client.waitForClose())
    }

    @Test func chunkedBodiesAreDecoded() throws {
        let (server, _) = try startServer(echoRouter())
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
        Thread.sleep(forTimeInterval: 0.05)
        client.send("7;ext=1\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n")
        #expect(try client.readResponse().text == "hello, world")
        // The connection stays usable after a chunked request.
        client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().text == "hello")
    }

    @Test func expectContinueGetsAnInterimResponse() throws {
        let (server, _) = try startServer(echoRouter())
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        let interim = try client.readResponse(expectBody: false)
        #expect(interim.status == 100)
        client.send("data")
        #expect(try client.readResponse().text == "data")
    }

    @Test func curlInteroperates() throws {
        let (server, _) = try startServer(echoRouter())
        defer { server.shutdown() }
        let gets = try run(
            "/usr/bin/curl",
            ["-s", "http://127.0.0.1:\(server.port)/hello", "http://127.0.0.1:\(server.port)/n/3"])
        #expect(gets.status == 0)
        #expect(gets.output == "hello3")
        // Over 1 KiB curl sends `Expect: 100-continue`.
        let payload = String(repeating: "x", count: 5000)
        let post = try run("/usr/bin/curl", ["-s", "-d", payload, "http://127.0.0.1:\(server.port)/echo"])
        #expect(post.status == 0)
        #expect(post.output.count == 5000 && post.output == payload)
    }
}
