/// Encodes `CBORValue`s in CTAP2 canonical form (shortest arguments, map keys
/// in encoded order as given).
///
/// The relying party never needs to encode CBOR on the wire; this exists so
/// tests and tools can build authenticator structures from plain values.
public enum CBOREncoder {
    public static func encode(_ value: CBORValue) -> [UInt8] {
        var out: [UInt8] = []
        append(value, to: &out)
        return out
    }

    private static func appendHead(major: UInt8, argument: UInt64, to out: inout [UInt8]) {
        let m = major << 5
        switch argument {
        case 0..<24:
            out.append(m | UInt8(argument))
        case 24...0xFF:
            out.append(m | 24)
            out.append(UInt8(argument))
        case 0x100...0xFFFF:
            out.append(m | 25)
            appendBigEndian(argument, width: 2, to: &out)
        case 0x1_0000...0xFFFF_FFFF:
            out.append(m | 26)
            appendBigEndian(argument, width: 4, to: &out)
        default:
            out.append(m | 27)
            appendBigEndian(argument, width: 8, to: &out)
        }
    }

    private static func appendBigEndian(_ value: UInt64, width: Int, to out: inout [UInt8]) {
        for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
            out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    private static func append(_ value: CBORValue, to out: inout [UInt8]) {
        switch value {
        case .unsigned(let n):
            appendHead(major: 0, argument: n, to: &out)
        case .negative(let n):
            appendHead(major: 1, argument: n, to: &out)
        case .byteString(let bytes):
            appendHead(major: 2, argument: UInt64(bytes.count), to: &out)
            out.append(contentsOf: bytes)
        case .textString(let string):
            let utf8 = Array(string.utf8)
            appendHead(major: 3, argument: UInt64(utf8.count), to: &out)
            out.append(contentsOf: utf8)
        case .array(let items):
            appendHead(major: 4, argument: UInt64(items.count), to: &out)
            for item in items { append(item, to: &out) }
        case .map(let entries):
            appendHead(major: 5, argument: UInt64(entries.count), to: &out)
            for entry in entries {
                append(entry.key, to: &out)
                append(entry.value, to: &out)
            }
        case .tagged(let tag, let item):
            appendHead(major: 6, argument: tag, to: &out)
            append(item, to: &out)
        case .boolean(let flag):
            out.append(flag ? 0xF5 : 0xF4)
        case .null:
            out.append(0xF6)
        }
    }
}
