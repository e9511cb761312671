import COpenSSL

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
