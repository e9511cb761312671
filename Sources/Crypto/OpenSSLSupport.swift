import COpenSSL
import Foundation

/// Clears the thread's OpenSSL error queue and returns a typed failure naming the call.
/// The queue is cleared so a later, unrelated call never sees a stale error.
func openSSLFailure(_ call: String) -> CryptoError {
    let code = ERR_get_error()
    ERR_clear_error()
    if code == 0 { return .openSSLFailure(call) }
    var buffer = [CChar](repeating: 0, count: 256)
    ERR_error_string_n(code, &buffer, buffer.count)
    let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return .openSSLFailure("\(call): \(text)")
}

/// Owns one `EVP_PKEY`. OpenSSL 3 allows a fully built `EVP_PKEY` to be used from several
/// threads at once for signing and verifying (each operation creates its own
/// `EVP_PKEY_CTX`), and nothing mutates it after construction, hence `@unchecked Sendable`.
/// The public half of a private key is derived once and cached under a lock.
final class PKey: @unchecked Sendable {
    let pointer: OpaquePointer
    private let publicCacheLock = NSLock()
    private var publicCache: PKey?

    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }

    func isA(_ name: String) -> Bool { EVP_PKEY_is_a(pointer, name) == 1 }

    var bits: Int { Int(EVP_PKEY_get_bits(pointer)) }

    func utf8Parameter(_ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 80)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(pointer, name, &buffer, buffer.count, &length) == 1 else {
            return nil
        }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func octetParameter(_ name: String) throws(CryptoError) -> [UInt8] {
        var length = 0
        guard EVP_PKEY_get_octet_string_param(pointer, name, nil, 0, &length) == 1 else {
            throw openSSLFailure("EVP_PKEY_get_octet_string_param(\(name))")
        }
        var out = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_get_octet_string_param(pointer, name, &out, out.count, &length) == 1 else {
            throw openSSLFailure("EVP_PKEY_get_octet_string_param(\(name))")
        }
        return Array(out.prefix(length))
    }

    /// A big-number parameter as unsigned big-endian bytes, left-padded to `padTo` if given.
    func bigNumberParameter(_ name: String, padTo: Int? = nil) throws(CryptoError) -> [UInt8] {
        var bn: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pointer, name, &bn) == 1, let bn else {
            throw openSSLFailure("EVP_PKEY_get_bn_param(\(name))")
        }
        defer { BN_clear_free(bn) }
        let natural = Int((BN_num_bits(bn) + 7) / 8)
        let size = max(padTo ?? natural, natural, 1)
        var out = [UInt8](repeating: 0, count: size)
        guard BN_bn2binpad(bn, &out, Int32(size)) == Int32(size) else {
            throw openSSLFailure("BN_bn2binpad")
        }
        return out
    }

    /// Checks the public part (EC point on the curve, RSA modulus sanity).
    func checkPublic() -> Bool {
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else { return false }
        defer { EVP_PKEY_CTX_free(ctx) }
        let ok = EVP_PKEY_public_check(ctx) == 1
        ERR_clear_error()
        return ok
    }

    /// Checks that the private and public parts belong together.
    func checkPair() -> Bool {
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else { return false }
        defer { EVP_PKEY_CTX_free(ctx) }
        let ok = EVP_PKEY_pairwise_check(ctx) == 1
        ERR_clear_error()
        return ok
    }

    // MARK: Construction

    /// Generates a key; `configure` sets algorithm-specific options on the context.
    static func generate(
        _ algorithm: String, configure: (OpaquePointer) -> Int32 = { _ in 1 }
    ) throws(CryptoError) -> PKey {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else {
            throw openSSLFailure("EVP_PKEY_CTX_new_from_name(\(algorithm))")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_keygen_init(ctx) == 1 else { throw openSSLFailure("EVP_PKEY_keygen_init") }
        guard configure(ctx) == 1 else { throw openSSLFailure("keygen parameters") }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(ctx, &key) == 1, let key else { throw openSSLFailure("EVP_PKEY_generate") }
        return PKey(taking: key)
    }

    /// Builds a key from raw parameters (`EVP_PKEY_fromdata`). Any failure means the
    /// parts do not form a valid key, hence `invalidKeyEncoding`.
    static func fromData(
        _ algorithm: String, selection: Int32, build: (ParamBuilder) -> Bool
    ) throws(CryptoError) -> PKey {
        let builder = try ParamBuilder()
        guard build(builder) else {
            ERR_clear_error()
            throw .invalidKeyEncoding
        }
        guard let params = OSSL_PARAM_BLD_to_param(builder.pointer) else { throw openSSLFailure("OSSL_PARAM_BLD_to_param") }
        defer { OSSL_PARAM_free(params) }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else {
            throw openSSLFailure("EVP_PKEY_CTX_new_from_name(\(algorithm))")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_fromdata_init(ctx) == 1 else { throw openSSLFailure("EVP_PKEY_fromdata_init") }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata(ctx, &key, selection, params) == 1, let key else {
            ERR_clear_error()
            throw .invalidKeyEncoding
        }
        // `params` refers to the builder's parameter names; keep them alive until here.
        withExtendedLifetime(builder) {}
        return PKey(taking: key)
    }

    /// Parses a private key in PKCS#8 or the algorithm's traditional DER form
    /// (SEC1 for EC, PKCS#1 for RSA). Trailing bytes are refused.
    static func privateFromDER(_ der: [UInt8]) throws(CryptoError) -> PKey {
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let key = d2i_AutoPrivateKey(nil, &cursor, buffer.count) else { return nil }
            if cursor != base + buffer.count {
                EVP_PKEY_free(key)
                return nil
            }
            return key
        }
        guard let key else {
            ERR_clear_error()
            throw .invalidKeyEncoding
        }
        return PKey(taking: key)
    }

    /// Parses a SubjectPublicKeyInfo (SPKI) DER public key. Trailing bytes are refused.
    static func publicFromSPKI(_ der: [UInt8]) throws(CryptoError) -> PKey {
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let key = d2i_PUBKEY(nil, &cursor, buffer.count) else { return nil }
            if cursor != base + buffer.count {
                EVP_PKEY_free(key)
                return nil
            }
            return key
        }
        guard let key else {
            ERR_clear_error()
            throw .invalidKeyEncoding
        }
        return PKey(taking: key)
    }

    /// Parses a bare PKCS#1 `RSAPublicKey`. Trailing bytes are refused.
    static func rsaPublicFromPKCS1(_ der: [UInt8]) throws(CryptoError) -> PKey {
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let key = d2i_PublicKey(EVP_PKEY_RSA, nil, &cursor, buffer.count) else { return nil }
            if cursor != base + buffer.count {
                EVP_PKEY_free(key)
                return nil
            }
            return key
        }
        guard let key else {
            ERR_clear_error()
            throw .invalidKeyEncoding
        }
        return PKey(taking: key)
    }

    /// The public key as SubjectPublicKeyInfo DER.
    func spkiDER() throws(CryptoError) -> [UInt8] {
        let length = i2d_PUBKEY(pointer, nil)
        guard length > 0 else { throw openSSLFailure("i2d_PUBKEY") }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PUBKEY(pointer, &cursor)
        }
        guard written == length else { throw openSSLFailure("i2d_PUBKEY") }
        return out
    }

    /// The private key as PKCS#8 `PrivateKeyInfo` DER (unencrypted).
    func pkcs8DER() throws(CryptoError) -> [UInt8] {
        guard let info = EVP_PKEY2PKCS8(pointer) else { throw openSSLFailure("EVP_PKEY2PKCS8") }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        let length = i2d_PKCS8_PRIV_KEY_INFO(info, nil)
        guard length > 0 else { throw openSSLFailure("i2d_PKCS8_PRIV_KEY_INFO") }
        var out = [UInt8](repeating: 0, count: Int(length))
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PKCS8_PRIV_KEY_INFO(info, &cursor)
        }
        guard written == length else { throw openSSLFailure("i2d_PKCS8_PRIV_KEY_INFO") }
        return out
    }

    /// The public key of a private key, as its own `PKey` (round trip through SPKI DER,
    /// which copies only the public part), computed once.
    func publicOnly() throws(CryptoError) -> PKey {
        publicCacheLock.lock()
        defer { publicCacheLock.unlock() }
        if let publicCache { return publicCache }
        let derived = try PKey.publicFromSPKI(spkiDER())
        publicCache = derived
        return derived
    }

    // MARK: Signing

    /// One-shot `EVP_DigestSign`. `digest` nil for Ed25519; `configure` sets padding.
    func sign(
        _ data: [UInt8], digest: String?, configure: (OpaquePointer) -> Int32 = { _ in 1 }
    ) throws(CryptoError) -> [UInt8] {
        guard let md = EVP_MD_CTX_new() else { throw openSSLFailure("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(md) }
        var pctx: OpaquePointer?
        guard EVP_DigestSignInit_ex(md, &pctx, digest, nil, nil, pointer, nil) == 1, let pctx else {
            throw openSSLFailure("EVP_DigestSignInit_ex")
        }
        guard configure(pctx) == 1 else { throw openSSLFailure("signature parameters") }
        var length = 0
        let ok = data.withUnsafeBufferPointer { buffer in
            EVP_DigestSign(md, nil, &length, buffer.baseAddress, buffer.count)
        }
        guard ok == 1 else { throw openSSLFailure("EVP_DigestSign") }
        var signature = [UInt8](repeating: 0, count: length)
        let ok2 = data.withUnsafeBufferPointer { buffer in
            EVP_DigestSign(md, &signature, &length, buffer.baseAddress, buffer.count)
        }
        guard ok2 == 1 else { throw openSSLFailure("EVP_DigestSign") }
        return Array(signature.prefix(length))
    }

    /// One-shot `EVP_DigestVerify`. Any failure, including a malformed signature, is `false`.
    func verify(
        _ signature: [UInt8], for data: [UInt8], digest: String?,
        configure: (OpaquePointer) -> Int32 = { _ in 1 }
    ) -> Bool {
        defer { ERR_clear_error() }
        guard let md = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(md) }
        var pctx: OpaquePointer?
        guard EVP_DigestVerifyInit_ex(md, &pctx, digest, nil, nil, pointer, nil) == 1, let pctx else {
            return false
        }
        guard configure(pctx) == 1 else { return false }
        let result = signature.withUnsafeBufferPointer { sig in
            data.withUnsafeBufferPointer { buffer in
                EVP_DigestVerify(md, sig.baseAddress, sig.count, buffer.baseAddress, buffer.count)
            }
        }
        return result == 1
    }
}

