/// Whether a redirect URI presented at request time is one the client registered
/// (RFC 6749 §3.1.2.3, RFC 9700 §4.1.3, RFC 8252 §7.3).
///
/// Exact string comparison: no case folding, no normalisation of trailing slashes,
/// percent-encoding, default ports or dot segments, so that no two parsers can disagree
/// about where the code goes. The one relaxation is for native clients on a loopback IP
/// literal: the port may differ from the registered one (the app picks a free port at
/// run time); scheme, host, path and query must still match exactly.
public enum RedirectURIMatching {
    /// Whether `requested` matches one of `client.redirectURIs`.
    public static func matches(_ requested: String, client: OAuthClient) -> Bool {
        guard !requested.contains("#") else { return false }
        if client.redirectURIs.contains(requested) { return true }
        guard client.applicationType == .native, let presented = LoopbackURI(requested) else { return false }
        return client.redirectURIs.contains { registered in
            guard let loopback = LoopbackURI(registered) else { return false }
            return loopback.host == presented.host && loopback.rest == presented.rest
        }
    }
}

/// `http://127.0.0.1[:port]<rest>` or `http://[::1][:port]<rest>`, where `rest` is empty
/// or starts with `/` or `?`. Anything else (user info, other hosts, `localhost`, a bad
/// port) is not a loopback redirect URI.
struct LoopbackURI: Equatable {
    let host: String
    let port: Int?
    let rest: Substring

    init?(_ uri: String) {
        let hosts = ["http://127.0.0.1", "http://[::1]"]
        guard let prefix = hosts.first(where: { uri.hasPrefix($0) }) else { return nil }
        var remainder = uri.dropFirst(prefix.count)
        var port: Int?
        if remainder.first == ":" {
            let digits = remainder.dropFirst().prefix { $0.isASCII && $0.isNumber }
            guard (1...5).contains(digits.count), let value = Int(digits), value <= 65535 else { return nil }
            port = value
            remainder = remainder.dropFirst(1 + digits.count)
        }
        guard remainder.isEmpty || remainder.first == "/" || remainder.first == "?" else { return nil }
        self.host = String(prefix.dropFirst("http://".count))
        self.port = port
        self.rest = remainder
    }
}
