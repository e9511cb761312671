import COpenSSL
import Foundation

/// Cryptographically secure random bytes from the OpenSSL DRBG.
public enum SecureRandom {
    /// Returns `count` random bytes.
    ///
    /// A failure of `RAND_bytes` stops the process: it means the operating system's
    /// entropy source is unusable, and every caller (tokens, salts, keys, challenges)
    /// would otherwise have to invent a fallback that is never safe. Failing loudly
    /// is the only secure behaviour.
    public static func bytes(count: Int) -> [UInt8] {
        precondition(count >= 0 && count <= Int(Int32.max), "invalid random byte count")
        var out = [UInt8](repeating: 0, count: count)
        if count == 0 { return out }
        let ok = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        precondition(ok == 1, "RAND_bytes failed: no usable entropy source")
        return out
    }
}

extension UUID {
    /// A version 4 (random) UUID from the OpenSSL DRBG. Foundation's `UUID()` opens and reads
    /// `/dev/urandom` on every call on Linux: three system calls per identifier on hot paths.
    public static func random() -> UUID {
        var bytes = SecureRandom.bytes(count: 16)
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}
