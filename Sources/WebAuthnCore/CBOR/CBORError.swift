/// Why untrusted bytes are not acceptable CBOR.
public enum CBORError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input ends inside a data item.
    case truncated
    /// Bytes follow the single top-level item.
    case trailingBytes
    /// Arrays, maps and tags are nested deeper than the decoder allows.
    case nestingTooDeep
    /// More data items than the decoder allows.
    case tooManyItems
    /// A declared length exceeds the input or the decoder's limit.
    case lengthTooLarge
    /// Indefinite-length items (additional information 31) are refused.
    case indefiniteLength
    /// Additional information 28...30 is reserved by RFC 8949.
    case reservedAdditionalInfo
    /// An argument is not encoded in its shortest form (CTAP2 canonical CBOR).
    case nonMinimalEncoding
    /// Floats are not used by WebAuthn and are refused.
    case floatNotSupported
    /// A simple value other than false, true or null.
    case unsupportedSimpleValue
    /// A map holds the same key twice.
    case duplicateMapKey
    /// A text string is not valid UTF-8.
    case invalidUTF8

    public var description: String {
        switch self {
        case .truncated: "truncated input"
        case .trailingBytes: "trailing bytes after the data item"
        case .nestingTooDeep: "nesting too deep"
        case .tooManyItems: "too many data items"
        case .lengthTooLarge: "declared length exceeds the input"
        case .indefiniteLength: "indefinite length not allowed"
        case .reservedAdditionalInfo: "reserved additional information"
        case .nonMinimalEncoding: "argument not in shortest form"
        case .floatNotSupported: "floating-point values not supported"
        case .unsupportedSimpleValue: "unsupported simple value"
        case .duplicateMapKey: "duplicate map key"
        case .invalidUTF8: "text string is not valid UTF-8"
        }
    }
}
