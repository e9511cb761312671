// fuzz-modules: HTTPServer
// The HTTP/1.1 request parser, fed the whole input at once and then again in slices whose
// sizes come from the input, the way bytes arrive on a socket. Both runs must agree, and every
// parsed request goes through the same conversion the connection performs before dispatch.
@testable import HTTPServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    // The first byte picks the slice sizes of the incremental run (1…16 bytes per read, low
    // bits) and the limits (high bits), so the size checks are reached with short inputs too.
    let step = Int(bytes[0] & 0x0F) + 1
    let limits = (header: 8192 >> (Int(bytes[0] >> 4 & 0x03) * 3), body: 65_536 >> (Int(bytes[0] >> 6) * 4))
    let wire = Array(bytes.dropFirst())

    let whole = parseAll(wire, step: wire.count, limits: limits)
    let sliced = parseAll(wire, step: step, limits: limits)
    if whole.requests.count != sliced.requests.count || whole.error != sliced.error {
        fatalError("incremental parse disagrees: \(whole.requests.count)/\(String(describing: whole.error)) vs \(sliced.requests.count)/\(String(describing: sliced.error)) at step \(step)")
    }
    for (a, b) in zip(whole.requests, sliced.requests) where a.body != b.body || a.head.target != b.head.target {
        fatalError("incremental parse produced a different request at step \(step)")
    }
    for request in whole.requests { exercise(request) }
    return 0
}

private func parseAll(
    _ wire: [UInt8], step: Int, limits: (header: Int, body: Int)
) -> (requests: [ParsedRequest], error: ParseError?) {
    var parser = RequestParser(maxHeaderBytes: limits.header, maxBodyBytes: limits.body)
    var input = InputBuffer()
    var requests: [ParsedRequest] = []
    var offset = 0
    let step = max(step, 1)
    while offset < wire.count || input.count > 0 {
        if offset < wire.count {
            let end = min(offset + step, wire.count)
            input.compact()
            input.bytes.append(contentsOf: wire[offset..<end])
            offset = end
        }
        do {
            while input.count > 0, let request = try parser.parse(&input) {
                requests.append(request)
                if requests.count > 64 { return (requests, nil) }
            }
        } catch {
            return (requests, error)
        }
        if offset >= wire.count { break }
    }
    return (requests, nil)
}

private func exercise(_ parsed: ParsedRequest) {
    let head = parsed.head
    let split = HTTPRequest.splitTarget(head.target)
    let path = head.target == "*" ? "*" : PercentDecoding.decode(split.path.utf8, plusAsSpace: false)
    guard let path, !path.utf8.contains(0) else { return }
    let request = HTTPRequest(
        method: head.method, target: head.target, path: path, rawQuery: split.query.map(String.init),
        headers: head.headers, body: parsed.body, remoteAddress: "127.0.0.1")
    _ = request.queryItems
    _ = try? request.decodedQuery()
    _ = try? request.formItems()
    _ = request.cookies
    _ = request.mediaType
    _ = request.queryValue("code")
}
