import Foundation
import Testing

@testable import HTTPServer

private struct Teapot: HTTPResponseError {
    var status: HTTPStatus { HTTPStatus(code: 418, reasonPhrase: "I'm a teapot") }
    func response() -> HTTPResponse { .text("short and stout", status: status) }
}

private struct Secret: Error { let detail = "database password is hunter2" }

private struct HeaderMiddleware: HTTPMiddleware {
    let name: String
    func handle(
        _ request: HTTPRequest, context: inout RequestContext,
        next: (HTTPRequest, inout RequestContext) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        var response = try next(request, &context)
        response.headers.append("X-Chain", name)
        return response
    }
}

private func makeRouter() -> Router {
    let router = Router()
    router.get("/") { _, _ in .text("root") }
    router.get("/users/me") { _, _ in .text("me") }
    router.get("/users/:id") { _, context in .text("user \(context.pathParameters["id"] ?? "?")") }
    router.delete("/users/:id") { _, _ in HTTPResponse(status: .noContent) }
    router.get("/users/:id/passkeys/:credentialID") { _, context in
        .text(
            "\(context.pathParameters["id"] ?? "")/\(context.pathParameters["credentialID"] ?? "")|\(context.route ?? "")"
        )
    }
    router.get("/static/*path") { _, context in .text("file \(context.pathParameters["path"] ?? "?")") }
    router.get("/teapot") { _, _ in throw Teapot() }
    router.get("/boom") { _, _ in throw Secret() }
    router.get("/forbidden") { _, _ in throw HTTPError(.forbidden, message: "nope", format: .json) }
    router.use(HeaderMiddleware(name: "outer"))
    router.use(HeaderMiddleware(name: "inner"))
    return router
}

