import CArgon2

/// Argon2 (RFC 9106) through the reference implementation, libargon2.
public enum Argon2 {
    public enum Variant: String, Sendable, CaseIterable {
        case argon2d, argon2i, argon2id

        var cType: Argon2_type {
            switch self {
            case .argon2d: return Argon2_d
            case .argon2i: return Argon2_i
            case .argon2id: return Argon2_id
            }
        }
    }

    /// Version 1.3 (0x13), the only one RFC 9106 specifies.
    public static let currentVersion: UInt32 = 0x13

    /// Upper bounds applied to every computation, including ones whose parameters come
    /// from a stored hash: a corrupted or hostile record must not make one sign-in
    /// allocate gigabytes or run for minutes.
    public static let maximumMemoryKiB: UInt32 = 1_048_576
    public static let maximumIterations: UInt32 = 64
    public static let maximumParallelism: UInt32 = 16

    /// Computes a raw Argon2 tag. `secret` and `associatedData` are the optional
    /// inputs K and X of RFC 9106 §3.1. `memory`: a block to compute in (`Argon2Memory`),
    /// used when it is large enough; libargon2 allocates its own otherwise.
    public static func hash(
        password: [UInt8], salt: [UInt8], secret: [UInt8] = [], associatedData: [UInt8] = [],
        variant: Variant = .argon2id, iterations: UInt32, memoryKiB: UInt32, parallelism: UInt32,
        length: Int = 32, version: UInt32 = currentVersion, memory: UnsafeMutableRawBufferPointer? = nil
    ) throws(CryptoError) -> [UInt8] {
        guard (1...maximumIterations).contains(iterations) else { throw .invalidParameter("iterations") }
        guard (1...maximumParallelism).contains(parallelism) else { throw .invalidParameter("parallelism") }
        guard memoryKiB >= 8 * parallelism, memoryKiB <= maximumMemoryKiB else {
            throw .invalidParameter("memory")
        }
        guard (4...1024).contains(length) else { throw .invalidParameter("length") }
        guard salt.count >= 8 else { throw .invalidParameter("salt") }
        guard version == 0x10 || version == 0x13 else { throw .invalidParameter("version") }

        // The block is lent to this thread's allocation callback for this computation only
        // (libargon2 allocates and frees on the calling thread).
        if let memory, let base = memory.baseAddress {
            cargon2_lend(base.assumingMemoryBound(to: UInt8.self), memory.count)
        }
        defer { cargon2_lend(nil, 0) }
        var out = [UInt8](repeating: 0, count: length)
        var pwd = password, saltBytes = salt, key = secret, ad = associatedData
        let status: Int32 = out.withUnsafeMutableBufferPointer { outBuffer in
            pwd.withUnsafeMutableBufferPointer { pwdBuffer in
                saltBytes.withUnsafeMutableBufferPointer { saltBuffer in
                    key.withUnsafeMutableBufferPointer { keyBuffer in
                        ad.withUnsafeMutableBufferPointer { adBuffer in
                            var context = argon2_context(
                                out: outBuffer.baseAddress, outlen: UInt32(outBuffer.count),
                                pwd: pwdBuffer.count == 0 ? nil : pwdBuffer.baseAddress,
                                pwdlen: UInt32(pwdBuffer.count),
                                salt: saltBuffer.baseAddress, saltlen: UInt32(saltBuffer.count),
                                secret: keyBuffer.count == 0 ? nil : keyBuffer.baseAddress,
                                secretlen: UInt32(keyBuffer.count),
                                ad: adBuffer.count == 0 ? nil : adBuffer.baseAddress,
                                adlen: UInt32(adBuffer.count),
                                t_cost: iterations, m_cost: memoryKiB, lanes: parallelism,
                                threads: parallelism,
                                version: version, allocate_cbk: cargon2_allocate, free_cbk: cargon2_free,
                                flags: cargon2_flags_clear_inputs())
                            return argon2_ctx(&context, variant.cType)
                        }
                    }
                }
            }
        }
        guard status == ARGON2_OK.rawValue else {
            if status == ARGON2_MEMORY_ALLOCATION_ERROR.rawValue {
                throw .openSSLFailure("argon2: memory allocation")
            }
            let message = argon2_error_message(status).map { String(cString: $0) } ?? "\(status)"
            throw .openSSLFailure("argon2_ctx: \(message)")
        }
        return out
    }
}
