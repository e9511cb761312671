import Foundation
import Testing

@testable import HTTPServer

@Suite struct StaticFilesTests {
    private func makeSite() throws -> (root: URL, server: HTTPServer) {
        let base = try temporaryDirectory()
        let root = base.appendingPathComponent("public")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("css"), withIntermediateDirectories: true)
        try "body{color:red}".write(
            to: root.appendingPathComponent("css/app.css"), atomically: true, encoding: .utf8)
        try "<h1>hi</h1>".write(
            to: root.appendingPathComponent("index.html"), atomically: true, encoding: .utf8)
        try "hidden".write(to: root.appendingPathComponent(".env"), atomically: true, encoding: .utf8)
        try "secret".write(to: base.appendingPathComponent("secret.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(
            at: root.appendingPathComponent("escape.txt"),
            withDestinationURL: base.appendingPathComponent("secret.txt"))
        let files = StaticFiles(directory: root)
        let router = Router()
        router.get("/static/*path") { request, context in
            files.response(for: context.pathParameters["path"] ?? "", request: request)
        }
        let (server, _) = try startServer(router)
        return (base, server)
    }

    @Test func servesFilesWithTypeETagAndCaching() throws {
        let (base, server) = try makeSite()
        defer {
            server.shutdown()
            try? FileManager.default.removeItem(at: base)
        }
        let css = try get(server.port, "/static/css/app.css")
        #expect(css.status == 200)
        #expect(css.text == "body{color:red}")
        #expect(css.header("Content-Type") == "text/css; charset=utf-8")
        #expect(css.header("Cache-Control") == "public, max-age=300")
        let etag = try #require(css.header("ETag"))
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""))
        #expect(
            try get(server.port, "/static/index.html").header("Content-Type") == "text/html; charset=utf-8")

        let revalidated = try fetch(
            server.port,
            "GET /static/css/app.css HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"other\", \(etag)\r\nConnection: close\r\n\r\n"
        )
        #expect(revalidated.status == 304)
        #expect(revalidated.body.isEmpty)
        #expect(revalidated.header("ETag") == etag)
        let changedTag = try get(server.port, "/static/css/app.css", headers: "If-None-Match: \"stale\"\r\n")
        #expect(changedTag.status == 200)
    }

    @Test(arguments: [
        "/static/../secret.txt", "/static/%2e%2e/secret.txt", "/static/css/%2E%2E/%2E%2E/secret.txt",
        "/static/..%2fsecret.txt", "/static/.env", "/static/escape.txt", "/static/css", "/static/missing.js",
        "/static/", "/static/css//app.css", "/static/css/app.css%00.png",
    ])
    func refusesTraversalHiddenAndMissingFiles(target: String) throws {
        let (base, server) = try makeSite()
        defer {
            server.shutdown()
            try? FileManager.default.removeItem(at: base)
        }
        let response = try get(server.port, target)
        #expect(response.status == 404 || response.status == 400)
        #expect(!response.text.contains("secret") && !response.text.contains("hidden"))
    }
}
