import COpenSSL
import Foundation
import Synchronization

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

    deinit {
        // Cached contexts hold their own reference to the key; free them first anyway.
        contextCache.withLock { $0.removeAll() }
        EVP_PKEY_free(pointer)
    }

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
        try decodeWholeDER(der) { cursor, length in d2i_AutoPrivateKey(nil, &cursor, length) }
    }

    /// Parses a SubjectPublicKeyInfo (SPKI) DER public key. Trailing bytes are refused.
    static func publicFromSPKI(_ der: [UInt8]) throws(CryptoError) -> PKey {
        try decodeWholeDER(der) { cursor, length in d2i_PUBKEY(nil, &cursor, length) }
    }

    /// Parses a bare PKCS#1 `RSAPublicKey`. Trailing bytes are refused.
    static func rsaPublicFromPKCS1(_ der: [UInt8]) throws(CryptoError) -> PKey {
        try decodeWholeDER(der) { cursor, length in d2i_PublicKey(EVP_PKEY_RSA, nil, &cursor, length) }
    }

    /// Runs an OpenSSL `d2i_…` decoder over `der` and accepts the key only when the decoder
    /// consumed every byte.
    private static func decodeWholeDER(
        _ der: [UInt8], _ decode: (inout UnsafePointer<UInt8>?, Int) -> OpaquePointer?
    ) throws(CryptoError) -> PKey {
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let key = decode(&cursor, buffer.count) else { return nil }
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

    /// Signs `data`. RSA and ECDSA hash first (with a digest fetched once per process) and
    /// sign the digest on a cached `EVP_PKEY_CTX`; Ed25519 signs the message itself.
    func sign(_ data: [UInt8], scheme: SignatureScheme) throws(CryptoError) -> [UInt8] {
        let context = try checkOut(SignatureContext.Key(verify: false, scheme: scheme))
        let signature = try context.sign(data, maximumLength: maximumSignatureLength)
        checkIn(context)
        return signature
    }

    /// Whether `signature` is valid for `data`. Any failure, including a malformed
    /// signature, is `false`.
    func verify(_ signature: [UInt8], for data: [UInt8], scheme: SignatureScheme) -> Bool {
        defer { ERR_clear_error() }
        guard let context = try? checkOut(SignatureContext.Key(verify: true, scheme: scheme)) else { return false }
        guard context.verify(signature, for: data) else {
            // Not returned to the cache: after a failure nothing is assumed about its state.
            return false
        }
        checkIn(context)
        return true
    }

    /// Upper bound of a signature's length (the modulus for RSA, the DER maximum for ECDSA).
    private var maximumSignatureLength: Int { max(Int(EVP_PKEY_get_size(pointer)), 64) }

    /// Initialised operation contexts, by operation and scheme, ready for reuse. Creating a
    /// context and initialising it costs as much as an ECDSA signature's arithmetic
    /// (provider lookups, parameter parsing), so they are kept. A context is used by one
    /// thread at a time: it leaves the cache while in use.
    private let contextCache = Mutex<[SignatureContext.Key: [SignatureContext]]>([:])

    /// Contexts kept per operation and scheme; more concurrent users create extra ones,
    /// which are freed after use.
    static let cachedContextLimit = 16

    private func checkOut(_ key: SignatureContext.Key) throws(CryptoError) -> SignatureContext {
        if let cached = contextCache.withLock({ $0[key]?.popLast() }) { return cached }
        return try SignatureContext(key: key, pkey: self)
    }

    private func checkIn(_ context: SignatureContext) {
        contextCache.withLock { cache in
            if cache[context.key, default: []].count < PKey.cachedContextLimit {
                cache[context.key, default: []].append(context)
            }
        }
    }
}

/// How a signature is computed: the digest signed (nil when the algorithm hashes the
/// message itself, as Ed25519 does) and the RSA padding.
struct SignatureScheme: Hashable, Sendable {
    enum Padding: Hashable, Sendable { case none, pkcs1, pss }

    var digest: FetchedDigest.Name?
    var padding: Padding

    static let ed25519 = SignatureScheme(digest: nil, padding: .none)
    static let ecdsaSHA256 = SignatureScheme(digest: .sha256, padding: .none)
}

/// A message digest fetched once and kept for the life of the process. Naming the digest
/// on each call makes OpenSSL look it up again (an implicit fetch, with locking).
final class FetchedDigest: @unchecked Sendable {
    enum Name: String, Hashable, Sendable {
        case sha256 = "SHA256", sha384 = "SHA384", sha512 = "SHA512"

