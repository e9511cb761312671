import COpenSSL
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Why an outgoing connection failed.
public enum ClientConnectionError: Error, Equatable, CustomStringConvertible {
    /// The host name did not resolve.
    case unresolvable(String)
    /// Every address refused or did not answer in time.
    case connectFailed(String)
    /// The peer did not answer within the timeout.
    case timedOut
    /// The peer closed the connection.
    case closed
    /// The peer sent a line longer than the protocol allows.
    case lineTooLong
    /// TLS setup, handshake or certificate verification failed.
    case tls(String)
    case system(String, Int32)

    public var description: String {
        switch self {
        case .unresolvable(let host): "cannot resolve \(host)"
        case .connectFailed(let detail): "cannot connect: \(detail)"
        case .timedOut: "timed out"
        case .closed: "connection closed by the peer"
        case .lineTooLong: "line too long"
        case .tls(let detail): "TLS: \(detail)"
        case .system(let call, let code): "\(call) failed: errno \(code)"
        }
    }
}

/// A client TLS configuration: TLS 1.2 or later, and the peer's certificate checked against
/// the system's trusted roots (or the roots of `caFile`) and against the expected host name.
/// Read-only after initialisation, hence `@unchecked Sendable`.
public final class TLSClientContext: @unchecked Sendable {
    let context: OpaquePointer

    /// - Parameter caFile: PEM file of trusted roots; nil means the system's default store.
    public init(caFile: String? = nil) throws(ClientConnectionError) {
        guard let method = TLS_client_method(), let context = SSL_CTX_new(method) else {
            throw .tls("cannot create SSL_CTX: \(TLSContext.lastError())")
        }
        self.context = context
        guard tls_shim_ctx_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw .tls("cannot set minimum protocol version: \(TLSContext.lastError())")
        }
        let loaded =
            if let caFile {
                SSL_CTX_load_verify_locations(context, caFile, nil)
            } else {
                SSL_CTX_set_default_verify_paths(context)
            }
        guard loaded == 1 else { throw .tls("cannot load trusted roots: \(TLSContext.lastError())") }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
    }

    deinit { SSL_CTX_free(context) }
}

/// One blocking TCP connection from this process to a server, with a timeout on every read
/// and write, that can switch to TLS at any point (implicit TLS right after connecting, or
/// after a STARTTLS-style exchange). For protocols spoken from background threads (mail
/// submission); the HTTP server itself never uses it.
public final class ClientConnection {
    private var fd: Int32
    private var ssl: OpaquePointer?
    private var buffer: [UInt8] = []
    private var bufferStart = 0
    public let host: String

