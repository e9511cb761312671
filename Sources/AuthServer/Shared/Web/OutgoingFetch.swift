import Foundation
import HTTPServer
import OIDC

#if canImport(Glibc)
    import Glibc
#endif

/// Why an outgoing fetch failed. The detail goes to the log only.
enum OutgoingFetchError: Error, Equatable {
    /// Not an `https` URL with a host.
    case notHTTPS
    /// The host resolves to an address the server must not call (private, loopback, …).
    case forbiddenAddress(String)
    case unresolvable
    case connection(String)
    /// Not a 200 answer.
    case status(Int)
    case tooLarge
    case malformed
}

/// GET of a URL a client configured (its `jwks_uri`), or a POST to an upstream provider: https only; every address the host
/// resolves to must be public (no loopback, private, link-local, shared, multicast or reserved
/// range, which would let a client configuration reach this server's own network); the
/// connection goes to an address that was checked (no second resolution a DNS answer could
/// change); bounded connect/read time and size. HTTP/1.0 with `Connection: close`, so the body
/// ends where the connection does.
///
/// The same client the mail transport uses (`ClientConnection`): Foundation's URLSession,
/// which the back-channel logout worker uses, resolves names itself and so cannot be held to
/// the checked addresses (that worker refuses redirects, and posts only to the registered URI).
struct OutgoingFetch: Sendable {
    /// Bounds each connect and each read; the whole fetch gets twice this.
    var timeout: Duration = .seconds(5)
    var sizeLimit = 65_536
    /// Test-only (`oauth.jwks_uri_allow_loopback_for_tests`): loopback addresses allowed.
    var allowLoopback = false
    /// Trusted roots for the TLS certificate; nil: the system's.
    var caFile: String?

    func get(_ url: String) throws(OutgoingFetchError) -> [UInt8] {
        let answer = try send(url, method: "GET", headers: [], body: [])
        guard answer.status == 200 else { throw .status(answer.status) }
        return answer.body
    }

    /// POST of a form (an upstream provider's token or revocation endpoint). Every status is
    /// returned with its body (an OAuth error answer is a 400 with JSON), not thrown.
    func post(_ url: String, form: [(String, String)], basicAuth: (String, String)? = nil)
        throws(OutgoingFetchError) -> (status: Int, body: [UInt8])
    {
        let body = Array(FormEncoding.encode(form.map { (name: $0.0, value: $0.1) }).utf8)
        var headers = ["Content-Type: application/x-www-form-urlencoded", "Content-Length: \(body.count)"]
        if let (user, password) = basicAuth {
            // RFC 6749 §2.3.1: each part form-encoded before the base64.
            let credentials = FormEncoding.encode(user) + ":" + FormEncoding.encode(password)
            headers.append("Authorization: Basic " + Data(credentials.utf8).base64EncodedString())
        }
        return try send(url, method: "POST", headers: headers, body: body)
    }

    private func send(_ url: String, method: String, headers: [String], body: [UInt8])
        throws(OutgoingFetchError) -> (status: Int, body: [UInt8])
    {
        do {
            return try exchange(url, method: method, headers: headers, body: body)
        } catch let error as OutgoingFetchError {
            throw error
        } catch {
            throw .connection(String(describing: error))
        }
    }

    private func exchange(_ url: String, method: String, headers: [String], body requestBody: [UInt8]) throws
        -> (status: Int, body: [UInt8])
    {
        guard let components = URLComponents(string: url), components.scheme?.lowercased() == "https",
            let host = components.host, !host.isEmpty, components.user == nil, components.password == nil
        else { throw OutgoingFetchError.notHTTPS }
        let port = components.port ?? 443
        var target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { target += "?" + query }

        // Step 1. Resolve, and check every address before connecting to any.
        let addresses = try Self.resolve(host, port: port)
        for address in addresses where !OutgoingAddressPolicy.isAllowed(address, allowLoopback: allowLoopback)
        {
            throw OutgoingFetchError.forbiddenAddress(OutgoingAddressPolicy.text(address))
        }
        // Step 2. Connect to the first checked address that answers; TLS verifies `host`.
        let deadline = ContinuousClock.now + timeout * 2
        var connection: ClientConnection?
        var lastError = "no address"
        for address in addresses {
            do {
                connection = try ClientConnection(
                    host: host, port: port, timeout: timeout, address: OutgoingAddressPolicy.text(address))
                break
            } catch {
                lastError = error.description
            }
        }
        guard let connection else { throw OutgoingFetchError.connection(lastError) }
        defer { connection.close() }
        do {
            try connection.startTLS(try TLSClientContext(caFile: caFile))
            let hostHeader = components.port.map { "\(host):\($0)" } ?? host
            let extra = headers.map { $0 + "\r\n" }.joined()
            try connection.write(
                Array(
                    ("\(method) \(target) HTTP/1.0\r\nHost: \(hostHeader)\r\nAccept: application/json, "
                        + "application/jwk-set+json\r\nUser-Agent: auth-server\r\n\(extra)Connection: close\r\n\r\n")
                        .utf8) + requestBody)
            // The status line and the headers; then the body by its length (many servers close
            // without a TLS close_notify, so the end of the stream cannot be trusted), or up to
            // the end of the connection.
            let statusLine = try connection.readLine()
            let parts = statusLine.split(separator: " ", maxSplits: 2)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
                throw OutgoingFetchError.malformed
            }
            var length: Int?
            var headerBytes = 0
            while true {
                let line = try connection.readLine()
                if line.isEmpty { break }
                headerBytes += line.utf8.count
                guard headerBytes <= 16_384 else { throw OutgoingFetchError.tooLarge }
                let field = line.split(separator: ":", maxSplits: 1)
                if field.count == 2,
                    field[0].trimmingCharacters(in: .whitespaces).lowercased() == "content-length"
                {
                    length = Int(field[1].trimmingCharacters(in: .whitespaces))
                }
            }
            if let length {
                guard length >= 0, length <= sizeLimit else { throw OutgoingFetchError.tooLarge }
                return (status, try connection.read(exactly: length, deadline: deadline))
            }
            return (status, try connection.readToEnd(limit: sizeLimit, deadline: deadline))
        } catch let error as OutgoingFetchError {
            throw error
        } catch ClientConnectionError.lineTooLong {
            throw OutgoingFetchError.tooLarge
        } catch {
            throw OutgoingFetchError.connection(String(describing: error))
        }
    }

    /// Every address `host` resolves to, as 4 or 16 bytes.
    static func resolve(_ host: String, port: Int) throws(OutgoingFetchError) -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard getaddrinfo(bare, String(port), &hints, &list) == 0, let first = list else {
            throw .unresolvable
        }
        defer { freeaddrinfo(list) }
        var addresses: [[UInt8]] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            cursor = info.pointee.ai_next
            guard let address = info.pointee.ai_addr else { continue }
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    var raw = v4.pointee.sin_addr
                    addresses.append(withUnsafeBytes(of: &raw) { Array($0) })
                }
            case AF_INET6:
                address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    var raw = v6.pointee.sin6_addr
                    addresses.append(withUnsafeBytes(of: &raw) { Array($0) })
                }
            default:
                continue
            }
        }
        guard !addresses.isEmpty else { throw .unresolvable }
        var unique: [[UInt8]] = []
        for address in addresses where !unique.contains(address) { unique.append(address) }
        return unique
    }
}

