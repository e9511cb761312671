import Foundation

/// The CSP `form-action` source list that lets the login, consent and logout forms end at a
/// registered client URI: `'self'`, each https/http origin, `http://127.0.0.1:*` style
/// sources for native loopback redirects (any port), and `scheme:` for private-use schemes.
enum FormActionSources {
    static func sources(for configuration: Configuration) -> String {
        var sources = ["'self'"]
        func add(_ source: String) { if !sources.contains(source) { sources.append(source) } }
        for client in configuration.clients {
            for uri in client.redirectURIs + client.postLogoutRedirectURIs {
                guard let components = URLComponents(string: uri),
                    let scheme = components.scheme?.lowercased()
                else { continue }
                guard scheme == "https" || scheme == "http" else {
                    // A scheme source; only characters CSP allows in a scheme.
                    if scheme.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "+" || $0 == "-" }
                    ) {
                        add(scheme + ":")
                    }
                    continue
                }
                guard let host = components.host, !host.isEmpty,
                    host.allSatisfy({
                        $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == ":" || $0 == "["
                            || $0 == "]"
                    })
                else { continue }
                let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
                if client.applicationType == .native && scheme == "http" {
                    add("http://\(hostPart):*")
                } else {
                    add(components.port.map { "\(scheme)://\(hostPart):\($0)" } ?? "\(scheme)://\(hostPart)")
                }
            }
        }
        // Linking an upstream identity from /account is a form post answered by a redirect to
        // the provider's authorization endpoint (Apple's, or on the issuer's origin).
        for provider in configuration.upstreamProviders {
            let endpoint = provider.apple?.endpoints.authorize ?? provider.issuer
            guard let components = URLComponents(string: endpoint),
                components.scheme?.lowercased() == "https",
                let host = components.host, !host.isEmpty,
                host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" })
            else { continue }
            add(components.port.map { "https://\(host):\($0)" } ?? "https://\(host)")
        }
        return sources.joined(separator: " ")
    }
}
