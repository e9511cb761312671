import COpenSSL
import Foundation

/// A message digest value. Equality is constant-time, since digests often stand in for
/// secrets (stored token digests are compared against presented tokens).
public protocol Digest: Sequence, Hashable, Sendable, CustomStringConvertible where Element == UInt8 {
    /// The digest bytes.
    var bytes: [UInt8] { get }
}

extension Digest {
    /// Lowercase hexadecimal.
    public var hex: String { Hex.encode(bytes) }
    public var description: String { hex }
    public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }
}

public struct SHA256Digest: Digest {
    public let bytes: [UInt8]
    public static func == (lhs: Self, rhs: Self) -> Bool { constantTimeEquals(lhs.bytes, rhs.bytes) }
}

public struct SHA384Digest: Digest {
    public let bytes: [UInt8]
    public static func == (lhs: Self, rhs: Self) -> Bool { constantTimeEquals(lhs.bytes, rhs.bytes) }
}

public struct SHA512Digest: Digest {
    public let bytes: [UInt8]
    public static func == (lhs: Self, rhs: Self) -> Bool { constantTimeEquals(lhs.bytes, rhs.bytes) }
}

/// SHA-256 (FIPS 180-4).
public enum SHA256 {
    public static let byteCount = 32
    public static func hash<D: DataProtocol>(data: D) -> SHA256Digest {
        SHA256Digest(bytes: evpDigest(Array(data), name: "SHA256", size: byteCount))
    }
}

/// SHA-384 (FIPS 180-4).
public enum SHA384 {
    public static let byteCount = 48
    public static func hash<D: DataProtocol>(data: D) -> SHA384Digest {
        SHA384Digest(bytes: evpDigest(Array(data), name: "SHA384", size: byteCount))
    }
}

/// SHA-512 (FIPS 180-4).
public enum SHA512 {
    public static let byteCount = 64
    public static func hash<D: DataProtocol>(data: D) -> SHA512Digest {
        SHA512Digest(bytes: evpDigest(Array(data), name: "SHA512", size: byteCount))
    }
}

/// One-shot digest. Hashing cannot fail for a built-in algorithm on valid memory; a
/// failure would mean the OpenSSL installation itself is broken (default provider not
/// loadable), which no caller could handle, so it stops the process.
func evpDigest(_ data: [UInt8], name: String, size: Int) -> [UInt8] {
    let out: [UInt8]?
    if let fetched = FetchedDigest.Name(rawValue: name)?.fetched {
        out = data.withUnsafeBytes { buffer in fetched.hash(buffer) }
    } else {
        // Rare digests (SHA-1 for legacy attestation certificates) are fetched per call.
        out = oneShotDigest(data, name: name)
    }
    guard let out, out.count == size else { preconditionFailure("OpenSSL digest \(name) unavailable") }
    return out
}

private func oneShotDigest(_ data: [UInt8], name: String) -> [UInt8]? {
    guard let md = EVP_MD_fetch(nil, name, nil) else {
        ERR_clear_error()
        return nil
    }
    defer { EVP_MD_free(md) }
    var length: UInt32 = 0
    var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
    let ok = data.withUnsafeBytes { buffer in
        EVP_Digest(buffer.baseAddress, buffer.count, &out, &length, md, nil)
    }
    return ok == 1 ? Array(out.prefix(Int(length))) : nil
}

/// Lowercase hexadecimal encoding, for logs and test vectors.
public enum Hex {
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes hex (either case); `nil` for odd length or a non-hex character.
    public static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let high = value(chars[index]), let low = value(chars[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}
