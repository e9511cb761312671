import Foundation

/// Which redirect URIs a client may register (RFC 9700 §4.1, RFC 8252 §7).
///
/// At request time a redirect URI must equal a registered one exactly; these rules decide
/// what may be registered at all, so that no registered URI can leak a code to a party
/// other than the client.
public enum RegisteredRedirectURI {
    /// Why `uri` may not be registered by this kind of client, or `nil` when it may.
    ///
    /// - Web clients: `https` URIs; `http` only on `localhost` or a loopback address, for
    ///   development.
    /// - Native clients: claimed `https` URIs (preferred: an app link / universal link),
    ///   `http` on a loopback IP literal (any port is accepted at request time, RFC 8252
    ///   §7.3), or a private-use scheme in reverse-domain form (RFC 8252 §7.1).
    /// - Never: relative URIs, fragments, wildcards, user info. A percent-encoded `*` or `?` in
    ///   the path counts as a wildcard: apple-app-site-association publishes the decoded path,
    ///   where both are wildcards, so the app would claim more than the callback.
    public static func problem(with uri: String, native: Bool) -> String? {
        guard !uri.contains("*") else { return "must not contain wildcards" }
        guard !uri.contains("#") else { return "must not contain a fragment (RFC 6749 §3.1.2)" }
        guard let components = URLComponents(string: uri), let scheme = components.scheme?.lowercased()
        else { return "must be an absolute URI" }
        guard !components.path.contains("*"), !components.path.contains("?") else {
            return "must not contain wildcards, percent-encoded or not (%2A, %3F in the path)"
        }
        guard components.user == nil, components.password == nil else {
            return "must not contain user information"
        }
        switch scheme {
        case "https":
            guard let host = components.host, !host.isEmpty else { return "must name a host" }
            return nil
        case "http":
            let host = components.host?.lowercased() ?? ""
            if native {
                guard host == "127.0.0.1" || host == "::1" || host == "[::1]" else {
                    return host == "localhost"
                        ? "native loopback redirects must use the IP literal 127.0.0.1 or [::1], not localhost (RFC 8252 §8.3)"
                        : "http is only allowed for loopback IP literals (RFC 8252 §7.3)"
                }
                return nil
            }
            guard host == "localhost" || host == "127.0.0.1" || host == "::1" || host == "[::1]" else {
                return "must use https (http only on localhost, for development)"
            }
            return nil
        default:
            guard native else { return "web clients must use https redirect URIs" }
            guard scheme.contains(".") else {
                return "a private-use scheme must be in reverse-domain form, like com.example.app (RFC 8252 §7.1)"
            }
            return nil
        }
    }
}