/// An `OSSL_PARAM_BLD` that owns copies of the parameter names and string values:
/// OpenSSL stores those pointers without copying them (names until the `OSSL_PARAM` array
/// is freed, values until `OSSL_PARAM_BLD_to_param`), so they must outlive both.
final class ParamBuilder {
    let pointer: OpaquePointer
    private var names: [UnsafeMutableRawPointer] = []

    init() throws(CryptoError) {
        guard let pointer = OSSL_PARAM_BLD_new() else { throw openSSLFailure("OSSL_PARAM_BLD_new") }
        self.pointer = pointer
    }

    deinit {
        OSSL_PARAM_BLD_free(pointer)
        names.forEach { free($0) }
    }

    private func name(_ text: String) -> UnsafeMutablePointer<CChar>? {
        guard let copy = strdup(text) else { return nil }
        names.append(UnsafeMutableRawPointer(copy))
        return copy
    }

    func push(_ key: String, utf8 value: String) -> Bool {
        guard let key = name(key), let value = name(value) else { return false }
        return OSSL_PARAM_BLD_push_utf8_string(pointer, key, value, 0) == 1
    }

    func push(_ key: String, octets value: [UInt8]) -> Bool {
        guard let key = name(key), let copy = malloc(max(value.count, 1)) else { return false }
        names.append(copy)
        value.withUnsafeBytes { if let base = $0.baseAddress { copy.copyMemory(from: base, byteCount: $0.count) } }
        return OSSL_PARAM_BLD_push_octet_string(pointer, key, copy, value.count) == 1
    }

    func push(_ key: String, uint64 value: UInt64) -> Bool {
        guard let key = name(key) else { return false }
        return OSSL_PARAM_BLD_push_uint64(pointer, key, value) == 1
    }

    func push(_ key: String, uint32 value: UInt32) -> Bool {
        guard let key = name(key) else { return false }
        return OSSL_PARAM_BLD_push_uint32(pointer, key, value) == 1
    }

    func push(_ key: String, bigNumber value: OpaquePointer) -> Bool {
        guard let key = name(key) else { return false }
        return OSSL_PARAM_BLD_push_BN(pointer, key, value) == 1
    }
}
