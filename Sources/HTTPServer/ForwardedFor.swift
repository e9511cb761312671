import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Replaces the request's `remoteAddress` with the client address a trusted reverse proxy
/// reports in `X-Forwarded-For`, so that throttling, sessions and audit events see the
/// client rather than the proxy.
///
/// Only a request whose peer is a trusted proxy is rewritten. The header is read from the
/// right: each proxy appends the address it received the request from, so the rightmost
/// address that is not itself a trusted proxy is the client; anything to its left was
/// written by the client and proves nothing. With no trusted proxies the header is ignored.
public struct ForwardedFor: HTTPMiddleware {
    public let trustedProxies: [AddressRange]

    public init(trustedProxies: [AddressRange]) { self.trustedProxies = trustedProxies }

    public func handle(
        _ request: HTTPRequest, context: inout RequestContext,
        next: (HTTPRequest, inout RequestContext) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        guard !trustedProxies.isEmpty, isTrusted(request.remoteAddress) else { return try next(request, &context) }
        var request = request
        request.remoteAddress = clientAddress(peer: request.remoteAddress, header: request.headers.values("X-Forwarded-For"))
        return try next(request, &context)
    }

    /// The client address for a request from the trusted `peer` carrying these
    /// `X-Forwarded-For` header lines (in order).
    public func clientAddress(peer: String, header lines: [String]) -> String {
        let hops = lines.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() {
            guard let address = AddressRange.canonical(hop) else { return peer }  // malformed: stop trusting
            if !isTrusted(address) { return address }
        }
        // Every hop was a trusted proxy: the leftmost is the best knowledge there is.
        return hops.first.flatMap(AddressRange.canonical) ?? peer
    }

    private func isTrusted(_ address: String) -> Bool { trustedProxies.contains { $0.contains(address) } }
}

/// An IPv4 or IPv6 address, or a CIDR block of them (`10.0.0.0/8`, `::1`, `fd00::/8`).
public struct AddressRange: Sendable, Equatable, CustomStringConvertible {
    /// 16 bytes; IPv4 as an IPv4-mapped IPv6 address, so both families compare alike.
    let network: [UInt8]
    let prefixLength: Int
    public let description: String

    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let bytes = AddressRange.parse(String(parts[0])) else { return nil }
        let isV4 = !parts[0].contains(":")
        let maximum = isV4 ? 32 : 128
        var length = maximum
        if parts.count == 2 {
            guard let value = Int(parts[1]), (0...maximum).contains(value), !parts[1].hasPrefix("+") else { return nil }
            length = value
        }
        prefixLength = isV4 ? length + 96 : length
        network = AddressRange.mask(bytes, prefixLength: prefixLength)
        description = text
    }

    /// Whether `address` (textual IPv4 or IPv6) lies in the block.
    public func contains(_ address: String) -> Bool {
        guard let bytes = AddressRange.parse(address) else { return false }
        return AddressRange.mask(bytes, prefixLength: prefixLength) == network
    }

    /// The address in its usual textual form, or nil when it is not an IP address.
    static func canonical(_ text: String) -> String? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return text }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func parse(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + withUnsafeBytes(of: v4.s_addr) { Array($0) }
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        return withUnsafeBytes(of: v6) { Array($0) }
    }

    static func mask(_ bytes: [UInt8], prefixLength: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let bits = min(max(prefixLength - index * 8, 0), 8)
            return bits == 8 ? byte : byte & ~(UInt8(0xFF) >> bits)
        }
    }
}
