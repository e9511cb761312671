import Foundation

/// An email address as typed and in the normalized form that is compared and unique.
///
/// Normalization trims whitespace and lowercases the whole address. Lowercasing the local part
/// is not what RFC 5321 promises, but it is what every large mail provider does and it keeps
/// `Alice@example.com` and `alice@example.com` from becoming two accounts.
struct EmailAddress: Sendable, Equatable {
    let address: String
    let normalized: String

    /// nil unless the text has one `@` with a non-empty local part and a dotted domain,
    /// no whitespace, control characters or mail-header punctuation (`<>()[]\\,;:"`), and at
    /// most 254 characters.
    init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count <= 254, !trimmed.isEmpty else { return nil }
        guard
            !trimmed.unicodeScalars.contains(where: {
                $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F
            })
        else { return nil }
        // Characters that never appear in an unquoted address but would change the meaning of
        // a mail header (`,` and `;` add recipients, `<>` and quotes start another address).
        guard !trimmed.contains(where: { "<>()[]\\,;:\"".contains($0) }) else { return nil }
        let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 64 else { return nil }
        let domain = parts[1]
        guard domain.contains("."), !domain.hasPrefix("."), !domain.hasSuffix("."), !domain.contains("..")
        else {
            return nil
        }
        address = trimmed
        normalized = trimmed.lowercased()
    }

    /// The normalized form of any text, for throttling keys of addresses that do not parse.
    static func normalize(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }
}