        /// The fetched digest; nil only when the OpenSSL installation cannot provide it.
        var fetched: FetchedDigest? {
            switch self {
            case .sha256: FetchedDigest.sha256
            case .sha384: FetchedDigest.sha384
            case .sha512: FetchedDigest.sha512
            }
        }
    }

    /// The `EVP_MD`; immutable after fetching, so safe to share between threads.
    let pointer: OpaquePointer
    let size: Int

    private init?(_ name: Name) {
        guard let md = EVP_MD_fetch(nil, name.rawValue, nil) else {
            ERR_clear_error()
            return nil
        }
        pointer = md
        size = Int(EVP_MD_get_size(md))
    }

    static let sha256 = FetchedDigest(.sha256)
    static let sha384 = FetchedDigest(.sha384)
    static let sha512 = FetchedDigest(.sha512)

    /// Hashes `data` in one call. Returns nil only if OpenSSL fails.
    func hash(_ data: UnsafeRawBufferPointer) -> [UInt8]? {
        var length: UInt32 = 0
        var ok: Int32 = 0
        let out = [UInt8](unsafeUninitializedCapacity: Int(EVP_MAX_MD_SIZE)) { buffer, count in
            ok = EVP_Digest(data.baseAddress, data.count, buffer.baseAddress, &length, pointer, nil)
            count = ok == 1 ? Int(length) : 0
        }
        return ok == 1 && out.count == size ? out : nil
    }
}

/// One initialised signing or verifying context for one key and scheme. Not thread-safe:
/// `PKey` hands it to one caller at a time, which is what makes `@unchecked Sendable` sound.
final class SignatureContext: @unchecked Sendable {
    struct Key: Hashable, Sendable {
        var verify: Bool
        var scheme: SignatureScheme
    }

    let key: Key
    /// `EVP_PKEY_CTX` (RSA, ECDSA: the digest is signed) or `EVP_MD_CTX` (Ed25519).
    private let pkeyContext: OpaquePointer?
    private let digestContext: OpaquePointer?
    private let digest: FetchedDigest?
    /// `EVP_MD_CTX` reused for hashing the message before RSA and ECDSA signing.
    private let hashContext: OpaquePointer?
    /// Whether the `EVP_MD_CTX` has been used since its initialisation.
    private var used = false

