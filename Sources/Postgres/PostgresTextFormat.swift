import Foundation

/// PostgreSQL's text formats for the types whose syntax is not Swift's own: bytea hex,
/// one-dimensional array literals and ISO timestamps. Parsers return nil on anything
/// unexpected instead of trapping.
enum PostgresTextFormat {
    // MARK: bytea

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// `\x0001ff`: the hex format, which is unambiguous and may carry zero bytes.
    static func byteaHex<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var out: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x")]
        out.reserveCapacity(bytes.underestimatedCount * 2 + 2)
        for byte in bytes {
            out.append(hexDigits[Int(byte >> 4)])
            out.append(hexDigits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func bytes(fromBytea text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"),
            utf8.count % 2 == 0
        else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity((utf8.count - 2) / 2)
        var index = 2
        while index < utf8.count {
            guard let high = hexValue(utf8[index]), let low = hexValue(utf8[index + 1]) else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    // MARK: uuid

    /// `0190f3c2-7d1e-7c4b-9a55-3f6e8d2b1a07`: PostgreSQL's output form, written without
    /// Foundation's `uuidString` (a `sprintf` of 16 arguments, then `lowercased()`).
    static func uuid(_ id: UUID) -> String {
        withUnsafeBytes(of: id.uuid) { raw in
            var out = [UInt8](repeating: UInt8(ascii: "-"), count: 36)
            var position = 0
            for (index, byte) in raw.enumerated() {
                if index == 4 || index == 6 || index == 8 || index == 10 { position += 1 }
                out[position] = hexDigits[Int(byte >> 4)]
                out[position + 1] = hexDigits[Int(byte & 0x0f)]
                position += 2
            }
            return String(decoding: out, as: UTF8.self)
        }
    }

    /// The 36-character form in either case, as `UUID(uuidString:)` accepts it (that one goes
    /// through `sscanf`); nil for anything else.
    static func uuid(fromText text: String) -> UUID? {
        var text = text
        return text.withUTF8 { chars -> UUID? in
            guard chars.count == 36 else { return nil }
            var id: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            let parsed = withUnsafeMutableBytes(of: &id) { out -> Bool in
                var position = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        guard chars[position] == UInt8(ascii: "-") else { return false }
                        position += 1
                    }
                    guard let high = hexValue(chars[position]), let low = hexValue(chars[position + 1]) else {
                        return false
                    }
                    out[index] = high << 4 | low
                    position += 2
                }
                return true
            }
            return parsed ? UUID(uuid: id) : nil
        }
    }

    // MARK: arrays

    /// `{"a","b \"c\""}`: every element quoted, so no element can be mistaken for NULL.
    static func arrayLiteral(_ elements: [String]) -> String {
        var out = "{"
        for (index, element) in elements.enumerated() {
            if index > 0 { out += "," }
            out += "\""
            for character in element.unicodeScalars {
                if character == "\\" || character == "\"" { out += "\\" }
                out.unicodeScalars.append(character)
            }
            out += "\""
        }
        return out + "}"
    }

    /// Elements of a one-dimensional array in text output format; nil elements are NULLs.
    static func arrayElements(_ text: String) -> [String?]? {
        let s = Array(text.utf8)
        guard s.count >= 2, s[0] == UInt8(ascii: "{"), s[s.count - 1] == UInt8(ascii: "}") else { return nil }
        let end = s.count - 1
        var index = 1
        var elements: [String?] = []
        if index == end { return elements }
        while true {
            var buffer: [UInt8] = []
            if s[index] == UInt8(ascii: "\"") {
                index += 1
                var closed = false
                while index < end {
                    let c = s[index]
                    if c == UInt8(ascii: "\\") {
                        index += 1
                        guard index < end else { return nil }
                        buffer.append(s[index])
                    } else if c == UInt8(ascii: "\"") {
                        closed = true
                        index += 1
                        break
                    } else {
                        buffer.append(c)
                    }
                    index += 1
                }
                guard closed else { return nil }
                elements.append(String(decoding: buffer, as: UTF8.self))
            } else {
                while index < end, s[index] != UInt8(ascii: ",") {
                    let c = s[index]
                    if c == UInt8(ascii: "{") || c == UInt8(ascii: "\"") || c == UInt8(ascii: "}") {
                        return nil
                    }
                    if c == UInt8(ascii: "\\") {
                        index += 1
                        guard index < end else { return nil }
                    }
                    buffer.append(s[index])
                    index += 1
                }
                guard !buffer.isEmpty else { return nil }
                let raw = String(decoding: buffer, as: UTF8.self)
                elements.append(raw.uppercased() == "NULL" ? nil : raw)
            }
            if index == end { return elements }
            guard s[index] == UInt8(ascii: ","), index + 1 < end else { return nil }
            index += 1
        }
    }

    // MARK: timestamps

    /// Microseconds beyond which PostgreSQL's timestamp range ends (about 294,000 years).
    private static let maxMicroseconds: Double = 9.2e18

    /// `2026-11-29 14:25:18.123456+00`, rounded to microseconds, years before 1 AD as BC.
    static func timestamp(_ date: Date) -> String {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        guard micros.isFinite, abs(micros) < maxMicroseconds else {
            return micros < 0 ? "-infinity" : "infinity"
        }
        let total = Int64(micros)
        let seconds = floorDiv(total, 1_000_000)
        let fraction = total - seconds * 1_000_000
        let days = floorDiv(seconds, 86_400)
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let bc = year <= 0
        var out = pad(bc ? 1 - year : year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
        out +=
            " " + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":"
            + pad(secondOfDay % 60, 2)
        out += "." + pad(fraction, 6) + "+00"
        return bc ? out + " BC" : out
    }

    /// Parses ISO-style timestamptz / timestamp / date output. A missing offset means UTC.
    static func date(fromTimestamp text: String) -> Date? {
        switch text {
        case "infinity": return .distantFuture
        case "-infinity": return .distantPast
        default: break
        }
        var scanner = DigitScanner(Array(text.utf8))
        guard let rawYear = scanner.number(minDigits: 4, maxDigits: 9), scanner.skip("-"),
            let month = scanner.number(minDigits: 2, maxDigits: 2), scanner.skip("-"),
            let day = scanner.number(minDigits: 2, maxDigits: 2),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var secondOfDay: Int64 = 0
        var micros: Int64 = 0
        if scanner.skip(" ") || scanner.skip("T") {
            guard let hour = scanner.number(minDigits: 2, maxDigits: 2), scanner.skip(":"),
                let minute = scanner.number(minDigits: 2, maxDigits: 2), scanner.skip(":"),
                let second = scanner.number(minDigits: 2, maxDigits: 2),
                hour <= 24, minute <= 59, second <= 60
            else { return nil }
            secondOfDay = hour * 3600 + minute * 60 + second
            if scanner.skip(".") {
                let start = scanner.index
                guard let digits = scanner.number(minDigits: 1, maxDigits: 9) else { return nil }
                var count = scanner.index - start
                var value = digits
                while count < 6 { value *= 10; count += 1 }
                while count > 6 { value /= 10; count -= 1 }
                micros = value
            }
        }
        var offset: Int64 = 0
        if scanner.peek("+") || scanner.peek("-") {
            let negative = scanner.skip("-")
            if !negative { _ = scanner.skip("+") }
            guard let hours = scanner.number(minDigits: 2, maxDigits: 2) else { return nil }
            var minutes: Int64 = 0
            var seconds: Int64 = 0
            if scanner.skip(":") {
                guard let m = scanner.number(minDigits: 2, maxDigits: 2) else { return nil }
                minutes = m
                if scanner.skip(":") {
                    guard let s = scanner.number(minDigits: 2, maxDigits: 2) else { return nil }
                    seconds = s
                }
            }
            offset = (hours * 3600 + minutes * 60 + seconds) * (negative ? -1 : 1)
        }
        let bc = scanner.skip(" BC")
        guard scanner.atEnd else { return nil }
        let year = bc ? 1 - rawYear : rawYear
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + secondOfDay - offset
        return Date(timeIntervalSince1970: Double(seconds) + Double(micros) / 1_000_000)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    private static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's algorithm).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = (month + 9) % 12
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}

/// A cursor over ASCII text that reads fixed-width decimal fields.
private struct DigitScanner {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    func peek(_ literal: String) -> Bool {
        let expected = Array(literal.utf8)
        return bytes.count - index >= expected.count
            && Array(bytes[index..<index + expected.count]) == expected
    }

    mutating func skip(_ literal: String) -> Bool {
        guard peek(literal) else { return false }
        index += literal.utf8.count
        return true
    }

    mutating func number(minDigits: Int, maxDigits: Int) -> Int64? {
        var value: Int64 = 0
        var count = 0
        while index < bytes.count, count < maxDigits,
            bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9")
        {
            value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            index += 1
            count += 1
        }
        return count >= minDigits ? value : nil
    }
}
