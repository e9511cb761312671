import Foundation

/// Renders a message as an Internet message (RFC 5322 + MIME): multipart/alternative
/// with a text and an HTML part, both UTF-8 in base64, and RFC 2047 encoded words for any
/// header text that is not plain ASCII. Lines end in CRLF and stay under 78 characters, so the
/// result can go into SMTP DATA after dot-stuffing. The caller supplies the date, the
/// Message-ID and the boundary, so that rendering is a pure function of its input.
public enum MIMEMessage {
    public enum RenderError: Error, Equatable {
        /// The recipient is not a plain `local@domain` address (or tries to add headers).
        case invalidRecipient
    }

    /// The message from `from` to `to`: a text part and an HTML part of the same content.
    public static func render(
        to: String, subject: String, text: String, html: String, from: MailAddress, date: Date,
        messageID: UUID, boundary: String
    ) throws(RenderError) -> String {
        guard MailAddress.isValidAddress(to) else { throw .invalidRecipient }
        var lines: [String] = []
        lines.append("Date: \(rfc5322Date(date))")
        lines.append(folded("From: \(mailbox(from))"))
        lines.append("To: \(to)")
        lines.append("Message-ID: <\(messageID.uuidString.lowercased())@\(from.domain)>")
        lines.append("Subject: \(encodedHeaderText(subject))")
        lines.append("MIME-Version: 1.0")
        lines.append("Content-Type: multipart/alternative; boundary=\"\(boundary)\"")
        lines.append("")
        lines.append("--\(boundary)")
        lines.append("Content-Type: text/plain; charset=UTF-8")
        lines.append("Content-Transfer-Encoding: base64")
        lines.append("")
        lines.append(contentsOf: base64Lines(normalizeNewlines(text)))
        lines.append("--\(boundary)")
        lines.append("Content-Type: text/html; charset=UTF-8")
        lines.append("Content-Transfer-Encoding: base64")
        lines.append("")
        lines.append(contentsOf: base64Lines(normalizeNewlines(html)))
        lines.append("--\(boundary)--")
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// A boundary that no base64 line can contain: `=_` and 32 hexadecimal digits of `id`.
    public static func boundary(from id: UUID) -> String {
        "=_" + id.uuidString.replacingOccurrences(of: "-", with: "")
    }

    /// `Name <address>`, the name quoted or encoded as needed.
    public static func mailbox(_ address: MailAddress) -> String {
        guard let name = address.displayName, !name.isEmpty else { return address.address }
        return "\(encodedPhrase(name)) <\(address.address)>"
    }

    static func encodedPhrase(_ text: String) -> String {
        if !isPlainASCII(text) { return encodedWords(text) }
        let atext = text.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) || " !#$%&'*+-/=?^_`{|}~".unicodeScalars.contains($0)
        }
        if atext { return text }
        return "\""
            + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            + "\""
    }

    /// Header text: as is when it is short printable ASCII, else RFC 2047 `B` encoded words.
    /// Control characters (a CR or LF would start a new header) become spaces first.
    public static func encodedHeaderText(_ text: String) -> String {
        let clean = String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
        if isPlainASCII(clean), clean.utf8.count <= 66 { return clean }
        return encodedWords(clean)
    }

    /// `=?UTF-8?B?…?=` words of at most 64 characters (39 bytes of text each, so that even the
    /// first, after `Subject: `, stays within 78), never splitting a character, folded onto
    /// continuation lines.
    static func encodedWords(_ text: String) -> String {
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in text {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 39, !chunk.isEmpty {
                words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
                chunk = []
            }
            chunk.append(contentsOf: bytes)
        }
        if !chunk.isEmpty || words.isEmpty {
            words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
        }
        return words.joined(separator: "\r\n ")
    }

    /// A header line over 78 characters, folded before its ` <address>` part.
    static func folded(_ line: String) -> String {
        guard line.utf8.count > 78, let open = line.range(of: " <", options: .backwards) else { return line }
        return String(line[..<open.lowerBound]) + "\r\n "
            + String(line[line.index(after: open.lowerBound)...])
    }

    static func isPlainASCII(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }
    }

    /// Every line end as CRLF, whatever mix the text had.
    public static func normalizeNewlines(_ text: String) -> String {
        text.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\r", with: "\n")
            .replacingOccurrences(of: "\n", with: "\r\n")
    }

    /// Base64 in lines of 76 characters (RFC 2045 §6.8).
    static func base64Lines(_ text: String) -> [String] {
        let encoded = Data(text.utf8).base64EncodedString()
        var lines: [String] = []
        var index = encoded.startIndex
        while index < encoded.endIndex {
            let end = encoded.index(index, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            lines.append(String(encoded[index..<end]))
            index = end
        }
        return lines
    }

    /// `Sun, 29 Nov 2026 17:13:17 +0000`, always in UTC and with English names.
    static func rfc5322Date(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let day = days[((parts.weekday ?? 1) - 1) % 7]
        let month = months[((parts.month ?? 1) - 1) % 12]
        func two(_ value: Int?) -> String {
            let v = value ?? 0
            return v < 10 ? "0\(v)" : "\(v)"
        }
        return
            "\(day), \(parts.day ?? 1) \(month) \(parts.year ?? 1970) \(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) +0000"
    }
}
