import Foundation
import OIDC

/// What the issuer's host publishes so that iOS and Android trust the native clients' apps:
/// the Apple App Site Association file (shared web credentials, universal links for https
/// redirect URIs) and the Digital Asset Links statement list (Credential Manager sign-in,
/// app links).
enum NativeAppAssociation {
    /// `https` redirect URIs of `client` on the issuer's own host: only those can be claimed
    /// by an app through this server's association files.
    static func claimedPaths(_ client: ClientMetadata, issuerHost: String) -> [String] {
        client.redirectURIs.compactMap { uri in
            guard let components = URLComponents(string: uri), components.scheme?.lowercased() == "https",
                components.host?.lowercased() == issuerHost.lowercased()
            else { return nil }
            return components.path.isEmpty ? "/" : components.path
        }
    }

    /// `/.well-known/apple-app-site-association`.
    static func appleAppSiteAssociation(_ configuration: Configuration) -> [String: JSONValue] {
        let host = URLComponents(string: configuration.issuer)?.host ?? ""
        var apps: [String] = []
        var details: [JSONValue] = []
        for client in configuration.clients where !client.appleAppIDs.isEmpty {
            for id in client.appleAppIDs where !apps.contains(id) { apps.append(id) }
            let paths = claimedPaths(client, issuerHost: host)
            guard !paths.isEmpty else { continue }
            details.append(
                .object([
                    "appIDs": .array(client.appleAppIDs.map(JSONValue.string)),
                    "components": .array(paths.map { .object(["/": .string($0)]) }),
                ]))
        }
        return [
            "webcredentials": .object(["apps": .array(apps.map(JSONValue.string))]),
            "applinks": .object(["details": .array(details)]),
        ]
    }

    /// `/.well-known/assetlinks.json`: `get_login_creds` for every Android app, and
    /// `handle_all_urls` for apps whose client has an https redirect URI on this host.
    static func assetLinks(_ configuration: Configuration) -> [JSONValue] {
        let host = URLComponents(string: configuration.issuer)?.host ?? ""
        var statements: [JSONValue] = []
        for client in configuration.clients {
            let handlesURLs = !claimedPaths(client, issuerHost: host).isEmpty
            for app in client.androidApps {
                var relations = ["delegate_permission/common.get_login_creds"]
                if handlesURLs { relations.append("delegate_permission/common.handle_all_urls") }
                statements.append(
                    .object([
                        "relation": .array(relations.map(JSONValue.string)),
                        "target": .object([
                            "namespace": .string("android_app"), "package_name": .string(app.packageName),
                            "sha256_cert_fingerprints": .array(
                                app.sha256CertFingerprints.map(JSONValue.string)),
                        ]),
                    ]))
            }
        }
        return statements
    }

    /// `auth-server config check` warnings: a native client's https redirect URI on another
    /// host gets no association from this server (that host must publish one), and one on
    /// this host only works when the client names its apps.
    static func warnings(clients: [ClientMetadata], issuer: String, warn: (String, String) -> Void) {
        let host = URLComponents(string: issuer)?.host?.lowercased() ?? ""
        for (index, client) in clients.enumerated() where client.applicationType == .native {
            for (uriIndex, uri) in client.redirectURIs.enumerated() {
                guard let components = URLComponents(string: uri), components.scheme?.lowercased() == "https"
                else {
                    continue
                }
                let path = "$.clients[\(index)].redirect_uris[\(uriIndex)]"
                let uriHost = components.host?.lowercased() ?? ""
                if uriHost != host {
                    warn(
                        path,
                        "is on \(uriHost), which this server publishes no app association for: that host must serve "
                            + "apple-app-site-association / assetlinks.json naming the app, or the app cannot claim the callback"
                    )
                } else if client.appleAppIDs.isEmpty && client.androidApps.isEmpty {
                    warn(
                        path,
                        "is on the issuer's host but the client names no apple_app_ids or android_apps, so no app can claim it"
                    )
                }
            }
        }
    }
}
