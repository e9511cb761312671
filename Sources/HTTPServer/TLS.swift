import COpenSSL

/// The server's OpenSSL context: certificate chain and key from PEM files, and a fixed
/// policy: TLS 1.2 minimum (1.3 preferred by clients that have it), no renegotiation, and for
/// TLS 1.2 only ECDHE key exchange with AEAD ciphers (forward secrecy, no CBC). TLS 1.3
/// suites are all AEAD and keep OpenSSL's defaults.
/// Only read after initialisation (creating sessions from one `SSL_CTX` on several threads
/// is supported by OpenSSL), hence `@unchecked Sendable`.
final class TLSContext: @unchecked Sendable {
    private let context: OpaquePointer

    /// TLS 1.2 ciphers, strongest first (the server's order wins).
    static let tls12Ciphers = [
        "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
    ].joined(separator: ":")

    init(certificateFile: String, privateKeyFile: String) throws(HTTPServerError) {
        guard let method = TLS_server_method(), let context = SSL_CTX_new(method) else {
            throw .tls("cannot create SSL_CTX: \(TLSContext.lastError())")
        }
        self.context = context
        guard tls_shim_ctx_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw .tls("cannot set minimum protocol version: \(TLSContext.lastError())")
        }
        guard SSL_CTX_set_cipher_list(context, Self.tls12Ciphers) == 1 else {
            throw .tls("cannot set the TLS 1.2 cipher list: \(TLSContext.lastError())")
        }
        tls_shim_ctx_set_server_modes(context)
        tls_shim_ctx_set_server_options(context)
        guard SSL_CTX_use_certificate_chain_file(context, certificateFile) == 1 else {
            throw .tls("cannot load certificate chain from \(certificateFile): \(TLSContext.lastError())")
        }
        guard SSL_CTX_use_PrivateKey_file(context, privateKeyFile, SSL_FILETYPE_PEM) == 1 else {
            throw .tls("cannot load private key from \(privateKeyFile): \(TLSContext.lastError())")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw .tls("private key does not match the certificate: \(TLSContext.lastError())")
        }
    }

    deinit { SSL_CTX_free(context) }

    func makeSession(fd: Int32) -> TLSSession? {
        guard let ssl = SSL_new(context) else { return nil }
        guard SSL_set_fd(ssl, fd) == 1 else {
            SSL_free(ssl)
            return nil
        }
        SSL_set_accept_state(ssl)
        return TLSSession(ssl: ssl)
    }

    static func lastError() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "unknown error" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Outcome of one nonblocking read or write on a connection.
enum IOResult {
    case bytes(Int)
    case wouldBlock
    case closed
    case failed
}

/// One TLS session on a nonblocking socket. WANT_READ and WANT_WRITE both map to
/// `wouldBlock`: the connection is registered edge-triggered for both directions and retries
/// the pending operation on every readiness event.
struct TLSSession {
    let ssl: OpaquePointer

    enum HandshakeResult { case done, wouldBlock, failed }

    func handshake() -> HandshakeResult {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 { return .done }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .wouldBlock
        default:
            ERR_clear_error()
            return .failed
        }
    }

    func read(into buffer: UnsafeMutableRawPointer, count: Int) -> IOResult {
        ERR_clear_error()
        let result = SSL_read(ssl, buffer, Int32(clamping: count))
        if result > 0 { return .bytes(Int(result)) }
        return classify(result)
    }

    func write(from buffer: UnsafeRawPointer, count: Int) -> IOResult {
        ERR_clear_error()
        let result = SSL_write(ssl, buffer, Int32(clamping: count))
        if result > 0 { return .bytes(Int(result)) }
        return classify(result)
    }

    /// Whether decrypted bytes are buffered inside OpenSSL.
    var hasPendingBytes: Bool { SSL_pending(ssl) > 0 }

    private func classify(_ result: Int32) -> IOResult {
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .wouldBlock
        case SSL_ERROR_ZERO_RETURN: return .closed
        default:
            ERR_clear_error()
            return .failed
        }
    }

    /// Sends close_notify (best effort, never waits for the peer's).
    func shutdown() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    func free() { SSL_free(ssl) }
}
