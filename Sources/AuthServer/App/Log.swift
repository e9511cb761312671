import Foundation

/// Structured log lines, `key=value` separated by spaces, one event per line on standard error:
///
///     ts=2026-11-29T14:00:00.123Z level=info event=server.started listen=127.0.0.1:8080
///
/// Callers pass only non-secret values: never tokens, codes, passwords or session ids.
struct Log: Sendable {
    enum Level: String, Sendable { case debug, info, warning, error }

    var write: @Sendable (String) -> Void = Log.writeToStandardError

    /// One `write(2)` per line: no buffering to lose on a crash, and lines from different
    /// threads never interleave (each is far below PIPE_BUF).
    static let writeToStandardError: @Sendable (String) -> Void = { line in
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
    }

    func info(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.info, event, fields) }
    func warning(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.warning, event, fields) }
    func error(_ event: String, _ fields: KeyValuePairs<String, String> = [:]) { log(.error, event, fields) }

    func log(_ level: Level, _ event: String, _ fields: KeyValuePairs<String, String>) {
        var line = "ts=\(Log.timestamp()) level=\(level.rawValue) event=\(event)"
        for (key, value) in fields { line += " \(key)=\(Log.quote(value))" }
        write(line)
    }

    /// Passes a line that is already `key=value` formatted (such as the HTTP access log) through.
    func raw(_ line: String) { write("ts=\(Log.timestamp()) level=info \(line)") }

    static func quote(_ value: String) -> String {
        // Most values are plain visible ASCII: decided on the bytes, without Character iteration.
        if !value.isEmpty,
            value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "=") })
        {
            return value
        }
        let needsQuotes = value.isEmpty || value.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }
        guard needsQuotes else { return value }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
        return "\"\(escaped)\""
    }

    /// `2026-11-29T14:00:00.123Z`, formatted by hand: this runs for every request, and
    /// Foundation's date formatting costs more than the rest of the access log line.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var text = [UInt8](repeating: 0, count: 24)
        func put(_ value: Int, at index: Int, digits: Int) {
            var value = value
            for position in stride(from: index + digits - 1, through: index, by: -1) {
                text[position] = UInt8(48 + value % 10)
                value /= 10
            }
        }
        put(Int(parts.tm_year) + 1900, at: 0, digits: 4)
        text[4] = 0x2D
        put(Int(parts.tm_mon) + 1, at: 5, digits: 2)
        text[7] = 0x2D
        put(Int(parts.tm_mday), at: 8, digits: 2)
        text[10] = 0x54
        put(Int(parts.tm_hour), at: 11, digits: 2)
        text[13] = 0x3A
        put(Int(parts.tm_min), at: 14, digits: 2)
        text[16] = 0x3A
        put(Int(parts.tm_sec), at: 17, digits: 2)
        text[19] = 0x2E
        put(Int(now.tv_nsec) / 1_000_000, at: 20, digits: 3)
        text[23] = 0x5A
        return String(decoding: text, as: UTF8.self)
    }
}
