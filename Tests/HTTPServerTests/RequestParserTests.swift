import Testing

@testable import HTTPServer

@Suite struct RequestParserTests {
    private func parseAll(_ wire: String, chunkSize: Int, maxBody: Int = 1000) throws -> [ParsedRequest] {
        var parser = RequestParser(maxHeaderBytes: 16_384, maxBodyBytes: maxBody)
        var input = InputBuffer()
        var requests: [ParsedRequest] = []
        let bytes = Array(wire.utf8)
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + chunkSize, bytes.count)
            input.compact()
            input.bytes.append(contentsOf: bytes[offset..<end])
            offset = end
            while let request = try parser.parse(&input) { requests.append(request) }
        }
        #expect(input.count == 0)
        return requests
    }

    @Test(arguments: [1, 2, 7, 1000])
    func incrementalParsingGivesTheSameRequests(chunkSize: Int) throws {
        let wire =
            "\r\nPOST /a?x=1 HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "3;x=y\r\nabc\r\nA\r\n0123456789\r\n0\r\nTrailer: 1\r\n\r\n"
            + "GET /b HTTP/1.0\r\nConnection: keep-alive\r\nX-Empty:\r\n\r\n"
            + "PUT /c HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nConnection: close\r\n\r\nwxyz"
        let requests = try parseAll(wire, chunkSize: chunkSize)
        #expect(requests.count == 3)
        #expect(requests.map(\.head.method) == [.post, .get, .put])
        #expect(requests.map(\.head.target) == ["/a?x=1", "/b", "/c"])
        #expect(requests.map { String(decoding: $0.body, as: UTF8.self) } == ["abc0123456789", "", "wxyz"])
        #expect(requests.map(\.head.keepAlive) == [true, true, false])
        #expect(requests[1].head.minorVersion == 0)
        #expect(requests[1].head.headers["x-empty"] == "")
    }

    @Test func limitsAreEnforcedWhileBytesArrive() {
        #expect(throws: ParseError.headersTooLarge) {
            _ = try parseAll(
                "GET / HTTP/1.1\r\nHost: x\r\nX: \(String(repeating: "a", count: 20_000))", chunkSize: 100)
        }
        #expect(throws: ParseError.payloadTooLarge) {
            _ = try parseAll("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n", chunkSize: 5)
        }
        #expect(throws: ParseError.payloadTooLarge) {
            _ = try parseAll(
                "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n200\r\n\(String(repeating: "a", count: 512))\r\n"
                    + "200\r\n", chunkSize: 64)
        }
        #expect(throws: ParseError.badRequest("chunkSizeTooLong")) {
            _ = try parseAll(
                "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFFFF\r\n",
                chunkSize: 3)
        }
    }
}