@Suite struct RoutingTests {
    @Test func pathParametersLiteralsAndWildcards() throws {
        let (server, _) = try startServer(makeRouter())
        defer { server.shutdown() }
        #expect(try get(server.port, "/").text == "root")
        #expect(try get(server.port, "/users/me").text == "me")
        #expect(try get(server.port, "/users/42").text == "user 42")
        #expect(try get(server.port, "/users/a%20b").text == "user a b")
        #expect(
            try get(server.port, "/users/7/passkeys/abc").text == "7/abc|/users/:id/passkeys/:credentialID")
        #expect(try get(server.port, "/static/css/app.css").text == "file css/app.css")
        #expect(try get(server.port, "/static/").text == "file ")
    }

    /// Parameter-free patterns are found by a direct lookup; the answers must be those of the
    /// tree walk (literals first, trailing slashes significant, 405 for another method).
    @Test func exactPatternsMatchLikeTheTree() throws {
        let router = Router()
        router.get("/a") { _, context in .text("a \(context.route ?? "")") }
        router.get("/a/") { _, context in .text("a/ \(context.route ?? "")") }
        router.post("/b/c") { _, _ in .text("post") }
        router.get("/b/:x") { _, context in .text("param \(context.pathParameters["x"] ?? "")") }
        router.get("healthz") { _, _ in .text("no leading slash") }
        func call(_ method: HTTPMethod, _ target: String) throws -> (Int, String) {
            var context = RequestContext()
            let response = try router.respond(to: HTTPRequest(method: method, target: target), context: &context)
            return (response.status.code, String(decoding: response.body, as: UTF8.self))
        }
        #expect(try call(.get, "/a") == (200, "a /a"))
        #expect(try call(.get, "/a/") == (200, "a/ /a/"))
        #expect(try call(.get, "/a?x=1") == (200, "a /a"))
        #expect(try call(.head, "/a").0 == 200)
        #expect(try call(.post, "/b/c") == (200, "post"))
        #expect(try call(.get, "/b/c").0 == 405, "the literal node wins and has no GET")
        #expect(try call(.get, "/b/d") == (200, "param d"))
        #expect(try call(.get, "/healthz") == (200, "no leading slash"))
        #expect(try call(.get, "/a//").0 == 404)
    }

    @Test func unknownPathIs404AndWrongMethodIs405WithAllow() throws {
        let (server, _) = try startServer(makeRouter())
        defer { server.shutdown() }
        let missing = try get(server.port, "/nope")
        #expect(missing.status == 404)
        #expect(missing.header("X-Chain") != nil, "middleware wraps 404")
        let wrongMethod = try fetch(
            server.port,
            "POST /users/42 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("Allow") == "DELETE, GET, HEAD")
        #expect(try get(server.port, "/users/42/extra").status == 404)
    }

    @Test func headIsServedByGetWithoutBody() throws {
        let (server, _) = try startServer(makeRouter())
        defer { server.shutdown() }
        let client = try RawClient(port: server.port)
        client.send("HEAD /users/me HTTP/1.1\r\nHost: x\r\n\r\nGET /users/me HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try client.readResponse(expectBody: false)
        #expect(head.status == 200)
        #expect(head.header("Content-Length") == "2")
        // The next response on the same connection starts right after the head: no body was sent.
        let getResponse = try client.readResponse()
        #expect(getResponse.text == "me")
    }

    @Test func middlewareRunsInOrderAndSeesTheRoute() throws {
        let router = makeRouter()
        var context = RequestContext()
        let response = try router.respond(
            to: HTTPRequest(method: .get, target: "/users/5"), context: &context)
        #expect(response.headers.values("X-Chain") == ["inner", "outer"])
        #expect(context.route == "/users/:id")
        #expect(context.pathParameters == ["id": "5"])
    }

    @Test func errorsRenderThemselvesAndOthersBecomeGeneric500() throws {
        let (server, log) = try startServer(makeRouter())
        defer { server.shutdown() }
        let teapot = try get(server.port, "/teapot")
        #expect(teapot.status == 418)
        #expect(teapot.text == "short and stout")
        let forbidden = try get(server.port, "/forbidden")
        #expect(forbidden.status == 403)
        #expect(forbidden.text == #"{"error":"nope"}"#)
        #expect(forbidden.header("Content-Type") == "application/json")
        let boom = try get(server.port, "/boom")
        #expect(boom.status == 500)
        #expect(boom.text == "Internal Server Error")
        #expect(log.all.contains { $0.contains("event=http.handler_error") && $0.contains("hunter2") })
    }

    @Test func responsesCarryFramingHeadersAndTheAccessLogOmitsTheQuery() throws {
        let (server, log) = try startServer(makeRouter())
        defer { server.shutdown() }
        let response = try get(server.port, "/users/9?code=SECRETCODE&state=x")
        #expect(response.header("Content-Length") == "6")
        #expect(response.header("Date")?.hasSuffix(" GMT") == true)
        #expect(response.header("Connection") == "close")
        let requestID = try #require(response.header("X-Request-ID"))
        #expect(requestID.count == 16 && requestID.allSatisfy(\.isHexDigit))
        let line = try #require(log.all.first { $0.contains("request_id=\(requestID)") })
        #expect(
            line.hasPrefix(
                "event=http.request request_id=\(requestID) method=GET path=/users/9 status=200 duration_ms=")
        )
        #expect(line.contains("bytes=6 remote=127.0.0.1"))
        #expect(!log.all.joined().contains("SECRETCODE"))
    }

    @Test func onResponseReportsRouteStatusAndDuration() throws {
        let seen = LogCollector()
        let server = HTTPServer(
            configuration: .init(port: 0, workerThreads: 2), responder: makeRouter(), log: { _ in },
            onResponse: { request, context, status, duration in
                seen.append(
                    "\(request.method.rawValue) \(context.route ?? "-") \(status.code) \(duration >= .zero)")
            })
        try server.start()
        defer { server.shutdown() }
        _ = try get(server.port, "/users/3")
        _ = try get(server.port, "/missing")
        #expect(seen.all.sorted() == ["GET - 404 true", "GET /users/:id 200 true"])
    }

    @Test func accessLogLineFormatsDurationAndEscapesPath() {
        let line = ServerShared.accessLogLine(
            requestID: "0123456789abcdef", method: .post, path: "/a b\n\"%", status: 201,
            duration: .microseconds(1234), bytes: 5, remote: "::1")
        #expect(
            line
                == "event=http.request request_id=0123456789abcdef method=POST path=/a%20b%0A%22%25 status=201 "
                + "duration_ms=1.23 bytes=5 remote=::1")
        #expect(
            ServerShared.accessLogLine(
                requestID: "x", method: .get, path: "/", status: 200, duration: .seconds(12), bytes: 0,
                remote: "127.0.0.1"
            ).contains("duration_ms=12000.00 bytes=0 "))
    }
}