/// Which addresses the server may call on a client's behalf: public unicast only (RFC 6890
/// special-purpose registries, RFC 4193 unique local, RFC 4291 link-local and multicast).
enum OutgoingAddressPolicy {
    static func isAllowed(_ address: [UInt8], allowLoopback: Bool) -> Bool {
        if isLoopback(address) { return allowLoopback }
        return isPublic(address)
    }

    static func isLoopback(_ address: [UInt8]) -> Bool {
        if address.count == 4 { return address[0] == 127 }
        if address.count == 16 {
            if address == [UInt8](repeating: 0, count: 15) + [1] { return true }
            if let v4 = embeddedIPv4(address) { return isLoopback(v4) }
        }
        return false
    }

    static func isPublic(_ address: [UInt8]) -> Bool {
        if address.count == 4 {
            let (a, b) = (address[0], address[1])
            switch a {
            case 0, 10, 127: return false  // "this network", private, loopback
            case 100 where (64...127).contains(b): return false  // shared address space (CGNAT)
            case 169 where b == 254: return false  // link-local (cloud metadata endpoints)
            case 172 where (16...31).contains(b): return false
            case 192 where b == 168: return false
            case 192 where b == 0 && address[2] == 0: return false  // IETF protocol assignments
            case 192 where b == 0 && address[2] == 2: return false  // documentation
            case 198 where b == 18 || b == 19: return false  // benchmarking
            case 198 where b == 51 && address[2] == 100: return false
            case 203 where b == 0 && address[2] == 113: return false
            case 224...255: return false  // multicast, reserved, broadcast
            default: return true
            }
        }
        guard address.count == 16 else { return false }
        if let v4 = embeddedIPv4(address) { return isPublic(v4) }
        if address.allSatisfy({ $0 == 0 }) || isLoopback(address) { return false }
        if address[0] & 0xFE == 0xFC { return false }  // fc00::/7 unique local
        if address[0] == 0xFE && address[1] & 0xC0 == 0x80 { return false }  // fe80::/10 link-local
        if address[0] == 0xFE && address[1] & 0xC0 == 0xC0 { return false }  // fec0::/10 site-local
        if address[0] == 0xFF { return false }  // multicast
        if address[0] == 0x20 && address[1] == 0x01 && address[2] == 0x0D && address[3] == 0xB8 {
            return false
        }
        if address[0] == 0x01 && address[1...7].allSatisfy({ $0 == 0 }) { return false }  // 100::/64 discard
        return true
    }

    /// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible or NAT64
    /// (`64:ff9b::/96`) address: it is where the packets go.
    static func embeddedIPv4(_ address: [UInt8]) -> [UInt8]? {
        let prefix = Array(address[0..<12])
        if prefix == [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] { return Array(address[12...]) }
        if prefix == [0, 0x64, 0xFF, 0x9B] + [UInt8](repeating: 0, count: 8) { return Array(address[12...]) }
        if prefix == [UInt8](repeating: 0, count: 12), address[12...].contains(where: { $0 != 0 }),
            !(address[12...14].allSatisfy { $0 == 0 } && address[15] == 1)
        {
            return Array(address[12...])
        }
        return nil
    }

    static func text(_ address: [UInt8]) -> String {
        if address.count == 4 { return address.map(String.init).joined(separator: ".") }
        var raw = in6_addr()
        withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: address) }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count)) != nil else { return "::" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
