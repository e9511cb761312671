/// One decoded CBOR data item (RFC 8949), restricted to what WebAuthn uses.
///
/// Floats, undefined and indefinite-length items are deliberately absent: no
/// WebAuthn structure needs them, and refusing them keeps the attack surface small.
public indirect enum CBORValue: Sendable, Hashable {
    /// Major type 0.
    case unsigned(UInt64)
    /// Major type 1: the value is `-1 - n`, kept as `n` so the full range fits.
    case negative(UInt64)
    /// Major type 2.
    case byteString([UInt8])
    /// Major type 3, validated UTF-8.
    case textString(String)
    /// Major type 4.
    case array([CBORValue])
    /// Major type 5, entries in encoded order (keys are unique).
    case map([CBORMapEntry])
    /// Major type 6.
    case tagged(UInt64, CBORValue)
    /// Simple values 20 and 21.
    case boolean(Bool)
    /// Simple value 22.
    case null

    /// The integer value when it is a major type 0 or 1 item that fits in `Int`.
    public var intValue: Int? {
        switch self {
        case .unsigned(let n): return n <= UInt64(Int.max) ? Int(n) : nil
        case .negative(let n): return n <= UInt64(Int.max) ? -1 - Int(n) : nil
        default: return nil
        }
    }

    /// Builds an integer item, choosing major type 0 or 1 by sign.
    public static func int(_ value: Int) -> CBORValue {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }

    public var bytesValue: [UInt8]? {
        if case .byteString(let bytes) = self { return bytes }
        return nil
    }

    public var stringValue: String? {
        if case .textString(let string) = self { return string }
        return nil
    }

    public var arrayValue: [CBORValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    public var mapValue: [CBORMapEntry]? {
        if case .map(let entries) = self { return entries }
        return nil
    }

    /// Looks a key up in a map item; `nil` for absent keys and for non-maps.
    public subscript(key: CBORValue) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    /// Shorthand for integer keys, as used by COSE.
    public subscript(intKey key: Int) -> CBORValue? { self[.int(key)] }

    /// Shorthand for text keys, as used by attestation objects.
    public subscript(textKey key: String) -> CBORValue? { self[.textString(key)] }
}

/// One key/value pair of a CBOR map.
public struct CBORMapEntry: Sendable, Hashable {
    public var key: CBORValue
    public var value: CBORValue

    public init(_ key: CBORValue, _ value: CBORValue) {
        self.key = key
        self.value = value
    }
}