    /// Resolves `host` and connects to the first address that answers within `timeout`. With
    /// `address` (a numeric IP address the caller resolved and vetted), connects there instead
    /// while `host` stays the name TLS verifies.
    public init(host: String, port: Int, timeout: Duration, address: String? = nil)
        throws(ClientConnectionError)
    {
        self.host = host
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        if address != nil { hints.ai_flags = AI_NUMERICHOST }
        var list: UnsafeMutablePointer<addrinfo>?
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard getaddrinfo(address ?? bare, String(port), &hints, &list) == 0, let first = list else {
            throw .unresolvable(host)
        }
        defer { freeaddrinfo(list) }
        var lastError: Int32 = 0
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        var connected: Int32 = -1
        while let info = cursor {
            cursor = info.pointee.ai_next
            let socket = Glibc.socket(
                info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard socket >= 0 else {
                lastError = errno
                continue
            }
            if Self.connect(
                socket, info.pointee.ai_addr, info.pointee.ai_addrlen, timeout: timeout, error: &lastError)
            {
                connected = socket
                break
            }
            Glibc.close(socket)
        }
        guard connected >= 0 else {
            throw lastError == ETIMEDOUT ? .timedOut : .connectFailed("\(host):\(port) (errno \(lastError))")
        }
        fd = connected
        var time = timeval(
            tv_sec: Int(timeout.components.seconds),
            tv_usec: Int(timeout.components.attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// A nonblocking connect bounded by `timeout`, then back to blocking mode.
    private static func connect(
        _ socket: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t, timeout: Duration,
        error: inout Int32
    ) -> Bool {
        let flags = fcntl(socket, F_GETFL)
        _ = fcntl(socket, F_SETFL, flags | O_NONBLOCK)
        if Glibc.connect(socket, address, length) != 0 {
            guard errno == EINPROGRESS else {
                error = errno
                return false
            }
            var poller = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
            let milliseconds = Int32(clamping: timeout.components.seconds * 1_000)
            let ready = poll(&poller, 1, milliseconds)
            guard ready == 1 else {
                error = ready == 0 ? ETIMEDOUT : errno
                return false
            }
            var status: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(socket, SOL_SOCKET, SO_ERROR, &status, &size)
            guard status == 0 else {
                error = status
                return false
            }
        }
        _ = fcntl(socket, F_SETFL, flags)
        return true
    }

    deinit { close() }

    public var isTLS: Bool { ssl != nil }

    /// Runs the TLS handshake on the open connection, verifying the certificate chain and that
    /// it names `host` (DNS name or IP address). Bytes read before but not consumed are an
    /// error: a server must not send anything between STARTTLS and the handshake.
    public func startTLS(_ context: TLSClientContext) throws(ClientConnectionError) {
        guard ssl == nil else { return }
        guard bufferStart == buffer.count else { throw .tls("unexpected bytes before the handshake") }
        guard let session = SSL_new(context.context) else { throw .tls("cannot create SSL") }
        ssl = session
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let isAddress = Self.isNumericAddress(name)
        if isAddress {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(session), name) == 1 else {
                throw .tls("cannot set the expected address")
            }
        } else {
            guard tls_shim_set_host_name(session, name) == 1, SSL_set1_host(session, name) == 1 else {
                throw .tls("cannot set the expected host name")
            }
        }
        guard SSL_set_fd(session, fd) == 1 else { throw .tls("cannot attach the socket") }
        ERR_clear_error()
        let result = SSL_connect(session)
        guard result == 1 else {
            let verify = SSL_get_verify_result(session)
            if verify != X509_V_OK {
                let reason = X509_verify_cert_error_string(verify).map { String(cString: $0) } ?? "\(verify)"
                ERR_clear_error()
                throw .tls("certificate verification failed: \(reason)")
            }
            if SSL_get_error(session, result) == SSL_ERROR_SYSCALL, errno == EAGAIN || errno == EWOULDBLOCK {
                ERR_clear_error()
                throw .timedOut
            }
            throw .tls("handshake failed: \(TLSContext.lastError())")
        }
        guard SSL_get_verify_result(session) == X509_V_OK else { throw .tls("certificate not verified") }
    }

    static func isNumericAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// Writes every byte or throws.
    public func write(_ bytes: [UInt8]) throws(ClientConnectionError) {
        var offset = 0
        while offset < bytes.count {
            let written: Int = bytes.withUnsafeBytes { raw in
                guard let start = raw.baseAddress else { return -1 }
                let base = start + offset
                let count = bytes.count - offset
                if let ssl {
                    ERR_clear_error()
                    return Int(SSL_write(ssl, base, Int32(clamping: count)))
                }
                return Glibc.send(fd, base, count, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                offset += written
                continue
            }
            throw failure(result: Int32(clamping: written), call: "write")
        }
    }

    /// One line without its CRLF (or LF); at most `limit` bytes.
    public func readLine(limit: Int = 4_096) throws(ClientConnectionError) -> String {
        while true {
            if let newline = buffer[bufferStart...].firstIndex(of: UInt8(ascii: "\n")) {
                guard newline - bufferStart <= limit else { throw .lineTooLong }
                var end = newline
                if end > bufferStart, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                let line = String(decoding: buffer[bufferStart..<end], as: UTF8.self)
                bufferStart = newline + 1
                if bufferStart == buffer.count {
                    buffer.removeAll(keepingCapacity: true)
                    bufferStart = 0
                }
                return line
            }
            guard buffer.count - bufferStart <= limit else { throw .lineTooLong }
            try fill()
        }
    }

    /// Every byte until the peer closes the connection (an HTTP/1.0 response), at most
    /// `limit` of them and no later than `deadline`.
    public func readToEnd(limit: Int, deadline: ContinuousClock.Instant) throws(ClientConnectionError)
        -> [UInt8]
    {
        while true {
            guard buffer.count - bufferStart <= limit else { throw .lineTooLong }
            guard ContinuousClock.now < deadline else { throw .timedOut }
            do {
                try fill()
            } catch {
                if error == .closed { break }
                throw error
            }
        }
        let bytes = Array(buffer[bufferStart...])
        buffer.removeAll(keepingCapacity: false)
        bufferStart = 0
        return bytes
    }

    /// Exactly `count` bytes (an HTTP body of known length), no later than `deadline`.
    public func read(exactly count: Int, deadline: ContinuousClock.Instant) throws(ClientConnectionError)
        -> [UInt8]
    {
        while buffer.count - bufferStart < count {
            guard ContinuousClock.now < deadline else { throw .timedOut }
            try fill()
        }
        let bytes = Array(buffer[bufferStart..<(bufferStart + count)])
        bufferStart += count
        if bufferStart == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            bufferStart = 0
        }
        return bytes
    }

    private func fill() throws(ClientConnectionError) {
        var chunk = [UInt8](repeating: 0, count: 4_096)
        let count: Int = chunk.withUnsafeMutableBytes { raw in
            if let ssl {
                ERR_clear_error()
                return Int(SSL_read(ssl, raw.baseAddress, Int32(raw.count)))
            }
            return Glibc.recv(fd, raw.baseAddress, raw.count, 0)
        }
        if count > 0 {
            if bufferStart > 0 {
                buffer.removeFirst(bufferStart)
                bufferStart = 0
            }
            buffer.append(contentsOf: chunk[0..<count])
            return
        }
        if count == 0, ssl == nil { throw .closed }
        throw failure(result: Int32(clamping: count), call: "read")
    }

    private func failure(result: Int32, call: String) -> ClientConnectionError {
        let code = errno
        if let ssl {
            let kind = SSL_get_error(ssl, result)
            ERR_clear_error()
            switch kind {
            case SSL_ERROR_ZERO_RETURN: return .closed
            case SSL_ERROR_SYSCALL where code == EAGAIN || code == EWOULDBLOCK: return .timedOut
            case SSL_ERROR_SYSCALL where result == 0: return .closed
            default: return .tls("\(call) failed")
            }
        }
        if code == EAGAIN || code == EWOULDBLOCK { return .timedOut }
        if code == EPIPE || code == ECONNRESET { return .closed }
        return .system(call, code)
    }

    /// Sends close_notify when TLS is on (best effort) and closes the socket; idempotent.
    public func close() {
        if let ssl {
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
            ERR_clear_error()
            SSL_free(ssl)
            self.ssl = nil
        }
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }
}
