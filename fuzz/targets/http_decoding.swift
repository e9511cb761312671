// fuzz-modules: HTTPServer
// Query, form-body and cookie decoding of a request built without the parser, so that bytes
// the parser would refuse (bare CR, NUL, invalid UTF-8) still reach the decoders. Input layout:
// line 1 the request-target, line 2 a Content-Type, line 3 a Cookie header, the rest the body.
@testable import HTTPServer

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let parts = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 3, omittingEmptySubsequences: false)
    func text(_ index: Int) -> String { index < parts.count ? String(decoding: parts[index], as: UTF8.self) : "" }
    let body = parts.count > 3 ? Array(parts[3]) : []
    var headers = HTTPFields()
    headers.append("Content-Type", text(1).isEmpty ? "application/x-www-form-urlencoded" : text(1))
    headers.append("Cookie", text(2))
    headers.append("cookie", text(2) + "; extra=\"1\"")
    let request = HTTPRequest(method: .post, target: text(0), headers: headers, body: body)
    _ = request.queryItems
    _ = try? request.decodedQuery()
    _ = request.queryValue("state")
    _ = try? request.formItems()
    _ = request.cookies
    _ = request.mediaType
    _ = try? request.decodeJSON([String: String].self)
    _ = PercentDecoding.decode(bytes, plusAsSpace: true)
    _ = PercentDecoding.formItems(bytes)
    return 0
}
