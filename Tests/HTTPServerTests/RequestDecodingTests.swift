import Foundation
import Testing

@testable import HTTPServer

/// The status of the HTTPError `body` throws, nil when it does not throw one.
private func errorStatus<T>(_ body: () throws(HTTPError) -> T) -> HTTPStatus? {
    do {
        _ = try body()
        return nil
    } catch {
        return error.status
    }
}

@Suite struct RequestDecodingTests {
    @Test func queryItemsKeepOrderAndDuplicatesAndDecodePlus() throws {
        let request = HTTPRequest(
            method: .get,
            target: "/authorize?scope=openid+email&x=1&x=2&redirect_uri=https%3A%2F%2Fa.example%2Fcb&flag")
        #expect(request.path == "/authorize")
        #expect(
            request.rawQuery == "scope=openid+email&x=1&x=2&redirect_uri=https%3A%2F%2Fa.example%2Fcb&flag")
        let items = try request.decodedQuery()
        #expect(items.map(\.name) == ["scope", "x", "x", "redirect_uri", "flag"])
        #expect(items.map(\.value) == ["openid email", "1", "2", "https://a.example/cb", ""])
        #expect(request.queryValue("x") == "1")
    }

    @Test func malformedQueryEncodingIsRefusedByDecodedQuery() {
        let request = HTTPRequest(method: .get, target: "/a?good=1&bad=%zz")
        #expect(throws: HTTPError.self) { try request.decodedQuery() }
        #expect(request.queryItems.map(\.name) == ["good"])
        do {
            _ = try request.decodedQuery()
        } catch {
            #expect(error.status == .badRequest)
        }
    }

    @Test func formItemsRequireFormContentType() throws {
        let form = HTTPRequest(
            method: .post, target: "/token",
            headers: ["Content-Type": "application/x-www-form-urlencoded; charset=UTF-8"],
            body: Array("grant_type=authorization_code&code=a%2Bb&redirect_uri=x+y".utf8))
        let items = try form.formItems()
        #expect(items.map(\.name) == ["grant_type", "code", "redirect_uri"])
        #expect(items.map(\.value) == ["authorization_code", "a+b", "x y"])

        let json = HTTPRequest(
            method: .post, target: "/token", headers: ["Content-Type": "application/json"], body: [])
        #expect(errorStatus { () throws(HTTPError) in try json.formItems() } == .unsupportedMediaType)
        let broken = HTTPRequest(
            method: .post, target: "/token", headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Array("a=%4".utf8))
        #expect(errorStatus { () throws(HTTPError) in try broken.formItems() } == .badRequest)
    }

    @Test func cookiesFirstOccurrenceWins() {
        let request = HTTPRequest(
            method: .get, target: "/",
            headers: [("Cookie", "sid=abc; theme=\"dark\""), ("cookie", "sid=other; lang=ja")].reduce(
                into: HTTPFields()
            ) {
                $0.append($1.0, $1.1)
            })
        #expect(request.cookies == ["sid": "abc", "theme": "dark", "lang": "ja"])
    }

    private struct Payload: Codable, Equatable {
        var name: String
        var count: Int
    }

    @Test func decodeJSONChecksContentTypeAndShape() throws {
        let good = HTTPRequest(
            method: .post, target: "/", headers: ["Content-Type": "application/json; charset=utf-8"],
            body: Array(#"{"name":"a","count":2}"#.utf8))
        #expect(try good.decodeJSON(Payload.self) == Payload(name: "a", count: 2))
        let vendor = HTTPRequest(
            method: .post, target: "/", headers: ["Content-Type": "application/merge-patch+json"],
            body: Array(#"{"name":"b","count":3}"#.utf8))
        #expect(try vendor.decodeJSON(Payload.self).name == "b")
        let wrongType = HTTPRequest(
            method: .post, target: "/", headers: ["Content-Type": "text/plain"], body: [])
        #expect(
            errorStatus { () throws(HTTPError) in try wrongType.decodeJSON(Payload.self) }
                == .unsupportedMediaType)
        let malformed = HTTPRequest(
            method: .post, target: "/", headers: ["Content-Type": "application/json"], body: Array("{".utf8))
        #expect(errorStatus { () throws(HTTPError) in try malformed.decodeJSON(Payload.self) } == .badRequest)
    }

    @Test func headerFieldsAreOrderedAndCaseInsensitive() {
        var fields: HTTPFields = ["Set-Cookie": "a=1"]
        fields.append("set-cookie", "b=2")
        fields.append("X-Other", "x")
        #expect(fields["SET-COOKIE"] == "a=1")
        #expect(fields.values("Set-Cookie") == ["a=1", "b=2"])
        fields.set("SET-cookie", "c=3")
        #expect(fields.values("set-cookie") == ["c=3"])
        #expect(fields.map(\.name) == ["Set-Cookie", "X-Other"])
        fields.remove("x-other")
        #expect(fields.count == 1)
    }

    @Test func responseHelpers() throws {
        struct Document: Encodable { let issuer: String; let a: Int }
        let json = try HTTPResponse.json(Document(issuer: "https://id.example/", a: 1))
        #expect(String(decoding: json.body, as: UTF8.self) == #"{"a":1,"issuer":"https://id.example/"}"#)
        #expect(json.headers["Content-Type"] == "application/json")
        let redirect = HTTPResponse.redirect(to: "https://app.example/cb?code=x")
        #expect(redirect.status == .seeOther)
        #expect(redirect.headers["Location"] == "https://app.example/cb?code=x")
        #expect(HTTPResponse.html("<p>").headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(HTTPStatus(code: 413).reasonPhrase == "Content Too Large")
        #expect(HTTPStatus.payloadTooLarge.code == 413 && HTTPStatus.requestHeaderFieldsTooLarge.code == 431)
    }

    @Test func cookieHeaderValue() {
        var response = HTTPResponse()
        response.setCookie(Cookie(name: "sid", value: "abc", maxAge: 3600))
        response.setCookie(
            Cookie(
                name: "pref", value: "a;b", path: "/account", domain: "id.example",
                expires: Date(timeIntervalSince1970: 0), secure: false, httpOnly: false, sameSite: .strict))
        #expect(
            response.headers.values("Set-Cookie") == [
                "sid=abc; Path=/; Max-Age=3600; Secure; HttpOnly; SameSite=Lax",
                "pref=a%3Bb; Path=/account; Domain=id.example; Expires=Thu, 01 Jan 1970 00:00:00 GMT; SameSite=Strict",
            ])
        #expect(Cookie.expired(name: "sid").headerValue.contains("Max-Age=0"))
    }

    @Test func bodiesAndDecodedPathsArriveOverTheWire() throws {
        let router = Router()
        router.post("/echo/:name") { request, context in
            let form = try request.formItems()
            return .text(
                "\(request.path)|\(context.pathParameters["name"] ?? "")|\(form.map { "\($0.name)=\($0.value)" }.joined(separator: ","))"
            )
        }
        let (server, _) = try startServer(router)
        defer { server.shutdown() }
        let body = "a=1&b=two+words"
        let response = try fetch(
            server.port,
            "POST /echo/caf%C3%A9?x=1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        #expect(response.text == "/echo/café|café|a=1,b=two words")
        let unsupported = try fetch(
            server.port,
            "POST /echo/x HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        #expect(unsupported.status == 415)
        #expect(try get(server.port, "/echo/%zz").status == 400)
        #expect(try get(server.port, "/echo/a%00b").status == 400)
    }
}
