import Foundation

extension AuthorizationResponse {
    /// The Content-Security-Policy of the `form_post` page: like every other page it loads
    /// only this server's scripts and styles, but its form submits to the client's origin,
    /// which the default policy's `form-action` would forbid.
    public static func formPostPolicy(action: String) -> String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action \(origin(of: action)); frame-ancestors 'none'; base-uri 'none'"
    }

    /// `scheme://host[:port]` of a validated redirect URI (IPv6 hosts in brackets), or
    /// `'none'` when it has no host.
    public static func origin(of uri: String) -> String {
        guard let components = URLComponents(string: uri), let scheme = components.scheme,
            let host = components.host
        else {
            return "'none'"
        }
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return components.port.map { "\(scheme)://\(hostPart):\($0)" } ?? "\(scheme)://\(hostPart)"
    }
}
