import Foundation

/// Addresses and host names that never leave the machine: `localhost`, 127.0.0.0/8 and
/// `::1` (IPv4 loopback also as an IPv4-mapped IPv6 address). Decisions that expose
/// something only to the machine itself (the development mailbox, metrics) ask here.
public enum Loopback {
    private static let ranges = [AddressRange("127.0.0.0/8"), AddressRange("::1/128")].compactMap { $0 }

    /// Whether `host` (a name, an address, or a bracketed IPv6 address) is loopback. Names
    /// other than `localhost` are not resolved and count as not loopback.
    public static func isLoopbackHost(_ host: String) -> Bool {
        var text = host.lowercased()
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if text == "localhost" { return true }
        return isLoopbackAddress(text)
    }

    /// Whether the textual IP address `address` (a peer address) is loopback.
    public static func isLoopbackAddress(_ address: String) -> Bool {
        ranges.contains { $0.contains(address) }
    }

    /// Whether the URL's host is loopback (`http://localhost:8080`, `http://[::1]`).
    public static func isLoopbackURL(_ url: String) -> Bool {
        guard let host = URLComponents(string: url)?.host, !host.isEmpty else { return false }
        return isLoopbackHost(host)
    }

    /// Whether the request came from this machine and from no proxy: a loopback peer and
    /// no forwarding header. A proxy on this machine names its client in those headers
    /// (with trusted proxies, `ForwardedFor` has already put the client in `remoteAddress`).
    public static func isLocal(_ request: HTTPRequest) -> Bool {
        let forwarded = ["X-Forwarded-For", "Forwarded", "X-Real-IP"].contains { request.headers[$0] != nil }
        return !forwarded && isLoopbackAddress(request.remoteAddress)
    }
}
