import Foundation
import Synchronization

/// Serves files below one directory, for a `/*path` route. Files are read once and kept in
/// memory (they are deployment assets, not user uploads), with a strong ETag from their
/// content so browsers revalidate with a cheap 304.
public struct StaticFiles: Sendable {
    private final class Cache: Sendable {
        struct Entry {
            var body: [UInt8]
            var etag: String
            var contentType: String
        }
        let entries = Mutex<[String: Entry]>([:])
    }

    private let root: String
    private let cacheControl: String
    private let cache = Cache()

    public init(directory: URL, cacheControl: String = "public, max-age=300") {
        let path = directory.standardizedFileURL.path
        root = path
        self.cacheControl = cacheControl
    }

    /// The response for `path` (relative to the directory, leading "/" optional). Anything
    /// that is not a plain file inside the directory - `..`, hidden files, directories,
    /// symlinks pointing outside - is a 404.
    public func response(for path: String, request: HTTPRequest) -> HTTPResponse {
        guard let relative = StaticFiles.safeRelativePath(path), let entry = load(relative) else {
            return HTTPError(.notFound).response()
        }
        var headers: HTTPFields = [
            "ETag": entry.etag, "Cache-Control": cacheControl, "X-Content-Type-Options": "nosniff",
        ]
        if let ifNoneMatch = request.headers["If-None-Match"], StaticFiles.matches(ifNoneMatch, entry.etag) {
            return HTTPResponse(status: .notModified, headers: headers)
        }
        headers.append("Content-Type", entry.contentType)
        return HTTPResponse(status: .ok, headers: headers, body: entry.body)
    }

    private func load(_ relative: String) -> Cache.Entry? {
        if let cached = cache.entries.withLock({ $0[relative] }) { return cached }
        let full = root + "/" + relative
        // Resolve symlinks and make sure the real file is still inside the root.
        guard let resolved = realpath(full, nil) else { return nil }
        let real = String(cString: resolved)
        free(resolved)
        let realRoot = realpath(root, nil).map { pointer in
            defer { free(pointer) }
            return String(cString: pointer)
        }
        guard let realRoot, real.hasPrefix(realRoot + "/") else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: real, isDirectory: &isDirectory), !isDirectory.boolValue,
            let data = FileManager.default.contents(atPath: real)
        else { return nil }
        let body = [UInt8](data)
        let entry = Cache.Entry(
            body: body, etag: StaticFiles.etag(for: body), contentType: StaticFiles.contentType(for: relative)
        )
        cache.entries.withLock { $0[relative] = entry }
        return entry
    }

    static func safeRelativePath(_ path: String) -> String? {
        var trimmed = Substring(path)
        while trimmed.hasPrefix("/") { trimmed = trimmed.dropFirst() }
        guard !trimmed.isEmpty else { return nil }
        let segments = trimmed.split(separator: "/", omittingEmptySubsequences: false)
        for segment in segments {
            guard !segment.isEmpty, !segment.hasPrefix("."), !segment.contains("\\"),
                !segment.utf8.contains(0), !segment.contains("%")
            else { return nil }
        }
        return String(trimmed)
    }

    /// Strong ETag: FNV-1a 64 of the content plus its length.
    static func etag(for body: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in body {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return "\"\(RequestContext.hex16(hash))-\(String(body.count, radix: 16))\""
    }

    /// If-None-Match uses the weak comparison (RFC 9110 §13.1.2).
    static func matches(_ header: String, _ etag: String) -> Bool {
        for candidate in header.split(separator: ",") {
            var tag = candidate.trimmingHTTPWhitespace()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = String(tag.dropFirst(2)) }
            if tag == etag { return true }
        }
        return false
    }

    static func contentType(for path: String) -> String {
        let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
        switch ext {
        case "css": return "text/css; charset=utf-8"
        case "js", "mjs": return "text/javascript; charset=utf-8"
        case "svg": return "image/svg+xml"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "webp": return "image/webp"
        case "ico": return "image/x-icon"
        case "html", "htm": return "text/html; charset=utf-8"
        case "json", "map": return "application/json"
        case "webmanifest": return "application/manifest+json"
        case "woff2": return "font/woff2"
        case "txt": return "text/plain; charset=utf-8"
        default: return "application/octet-stream"
        }
    }
}
