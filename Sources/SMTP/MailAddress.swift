import Foundation

/// A mailbox as written in a `From` setting: `Display Name <local@domain>` or a bare
/// `local@domain`. Only what mail submission needs: no comments, no groups, no CR or LF.
public struct MailAddress: Sendable, Equatable {
    public var displayName: String?
    public var address: String

    public init(displayName: String?, address: String) {
        self.displayName = displayName
        self.address = address
    }

    /// The part after the `@`: what log lines may name instead of the whole address.
    public var domain: String { address.split(separator: "@").last.map(String.init) ?? "" }

    /// Nil for anything that is not a plain address, optionally with a display name.
    public static func parse(_ text: String) -> MailAddress? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasSuffix(">"), let open = trimmed.lastIndex(of: "<") {
            let address = String(
                trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
            var name = trimmed[..<open].trimmingCharacters(in: .whitespaces)
            if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") {
                name = String(name.dropFirst().dropLast())
            }
            guard isValidAddress(address), !containsControl(name), !name.contains("\"") else { return nil }
            return MailAddress(displayName: name.isEmpty ? nil : name, address: address)
        }
        guard isValidAddress(trimmed) else { return nil }
        return MailAddress(displayName: nil, address: trimmed)
    }

    /// One `@`, something on both sides, no spaces, angle brackets or control characters: what
    /// can safely go inside `MAIL FROM:<…>`, `RCPT TO:<…>` and a header.
    public static func isValidAddress(_ address: String) -> Bool {
        let parts = address.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, address.utf8.count <= 254 else {
            return false
        }
        return !address.unicodeScalars.contains {
            $0.value <= 0x20 || $0.value == 0x7F || $0 == "<" || $0 == ">" || $0 == "," || $0 == ";"
        }
    }

    /// A CR or LF in a header value would start a new header.
    public static func containsControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }
}
