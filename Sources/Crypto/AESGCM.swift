import COpenSSL
import Foundation

/// AES in Galois/Counter Mode (NIST SP 800-38D), used to encrypt signing keys at rest.
public enum AES {
    public enum GCM {}
}

extension AES.GCM {
    public static let nonceByteCount = 12
    public static let tagByteCount = 16

    /// A nonce, ciphertext and tag; `combined` is how it is stored.
    public struct SealedBox: Sendable, Equatable {
        public let nonce: [UInt8]
        public let ciphertext: [UInt8]
        public let tag: [UInt8]

        public init(nonce: [UInt8], ciphertext: [UInt8], tag: [UInt8]) throws(CryptoError) {
            guard nonce.count == AES.GCM.nonceByteCount else { throw .invalidParameter("nonce") }
            guard tag.count == AES.GCM.tagByteCount else { throw .invalidParameter("tag") }
            self.nonce = nonce
            self.ciphertext = ciphertext
            self.tag = tag
        }

        /// `nonce (12) || ciphertext || tag (16)`.
        public init(combined: some DataProtocol) throws(CryptoError) {
            let bytes = Array(combined)
            guard bytes.count >= AES.GCM.nonceByteCount + AES.GCM.tagByteCount else {
                throw .invalidParameter("combined")
            }
            try self.init(
                nonce: Array(bytes.prefix(AES.GCM.nonceByteCount)),
                ciphertext: Array(bytes[AES.GCM.nonceByteCount..<(bytes.count - AES.GCM.tagByteCount)]),
                tag: Array(bytes.suffix(AES.GCM.tagByteCount)))
        }

        public var combined: [UInt8] { nonce + ciphertext + tag }
    }

    /// Encrypts and authenticates. Without a nonce a random one is drawn: with random
    /// 96-bit nonces one key stays safe for far more messages than keys at rest will see.
    public static func seal(
        _ plaintext: some DataProtocol, using key: SymmetricKey, nonce: [UInt8]? = nil,
        authenticating aad: [UInt8] = []
    ) throws(CryptoError) -> SealedBox {
        let nonce = nonce ?? SecureRandom.bytes(count: nonceByteCount)
        guard nonce.count == nonceByteCount else { throw .invalidParameter("nonce") }
        let context = try CipherContext(key: key, nonce: nonce, encrypt: true)
        try context.addAAD(aad)
        let ciphertext = try context.update(Array(plaintext))
        var outLength: Int32 = 0
        var scratch = [UInt8](repeating: 0, count: 16)
        guard EVP_EncryptFinal_ex(context.pointer, &scratch, &outLength) == 1 else {
            throw openSSLFailure("EVP_EncryptFinal_ex")
        }
        var tag = [UInt8](repeating: 0, count: tagByteCount)
        guard EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_GET_TAG, Int32(tagByteCount), &tag) == 1 else {
            throw openSSLFailure("EVP_CTRL_GCM_GET_TAG")
        }
        return try SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag)
    }

    /// Decrypts after checking the tag; any mismatch (key, nonce, data, tag, AAD) is
    /// `authenticationFailure` and no plaintext is returned.
    public static func open(
        _ box: SealedBox, using key: SymmetricKey, authenticating aad: [UInt8] = []
    ) throws(CryptoError) -> [UInt8] {
        let context = try CipherContext(key: key, nonce: box.nonce, encrypt: false)
        try context.addAAD(aad)
        let plaintext = try context.update(box.ciphertext)
        var tag = box.tag
        guard EVP_CIPHER_CTX_ctrl(context.pointer, EVP_CTRL_GCM_SET_TAG, Int32(tag.count), &tag) == 1 else {
            throw openSSLFailure("EVP_CTRL_GCM_SET_TAG")
        }
        var outLength: Int32 = 0
        var scratch = [UInt8](repeating: 0, count: 16)
        guard EVP_DecryptFinal_ex(context.pointer, &scratch, &outLength) == 1 else {
            ERR_clear_error()
            throw .authenticationFailure
        }
        return plaintext
    }
}

/// Owns an `EVP_CIPHER_CTX` set up for AES-256-GCM with a 12-byte nonce.
private final class CipherContext {
    let pointer: OpaquePointer
    let encrypt: Bool

    init(key: SymmetricKey, nonce: [UInt8], encrypt: Bool) throws(CryptoError) {
        guard key.bytes.count == 32 else { throw .invalidParameter("key must be 256 bits") }
        guard let pointer = EVP_CIPHER_CTX_new() else { throw openSSLFailure("EVP_CIPHER_CTX_new") }
        self.pointer = pointer
        self.encrypt = encrypt
        let ok = key.bytes.withUnsafeBufferPointer { keyBuffer in
            nonce.withUnsafeBufferPointer { nonceBuffer in
                encrypt
                    ? EVP_EncryptInit_ex(pointer, EVP_aes_256_gcm(), nil, keyBuffer.baseAddress, nonceBuffer.baseAddress)
                    : EVP_DecryptInit_ex(pointer, EVP_aes_256_gcm(), nil, keyBuffer.baseAddress, nonceBuffer.baseAddress)
            }
        }
        guard ok == 1 else { throw openSSLFailure("EVP_CipherInit_ex") }
    }

    deinit { EVP_CIPHER_CTX_free(pointer) }

    func addAAD(_ aad: [UInt8]) throws(CryptoError) {
        guard !aad.isEmpty else { return }
        var outLength: Int32 = 0
        let ok = aad.withUnsafeBufferPointer { buffer in
            encrypt
                ? EVP_EncryptUpdate(pointer, nil, &outLength, buffer.baseAddress, Int32(buffer.count))
                : EVP_DecryptUpdate(pointer, nil, &outLength, buffer.baseAddress, Int32(buffer.count))
        }
        guard ok == 1 else { throw openSSLFailure("EVP_CipherUpdate(aad)") }
    }

    func update(_ input: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard !input.isEmpty else { return [] }
        guard input.count < Int(Int32.max) - 16 else { throw .invalidParameter("input too large") }
        var out = [UInt8](repeating: 0, count: input.count + 16)
        var outLength: Int32 = 0
        let ok = input.withUnsafeBufferPointer { buffer in
            encrypt
                ? EVP_EncryptUpdate(pointer, &out, &outLength, buffer.baseAddress, Int32(buffer.count))
                : EVP_DecryptUpdate(pointer, &out, &outLength, buffer.baseAddress, Int32(buffer.count))
        }
        guard ok == 1 else { throw openSSLFailure("EVP_CipherUpdate") }
        return Array(out.prefix(Int(outLength)))
    }
}
