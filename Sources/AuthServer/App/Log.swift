import Foundation

/// Structured log lines, `key=value` separated by spaces, one event per line on standard error:
///
///     ts=2026-11-29T14:00:00.123Z level=info event=server.started listen=127.0.0.1:8080
///
/// Callers pass only non-secret values: never tokens, codes, passwords or session ids.
struct Log: Sendable {
    enum Level: String, Sendable { case debug, info, warning, error }

    var write: @Sendable (String) -> Void = { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }

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
        let needsQuotes = value.isEmpty || value.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }
        guard needsQuotes else { return value }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
        return "\"\(escaped)\""
    }

    private static func timestamp() -> String {
        Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