    init(key: Key, pkey: PKey) throws(CryptoError) {
        self.key = key
        guard let name = key.scheme.digest else {
            // PureEdDSA: the one-shot EVP_DigestSign/Verify API.
            guard let md = EVP_MD_CTX_new() else { throw openSSLFailure("EVP_MD_CTX_new") }
            let ok =
                key.verify
                ? EVP_DigestVerifyInit_ex(md, nil, nil, nil, nil, pkey.pointer, nil)
                : EVP_DigestSignInit_ex(md, nil, nil, nil, nil, pkey.pointer, nil)
            guard ok == 1 else {
                EVP_MD_CTX_free(md)
                throw openSSLFailure(key.verify ? "EVP_DigestVerifyInit_ex" : "EVP_DigestSignInit_ex")
            }
            digestContext = md
            pkeyContext = nil
            digest = nil
            hashContext = nil
            return
        }
        guard let digest = name.fetched else { throw .openSSLFailure("EVP_MD_fetch(\(name.rawValue))") }
        guard let hashContext = EVP_MD_CTX_new() else { throw openSSLFailure("EVP_MD_CTX_new") }
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey.pointer, nil) else {
            EVP_MD_CTX_free(hashContext)
            throw openSSLFailure("EVP_PKEY_CTX_new_from_pkey")
        }
        do throws(CryptoError) {
            let initialised = key.verify ? EVP_PKEY_verify_init(ctx) : EVP_PKEY_sign_init(ctx)
            guard initialised == 1 else { throw openSSLFailure(key.verify ? "EVP_PKEY_verify_init" : "EVP_PKEY_sign_init") }
            switch key.scheme.padding {
            case .none: break
            case .pkcs1:
                guard EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1 else {
                    throw openSSLFailure("EVP_PKEY_CTX_set_rsa_padding")
                }
            case .pss:
                guard EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PSS_PADDING) == 1 else {
                    throw openSSLFailure("EVP_PKEY_CTX_set_rsa_padding")
                }
            }
            // The signature digest is also the MGF1 digest for PSS unless set otherwise.
            guard EVP_PKEY_CTX_set_signature_md(ctx, digest.pointer) == 1 else {
                throw openSSLFailure("EVP_PKEY_CTX_set_signature_md")
            }
            if key.scheme.padding == .pss {
                guard EVP_PKEY_CTX_set_rsa_pss_saltlen(ctx, RSA_PSS_SALTLEN_DIGEST) == 1 else {
                    throw openSSLFailure("EVP_PKEY_CTX_set_rsa_pss_saltlen")
                }
            }
        } catch {
            EVP_PKEY_CTX_free(ctx)
            EVP_MD_CTX_free(hashContext)
            throw error
        }
        pkeyContext = ctx
        digestContext = nil
        self.digest = digest
        self.hashContext = hashContext
    }

    deinit {
        if let pkeyContext { EVP_PKEY_CTX_free(pkeyContext) }
        if let digestContext { EVP_MD_CTX_free(digestContext) }
        if let hashContext { EVP_MD_CTX_free(hashContext) }
    }

    /// The message digest that RSA and ECDSA sign, computed on the reused `EVP_MD_CTX`.
    private func hash(_ data: [UInt8]) -> [UInt8]? {
        guard let hashContext, let digest else { return nil }
        var length: UInt32 = 0
        var ok = false
        let out = [UInt8](unsafeUninitializedCapacity: Int(EVP_MAX_MD_SIZE)) { buffer, count in
            ok =
                EVP_DigestInit_ex2(hashContext, digest.pointer, nil) == 1
                && data.withUnsafeBytes { EVP_DigestUpdate(hashContext, $0.baseAddress, $0.count) } == 1
                && EVP_DigestFinal_ex(hashContext, buffer.baseAddress, &length) == 1
            count = ok ? min(Int(length), buffer.count) : 0
        }
        return ok && out.count == digest.size ? out : nil
    }

    /// Re-initialises a used `EVP_MD_CTX` for the next one-shot call (same key and
    /// parameters); cheap, unlike a first initialisation.
    private func prepareDigestContext(_ md: OpaquePointer) -> Bool {
        defer { used = true }
        guard used else { return true }
        let ok =
            key.verify
            ? EVP_DigestVerifyInit_ex(md, nil, nil, nil, nil, nil, nil)
            : EVP_DigestSignInit_ex(md, nil, nil, nil, nil, nil, nil)
        return ok == 1
    }

    func sign(_ data: [UInt8], maximumLength: Int) throws(CryptoError) -> [UInt8] {
        var failure: CryptoError?
        let signature = [UInt8](unsafeUninitializedCapacity: maximumLength) { out, count in
            count = 0
            var length = maximumLength
            if let md = digestContext {
                guard prepareDigestContext(md) else {
                    failure = openSSLFailure("EVP_DigestSignInit_ex")
                    return
                }
                let ok = data.withUnsafeBufferPointer {
                    EVP_DigestSign(md, out.baseAddress, &length, $0.baseAddress, $0.count)
                }
                guard ok == 1 else {
                    failure = openSSLFailure("EVP_DigestSign")
                    return
                }
            } else if let ctx = pkeyContext {
                guard let hashed = hash(data) else {
                    failure = openSSLFailure("EVP_Digest")
                    return
                }
                let ok = EVP_PKEY_sign(ctx, out.baseAddress, &length, hashed, hashed.count)
                guard ok == 1 else {
                    failure = openSSLFailure("EVP_PKEY_sign")
                    return
                }
            } else {
                failure = .openSSLFailure("signature context")
                return
            }
            count = min(length, maximumLength)
        }
        if let failure { throw failure }
        return signature
    }

    func verify(_ signature: [UInt8], for data: [UInt8]) -> Bool {
        if let md = digestContext {
            guard prepareDigestContext(md) else { return false }
            let result = signature.withUnsafeBufferPointer { sig in
                data.withUnsafeBufferPointer { EVP_DigestVerify(md, sig.baseAddress, sig.count, $0.baseAddress, $0.count) }
            }
            return result == 1
        }
        guard let ctx = pkeyContext, let hashed = hash(data) else {
            return false
        }
        let result = signature.withUnsafeBufferPointer { EVP_PKEY_verify(ctx, $0.baseAddress, $0.count, hashed, hashed.count) }
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

/// The version of the OpenSSL library loaded at run time (`3.0.17`), which may be newer than
/// the headers the binary was built against.
public var openSSLVersion: String {
    guard let text = OpenSSL_version(Int32(OPENSSL_VERSION_STRING)) else { return "unknown" }
    return String(cString: text)
}
