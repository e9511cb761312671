import Testing

@testable import HTTPServer

/// The verdict on a request head must not depend on how its bytes were split across reads.
/// Found by fuzz/targets/http_parser: a head over the limit with a bare LF after the limit was
/// refused as 400 `bareLineFeed` when it arrived in one read and as 431 when it arrived in
/// several (fuzz/corpus/http_parser/regression-limit-vs-bare-lf).
@Suite struct RequestParserSegmentationTests {
    private func firstError(_ wire: [UInt8], chunkSize: Int, maxHeaderBytes: Int) -> ParseError? {
        var parser = RequestParser(maxHeaderBytes: maxHeaderBytes, maxBodyBytes: 1000)
        var input = InputBuffer()
        var offset = 0
        while offset < wire.count {
            let end = min(offset + chunkSize, wire.count)
            input.compact()
            input.bytes.append(contentsOf: wire[offset..<end])
            offset = end
            do {
                while input.count > 0, try parser.parse(&input) != nil {}
            } catch {
                return error
            }
        }
        return nil
    }

    @Test(arguments: [1, 11, 100, 100_000])
    func headOverTheLimitIsAlways431(chunkSize: Int) {
        // The fuzzer's input: a 16-byte limit, the bare LF near the end of an 89-byte head.
        let fuzzed = Array("GET /ay HTTP/1.1\r\nHost: localhos.\r\nCookie: [id=Sequenabc; theme=".utf8)
            + [0xFF, 0xFF, 0xFF, 0x0D] + Array(repeating: UInt8(ascii: ">"), count: 18) + [0x0A, 0x0D, 0x0A]
        #expect(firstError(fuzzed, chunkSize: chunkSize, maxHeaderBytes: 16) == .headersTooLarge)

        let long = Array("GET / HTTP/1.1\r\nHost: x\r\nX: \(String(repeating: "a", count: 20_000))\n\r\n".utf8)
        #expect(firstError(long, chunkSize: chunkSize, maxHeaderBytes: 16_384) == .headersTooLarge)
    }

    @Test(arguments: [1, 11, 100, 100_000])
    func bareLineFeedInsideTheLimitIsAlways400(chunkSize: Int) {
        let wire = Array("GET / HTTP/1.1\r\nHost: x\nX: y\r\n\r\n".utf8)
        #expect(firstError(wire, chunkSize: chunkSize, maxHeaderBytes: 16_384) == .badRequest("bareLineFeed"))
    }

    @Test func headExactlyAtTheLimitIsAccepted() {
        let wire = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        for chunkSize in [1, 5, wire.count] {
            #expect(firstError(wire, chunkSize: chunkSize, maxHeaderBytes: wire.count) == nil)
            #expect(firstError(wire, chunkSize: chunkSize, maxHeaderBytes: wire.count - 1) == .headersTooLarge)
        }
    }
}
