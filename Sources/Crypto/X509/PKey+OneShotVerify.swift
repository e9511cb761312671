import COpenSSL

extension PKey {
    /// One-shot `EVP_DigestVerify` with a digest named per call, for the rarely used
    /// certificate algorithms (SHA-1 and SHA-384 RSA, P-384, P-521); the signature hot paths use
    /// `verify(_:for:scheme:)` with cached contexts. Any failure, including a malformed
    /// signature, is `false`.
    func verifyOneShot(
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
