import Foundation
import Testing

@testable import AuthServer

/// Broken and hostile bytes on the wire, sent over raw TCP to the whole application: every
/// one gets its exact 4xx (or 501 for a transfer coding the server does not implement),
/// never a 5xx or a dropped process.
@Suite("Hostile input: HTTP framing")
struct HostileHTTPTests {
    static let host = "Host: 127.0.0.1\r\n"

    static func framingCases(_ c: HostileCatalogue) -> [HostileCase] {
        let h = host
        let bigHeader = "X-Filler: " + String(repeating: "a", count: 20_000) + "\r\n"
        let manyHeaders = (0..<900).map { "X-H\($0): 1234567890\r\n" }.joined()
        let longTarget = "/healthz?" + String(repeating: "q", count: 17_000)
        let hugeBody = String(repeating: "x", count: 1_048_577)
        var cases: [HostileCase] = [
            // Request lines.
            .init("no version", 400) { try c.raw("GET /healthz\r\n\(h)\r\n") },
            .init("HTTP/2.0", 400) { try c.raw("GET /healthz HTTP/2.0\r\n\(h)\r\n") },
            .init("HTTP/1.10", 400) { try c.raw("GET /healthz HTTP/1.10\r\n\(h)\r\n") },
            .init("HTTP/1.x", 400) { try c.raw("GET /healthz HTTP/1.x\r\n\(h)\r\n") },
            .init("lowercase protocol", 400) { try c.raw("GET /healthz http/1.1\r\n\(h)\r\n") },
            .init("extra word", 400) { try c.raw("GET /healthz HTTP/1.1 extra\r\n\(h)\r\n") },
            .init("two spaces", 400) { try c.raw("GET  /healthz HTTP/1.1\r\n\(h)\r\n") },
            .init("leading space", 400) { try c.raw(" GET /healthz HTTP/1.1\r\n\(h)\r\n") },
            .init("empty method", 400) { try c.raw(" /healthz HTTP/1.1\r\n\(h)\r\n") },
            .init("method with @", 400) { try c.raw("G@T /healthz HTTP/1.1\r\n\(h)\r\n") },
            .init("method with NUL", 400) { try c.raw("GE\u{0}T /healthz HTTP/1.1\r\n\(h)\r\n") },
            .init("relative target", 400) { try c.raw("GET healthz HTTP/1.1\r\n\(h)\r\n") },
            .init("target with tab", 400) { try c.raw("GET /heal\tthz HTTP/1.1\r\n\(h)\r\n") },
            .init("target with DEL", 400) { try c.raw("GET /heal\u{7F}thz HTTP/1.1\r\n\(h)\r\n") },
            .init("target with raw UTF-8", 400) { try c.raw("GET /héalthz HTTP/1.1\r\n\(h)\r\n") },
            .init("target with invalid UTF-8", 400) {
                try c.raw(Array("GET /".utf8) + [0xFF, 0xFE] + Array(" HTTP/1.1\r\n\(h)\r\n".utf8))
            },
            .init("asterisk with GET", 400) { try c.raw("GET * HTTP/1.1\r\n\(h)\r\n") },
            .init("scheme-relative target is only a path", 404) {
                try c.raw("GET //evil.example/ HTTP/1.1\r\n\(h)\r\n")
            },
            .init("bare LF line ends", 400) { try c.raw("GET /healthz HTTP/1.1\nHost: x\n\n") },
            .init("bare LF after the request line", 400) { try c.raw("GET /healthz HTTP/1.1\n\(h)\r\n") },
            .init("binary garbage", 400) {
                try c.raw([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03, 13, 10, 13, 10])
            },
            .init("request line too long", 431) { try c.raw("GET \(longTarget) HTTP/1.1\r\n\(h)\r\n") },
            // Headers.
            .init("no Host in HTTP/1.1", 400) { try c.raw("GET /healthz HTTP/1.1\r\n\r\n") },
            .init("two Host headers", 400) {
                try c.raw("GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")
            },
            .init("two Host headers, same value", 400) {
                try c.raw("GET /healthz HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n")
            },
            .init("header without colon", 400) { try c.raw("GET /healthz HTTP/1.1\r\n\(h)Broken\r\n\r\n") },
            .init("empty header name", 400) { try c.raw("GET /healthz HTTP/1.1\r\n\(h): value\r\n\r\n") },
            .init("space before colon", 400) { try c.raw("GET /healthz HTTP/1.1\r\n\(h)X-A : 1\r\n\r\n") },
            .init("space in header name", 400) { try c.raw("GET /healthz HTTP/1.1\r\n\(h)X A: 1\r\n\r\n") },
            .init("obsolete line folding", 400) {
                try c.raw("GET /healthz HTTP/1.1\r\n\(h)X-A: 1\r\n 2\r\n\r\n")
            },
            .init("NUL in header value", 400) {
                try c.raw("GET /healthz HTTP/1.1\r\n\(h)X-A: a\u{0}b\r\n\r\n")
            },
            .init("CR inside header value", 400) {
                try c.raw("GET /healthz HTTP/1.1\r\n\(h)X-A: a\rb\r\n\r\n")
            },
            .init("escape byte in header value", 400) {
                try c.raw("GET /healthz HTTP/1.1\r\n\(h)X-A: \u{1B}[31m\r\n\r\n")
            },
            .init("invalid UTF-8 header value is opaque", 200) {
                try c.raw(
                    Array("GET /healthz HTTP/1.1\r\n\(h)X-A: ".utf8) + [0xC3, 0x28, 0xFF]
                        + Array("\r\n\r\n".utf8))
            },
            .init("one huge header", 431) { try c.raw("GET /healthz HTTP/1.1\r\n\(h)\(bigHeader)\r\n") },
            .init("900 headers", 431) { try c.raw("GET /healthz HTTP/1.1\r\n\(h)\(manyHeaders)\r\n") },
            .init("huge cookie", 431) {
                try c.raw(
                    "GET /account HTTP/1.1\r\n\(h)Cookie: s=\(String(repeating: "c", count: 17_000))\r\n\r\n")
            },
            // Body framing.
            .init("two Content-Length", 400) {
                try c.raw("POST /token HTTP/1.1\r\n\(h)Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc")
            },
            .init("two conflicting Content-Length", 400) {
                try c.raw("POST /token HTTP/1.1\r\n\(h)Content-Length: 3\r\nContent-Length: 30\r\n\r\nabc")
            },
            .init("Content-Length list", 400) {
                try c.raw("POST /token HTTP/1.1\r\n\(h)Content-Length: 3, 3\r\n\r\nabc")
            },
            .init("negative Content-Length", 400) {
                try c.raw("POST /token HTTP/1.1\r\n\(h)Content-Length: -1\r\n\r\n")
            },
            .init("plus-signed Content-Length", 400) {
                try c.raw("POST /token HTTP/1.1\r\n\(h)Content-Length: +3\r\n\r\nabc")
            },
            .init("hex Content-Length", 400) {
                try c.raw("POST /token HTTP/1.1\r\n\(h)Content-Length: 0x3\r\n\r\nabc")
            },
            .init("empty Content-Length", 400) {
                try c.raw("POST /token HTTP/1.1\r\n\(h)Content-Length:\r\n\r\n")
            },
            .init("overflowing Content-Length", 400) {
                try c.raw("POST /token HTTP/1.1\r\n\(h)Content-Length: 99999999999999999999999\r\n\r\n")
            },
            .init("Content-Length over the limit", 413) {
                try c.raw("POST /token HTTP/1.1\r\n\(h)Content-Length: 1048577\r\n\r\n")
            },
            .init("body over the limit", 413) {
                try c.raw(
                    "POST /api/signin/password HTTP/1.1\r\n\(h)Content-Type: application/json\r\nContent-Length: \(hugeBody.utf8.count)\r\n\r\n\(hugeBody)"
                )
            },
            .init("Expect 100-continue over the limit", 413) {
                try c.raw(
                    "POST /token HTTP/1.1\r\n\(h)Expect: 100-continue\r\nContent-Length: 5000000\r\n\r\n")
            },
            .init("Content-Length and Transfer-Encoding", 400) {
                try c.raw(
                    "POST /token HTTP/1.1\r\n\(h)Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
                )
            },
            .init("Transfer-Encoding and Content-Length", 400) {
                try c.raw(
                    "POST /token HTTP/1.1\r\n\(h)Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
                )
            },
            .init("chunked not last", 400) {
                try c.raw("POST /token HTTP/1.1\r\n\(h)Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n")
            },
            .init("unknown coding", 400) {
                try c.raw("POST /token HTTP/1.1\r\n\(h)Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n")
            },
            .init("gzip then chunked", 501) {
                try c.raw("POST /token HTTP/1.1\r\n\(h)Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n")
            },
            .init("Transfer-Encoding in HTTP/1.0", 400) {
                try c.raw("POST /token HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
            },
            .init("bad chunk size", 400) {
                try c.raw(
                    "POST /token HTTP/1.1\r\n\(h)Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n")
            },
            .init("negative chunk size", 400) {
                try c.raw(
                    "POST /token HTTP/1.1\r\n\(h)Transfer-Encoding: chunked\r\n\r\n-3\r\nabc\r\n0\r\n\r\n")
            },
            .init("chunk size too long", 400) {
                try c.raw(
                    "POST /token HTTP/1.1\r\n\(h)Transfer-Encoding: chunked\r\n\r\n0000000000000000003\r\nabc\r\n0\r\n\r\n"
                )
            },
            .init("chunk data not terminated", 400) {
                try c.raw(
                    "POST /token HTTP/1.1\r\n\(h)Transfer-Encoding: chunked\r\n\r\n3\r\nabcdef\r\n0\r\n\r\n")
            },
            .init("chunked body over the limit", 413) {
                try c.raw(
                    "POST /token HTTP/1.1\r\n\(h)Transfer-Encoding: chunked\r\n\r\n100001\r\n"
                        + String(repeating: "y", count: 1_048_577) + "\r\n0\r\n\r\n")
            },
            .init("chunk extension with control byte", 400) {
                try c.raw(
                    "POST /token HTTP/1.1\r\n\(h)Transfer-Encoding: chunked\r\n\r\n3;a=\u{1}\r\nabc\r\n0\r\n\r\n"
                )
            },
            // Smuggling shapes that a front proxy might read differently.
            .init("Transfer-Encoding with a space before the colon", 400) {
                try c.raw(
                    "POST /token HTTP/1.1\r\n\(h)Transfer-Encoding : chunked\r\nContent-Length: 3\r\n\r\nabc")
            },
            .init("Transfer-Encoding with a tab in the name", 400) {
                try c.raw("POST /token HTTP/1.1\r\n\(h)Transfer-Encoding\t: chunked\r\n\r\n0\r\n\r\n")
            },
        ]
        // Bad percent-encoding and invalid UTF-8 in queries, paths and form bodies.
        let badTargets: [(String, Int)] = [
            ("/signin?return_to=%zz", 400), ("/signin?return_to=%", 400), ("/signin?login_hint=%C3%28", 400),
            ("/signin?login_hint=%FF%FE", 400), ("/signup?login_hint=%E0%80%80", 400),
            ("/account?x=%zz", 400), ("/recover?email=%FF", 400), ("/.well-known/openid-configuration?%zz", 400),
            ("/authorize?client_id=%zz", 400), ("/authorize?client_id=web-app&redirect_uri=%", 400),
            ("/authorize?client_id=%FF", 400), ("/static/%2e%2e/%2e%2e/etc/passwd", 404),
            ("/static/..%2f..%2fPackage.swift", 404), ("/static/%00", 400),
            ("/logout?id_token_hint=%zz", 400),
        ]
        for (target, status) in badTargets {
            cases.append(.init("target \(target)", status) { try c.get(target) })
        }
        let badBodies: [(String, [UInt8])] = [
            ("bad escape", Array("grant_type=client_credentials&scope=%zz".utf8)),
            ("truncated escape", Array("grant_type=client_credentials&scope=%4".utf8)),
            ("invalid UTF-8 escape", Array("grant_type=client_credentials&scope=%C3%28".utf8)),
            ("raw invalid UTF-8", Array("grant_type=client_credentials&scope=".utf8) + [0xFF, 0xC0]),
        ]
        cases.append(
            .init("token body: NUL in the grant type", 400, "unsupported_grant_type") {
                try c.postBody(
                    "/token", Array("grant_type=client_credentials%00&scope=api.read".utf8),
                    headers: [OAuthFixtures.basic()])
            })
        for (name, body) in badBodies {
            cases.append(
                .init("token body: \(name)", 400, "invalid_request") {
                    try c.postBody("/token", body, headers: [OAuthFixtures.basic()])
                })
        }
        return cases
    }

    @Test func brokenRequestsGetTheirExactStatus() throws {
        let app = try OAuthFixtures.app()
        let catalogue = HostileCatalogue(app: app)
        let cases = Self.framingCases(catalogue)
        #expect(cases.count >= 70)
        try catalogue.run(cases)
    }
}
