import Foundation

/// A complete request: the server hands handlers only fully received requests, so a handler
/// never waits on the network.
public struct HTTPRequest: Sendable {
    public var method: HTTPMethod
    /// The request-target exactly as received (may contain the query string: never log it).
    public var target: String
    /// The percent-decoded path, without the query.
    public var path: String
    /// The query string after `?`, still encoded; nil when the target had no `?`.
    public var rawQuery: String?
    public var headers: HTTPFields
    public var body: [UInt8]
    public var remoteAddress: String

    /// Builds a request from a raw target, for handler tests without a socket. A path with
    /// invalid percent-encoding is kept as received (the server refuses such targets with 400).
    public init(
        method: HTTPMethod, target: String, headers: HTTPFields = [:], body: [UInt8] = [],
        remoteAddress: String = "127.0.0.1"
    ) {
        let split = HTTPRequest.splitTarget(target)
        self.init(
            method: method, target: target,
            path: PercentDecoding.decode(split.path.utf8, plusAsSpace: false) ?? String(split.path),
            rawQuery: split.query.map(String.init), headers: headers, body: body, remoteAddress: remoteAddress
        )
    }

    init(
        method: HTTPMethod, target: String, path: String, rawQuery: String?, headers: HTTPFields,
        body: [UInt8],
        remoteAddress: String
    ) {
        self.method = method
        self.target = target
        self.path = path
        self.rawQuery = rawQuery
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// The query as ordered name/value pairs (duplicates kept, `+` decoded as space). Pairs
    /// with invalid percent-encoding are dropped; use `decodedQuery()` to refuse them instead.
    public var queryItems: [(name: String, value: String)] {
        guard let rawQuery else { return [] }
        var items: [(name: String, value: String)] = []
        for pair in rawQuery.utf8.split(separator: UInt8(ascii: "&")) {
            if let decoded = PercentDecoding.formItems(pair), let item = decoded.first { items.append(item) }
        }
        return items
    }

    /// The query as ordered name/value pairs; throws 400 when any part is badly encoded, so
    /// protocol endpoints can reject rather than guess.
    public func decodedQuery() throws(HTTPError) -> [(name: String, value: String)] {
        guard let rawQuery else { return [] }
        guard let items = PercentDecoding.formItems(rawQuery.utf8) else {
            throw HTTPError(.badRequest, message: "Malformed query string")
        }
        return items
    }

    /// The first query value named `name`, if any.
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// The body as `application/x-www-form-urlencoded` pairs: 415 for another content type,
    /// 400 for malformed encoding.
    public func formItems() throws(HTTPError) -> [(name: String, value: String)] {
        guard mediaType == "application/x-www-form-urlencoded" else {
            throw HTTPError(.unsupportedMediaType, message: "Expected application/x-www-form-urlencoded")
        }
        guard let items = PercentDecoding.formItems(body) else {
            throw HTTPError(.badRequest, message: "Malformed form body")
        }
        return items
    }

    /// Cookies from every `Cookie` header; when a name repeats, the first wins.
    public var cookies: [String: String] {
        var result: [String: String] = [:]
        for header in headers.values("Cookie") {
            for pair in header.split(separator: ";") {
                guard let eq = pair.firstIndex(of: "=") else { continue }
                let name = pair[pair.startIndex..<eq].trimmingHTTPWhitespace()
                var value = pair[pair.index(after: eq)...].trimmingHTTPWhitespace()
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                    value = String(value.dropFirst().dropLast())
                }
                if !name.isEmpty, result[name] == nil { result[name] = value }
            }
        }
        return result
    }

    /// Decodes a JSON body: 415 unless the content type is JSON (`application/json` or
    /// `…+json`), 400 when the body does not decode as `T`.
    public func decodeJSON<T: Decodable>(_ type: T.Type) throws(HTTPError) -> T {
        guard let mediaType, mediaType == "application/json" || mediaType.hasSuffix("+json") else {
            throw HTTPError(.unsupportedMediaType, message: "Expected application/json")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch {
            throw HTTPError(.badRequest, message: "Malformed JSON body")
        }
    }

    /// The lowercased media type of `Content-Type`, without parameters.
    public var mediaType: String? {
        guard let contentType = headers["Content-Type"] else { return nil }
        let type =
            contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return type.trimmingHTTPWhitespace().lowercased()
    }

    private static let absoluteFormSchemes = ["http://", "https://"]

    static func splitTarget(_ target: String) -> (path: Substring, query: Substring?) {
        var path = Substring(target)
        // absolute-form (RFC 9112 §3.2.2): keep only the path and query.
        for scheme in absoluteFormSchemes where path.utf8.first != UInt8(ascii: "/") && path.hasPrefix(scheme) {
            let authorityAndRest = path.dropFirst(scheme.count)
            guard let slash = authorityAndRest.firstIndex(of: "/") else { return ("/", nil) }
            path = authorityAndRest[slash...]
        }
        // Searching the UTF-8 view avoids grapheme breaking; `?` is ASCII, so its index is a
        // valid boundary for slicing.
        guard let question = path.utf8.firstIndex(of: UInt8(ascii: "?")) else { return (path, nil) }
        return (path[path.startIndex..<question], path[path.utf8.index(after: question)...])
    }
}
