import COpenSSL

/// Password-based key derivation through OpenSSL's `EVP_KDF`, used only to verify
/// password hashes imported from other systems (scrypt, PBKDF2) until they are rehashed.
enum KDF {
    /// scrypt (RFC 7914). `n` must be a power of two above 1.
    static func scrypt(
        password: [UInt8], salt: [UInt8], n: UInt64, r: UInt32, p: UInt32, length: Int
    ) throws(CryptoError) -> [UInt8] {
        guard n > 1, n & (n - 1) == 0, n <= 1 << 20, (1...32).contains(r), (1...16).contains(p) else {
            throw .invalidParameter("scrypt parameters")
        }
        // 128·r·n bytes for V plus 128·r·p for B; allow what the parameters need, up to
        // the same 1 GiB bound as Argon2.
        let memory = UInt64(128) * UInt64(r) * (n + UInt64(p)) + (1 << 20)
        guard memory <= UInt64(Argon2.maximumMemoryKiB) * 1024 + (1 << 20) else {
            throw .invalidParameter("scrypt memory")
        }
        return try derive("SCRYPT", length: length) { builder in
            builder.push("pass", octets: password) && builder.push("salt", octets: salt)
                && builder.push("n", uint64: n) && builder.push("r", uint32: r) && builder.push("p", uint32: p)
                && builder.push("maxmem_bytes", uint64: memory)
        }
    }

    /// PBKDF2 (RFC 8018) with HMAC over `digest` ("SHA256", "SHA512", "SHA1").
    static func pbkdf2(
        password: [UInt8], salt: [UInt8], iterations: UInt32, digest: String, length: Int
    ) throws(CryptoError) -> [UInt8] {
        guard (1...10_000_000).contains(iterations) else { throw .invalidParameter("iterations") }
        return try derive("PBKDF2", length: length) { builder in
            // pkcs5 = 1 lifts the SP 800-132 minimums: imported hashes may predate them.
            builder.push("pass", octets: password) && builder.push("salt", octets: salt)
                && builder.push("iter", uint64: UInt64(iterations)) && builder.push("digest", utf8: digest)
                && builder.push("pkcs5", uint32: 1)
        }
    }

    private static func derive(
        _ name: String, length: Int, build: (ParamBuilder) -> Bool
    ) throws(CryptoError) -> [UInt8] {
        guard (1...1024).contains(length) else { throw .invalidParameter("length") }
        guard let kdf = EVP_KDF_fetch(nil, name, nil) else { throw openSSLFailure("EVP_KDF_fetch(\(name))") }
        defer { EVP_KDF_free(kdf) }
        guard let ctx = EVP_KDF_CTX_new(kdf) else { throw openSSLFailure("EVP_KDF_CTX_new") }
        defer { EVP_KDF_CTX_free(ctx) }
        let builder = try ParamBuilder()
        guard build(builder), let params = OSSL_PARAM_BLD_to_param(builder.pointer) else {
            throw openSSLFailure("\(name) parameters")
        }
        defer { OSSL_PARAM_free(params) }
        var out = [UInt8](repeating: 0, count: length)
        let ok = EVP_KDF_derive(ctx, &out, out.count, params)
        withExtendedLifetime(builder) {}
        guard ok == 1 else { throw openSSLFailure("EVP_KDF_derive(\(name))") }
        return out
    }
}
