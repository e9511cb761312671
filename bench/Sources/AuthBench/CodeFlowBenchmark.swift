import Foundation
import Synchronization

/// `auth-bench codeflow`: the authorization code flow of a signed-in browser, the same for any
/// server. One flow is GET /authorize with the session cookie (answered by a redirect carrying
/// `code`, RFC 6749 §4.1.2) and the client's POST /token exchanging that code (§4.1.3, with the
/// PKCE `code_verifier` of RFC 7636 §4.5 when given). A flow counts once the token answer is 200
/// with an `access_token`; its latency is that of both requests.
///
/// Each connection plays a browser and its client: two keep-alive connections, one for each
/// endpoint, as the browser and the client's backend would hold. Bytes are prepared once; per
/// flow only the code is cut out of the `Location` header and spliced into the token body.
struct CodeFlowBenchmark: Sendable {
    /// Where a request goes: loopback port and the request target (path and query).
    struct Endpoint: Sendable {
        var port: UInt16
        var target: String

        /// `http://127.0.0.1:PORT/path?query` (or `localhost`): the load generator talks to loopback only.
        init?(url: String) {
            guard let components = URLComponents(string: url), components.scheme == "http",
                let host = components.host, host == "127.0.0.1" || host == "localhost",
                let port = components.port, let port = UInt16(exactly: port),
                !components.percentEncodedPath.isEmpty
            else { return nil }
            self.port = port
            self.target =
                components.percentEncodedPath
                + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        }
    }

    var authorize: Endpoint
    var token: Endpoint
    /// `name=value` pairs sent as one `Cookie` header on every authorization request.
    var cookies: [String]
    /// The client's `Authorization` header (`Basic …`, RFC 6749 §2.3.1).
    var authorization: String
    var redirectURI: String
    var codeVerifier: String?

    /// The authorization request, identical for every flow.
    var authorizeRequest: [UInt8] {
        HTTPConnection.encode(
            "GET", authorize.target, port: authorize.port,
            headers: cookies.isEmpty ? [] : [("Cookie", cookies.joined(separator: "; "))])
    }

    /// The token request's head up to (not including) its `Content-Length`, and the body around the code.
    var tokenRequestParts: (head: [UInt8], bodyPrefix: [UInt8], bodySuffix: [UInt8]) {
        let head =
            "POST \(token.target) HTTP/1.1\r\nHost: 127.0.0.1:\(token.port)\r\n"
            + "Authorization: \(authorization)\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        var suffix = "&redirect_uri=\(Self.formEncoded(redirectURI))"
        if let codeVerifier { suffix += "&code_verifier=\(Self.formEncoded(codeVerifier))" }
        return (Array(head.utf8), Array("grant_type=authorization_code&code=".utf8), Array(suffix.utf8))
    }

    /// `application/x-www-form-urlencoded` value: everything but the unreserved characters escaped.
    static func formEncoded(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    /// The bytes of the `code` parameter's value in the query of a redirect `Location` (RFC 6749
    /// §4.1.2), as sent: still percent-encoded, which is also a valid form value for the token
    /// request. Nil when there is none (an error redirect, or a sign-in page).
    static func code(inLocation location: String) -> ArraySlice<UInt8>? {
        let bytes = Array(location.utf8)
        guard var index = bytes.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        index += 1
        let end = bytes.firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        let name = Array("code=".utf8)
        while index < end {
            let next = bytes[index..<end].firstIndex(of: UInt8(ascii: "&")) ?? end
            if next - index > name.count, bytes[index..<(index + name.count)].elementsEqual(name) {
                return bytes[(index + name.count)..<next]
            }
            index = next + 1
        }
        return nil
    }

    /// Whether a JSON body has an `access_token` member (compact or not).
    static func hasAccessToken(_ body: [UInt8]) -> Bool {
        let needle = Array("\"access_token\"".utf8)
        guard body.count >= needle.count else { return false }
        var index = 0
        while index + needle.count <= body.count {
            if body[index] == needle[0] && body[index..<(index + needle.count)].elementsEqual(needle) {
                return true
            }
            index += 1
        }
        return false
    }

    /// Runs `connections` flows in a closed loop for `seconds`; the result line of `Measurements`.
    func run(connections: Int, seconds: Double) -> String {
        let measurements = Measurements()
        let firstError = FirstError()
        let authorizeRequest = self.authorizeRequest
        let (tokenHead, bodyPrefix, bodySuffix) = tokenRequestParts
        let started = monotonicSeconds()
        let deadline = started + seconds
        let authorizePort = authorize.port
        let tokenPort = token.port
        runThreads(connections) { _ in
            let browser = HTTPConnection(port: authorizePort)
            let client = HTTPConnection(port: tokenPort)
            var latencies: [Double] = []
            var ok = 0
            var errors = 0
            var statuses: [Int: Int] = [:]
            var request: [UInt8] = []
            request.reserveCapacity(tokenHead.count + bodyPrefix.count + bodySuffix.count + 256)
            while monotonicSeconds() < deadline {
                let begin = monotonicSeconds()
                do {
                    let redirect = try browser.send(authorizeRequest)
                    statuses[redirect.status, default: 0] += 1
                    guard (300..<400).contains(redirect.status), let location = redirect.header("location"),
                        let code = Self.code(inLocation: location)
                    else {
                        errors += 1
                        firstError.report("authorize", redirect)
                        continue
                    }
                    let length = bodyPrefix.count + code.count + bodySuffix.count
                    request.removeAll(keepingCapacity: true)
                    request += tokenHead
                    request += Array("Content-Length: \(length)\r\n\r\n".utf8)
                    request += bodyPrefix
                    request += code
                    request += bodySuffix
                    let answer = try client.send(request)
                    statuses[answer.status, default: 0] += 1
                    guard answer.status == 200, Self.hasAccessToken(answer.body) else {
                        errors += 1
                        firstError.report("token", answer)
                        continue
                    }
                    ok += 1
                    latencies.append(answer.receivedAt - begin)
                } catch {
                    errors += 1
                    firstError.report("connection", error)
                }
            }
            measurements.record(latencies, ok: ok, errors: errors, statuses: statuses)
        }
        return measurements.summary(seconds: monotonicSeconds() - started)
    }
}

/// Prints the first failure of a run to stderr, once: enough to see why, without flooding.
final class FirstError: Sendable {
    private let reported = Mutex(false)

    func report(_ step: String, _ reply: HTTPReply) {
        once {
            let location = reply.header("location").map { " location=\($0.prefix(300))" } ?? ""
            return
                "\(step): status=\(reply.status)\(location) body=\(String(decoding: reply.body.prefix(500), as: UTF8.self))"
        }
    }

    func report(_ step: String, _ error: any Error) {
        once { "\(step): \(error)" }
    }

    private func once(_ line: () -> String) {
        let first = reported.withLock { reported in
            defer { reported = true }
            return !reported
        }
        if first {
            FileHandle.standardError.write(Data("auth-bench codeflow: first error: \(line())\n".utf8))
        }
    }
}
