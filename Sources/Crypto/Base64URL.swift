/// Unpadded base64url (RFC 4648 §5), as used by JOSE and WebAuthn.
public enum Base64URL {
    /// Encodes without `=` padding (RFC 7515 §2).
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Base64Codec.urlSafe.encode(Array(bytes))
    }

    /// Decodes strictly: no padding, no whitespace, only the URL-safe alphabet, and the
    /// unused trailing bits must be zero, so each byte string has exactly one encoding
    /// (no malleable tokens).
    public static func decode(_ text: String) throws(CryptoError) -> [UInt8] {
        guard let bytes = Base64Codec.urlSafe.decode(text) else { throw .invalidBase64URL }
        return bytes
    }
}

/// Base64 without padding, for either alphabet. The standard alphabet is used by PHC
/// password hash strings.
struct Base64Codec: Sendable {
    let alphabet: [UInt8]
    let reverse: [UInt8]

    init(_ characters: String) {
        alphabet = Array(characters.utf8)
        var table = [UInt8](repeating: 0xff, count: 256)
        for (index, char) in alphabet.enumerated() { table[Int(char)] = UInt8(index) }
        reverse = table
    }

    static let urlSafe = Base64Codec("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    static let standard = Base64Codec("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")

    func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            out.append(alphabet[Int(n & 63)])
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let n = UInt32(bytes[index]) << 16
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
        } else if rest == 2 {
            let n = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `nil` for padding, foreign characters, an impossible length or non-zero trailing bits.
    func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 != 1 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(chars.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for char in chars {
            let value = reverse[Int(char)]
            guard value != 0xff else { return nil }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        guard buffer == 0 else { return nil }
        return out
    }
}
