import Foundation
import OIDC
import Synchronization

/// The configured clients as the running server sees them, replaced as a whole when `serve`
/// re-reads its configuration file (SIGHUP). Every reader takes one snapshot per use, so a
/// request never mixes clients from two versions of the file.
final class ReloadableClients: Sendable {
    /// A class, so that taking a snapshot under the lock copies one reference, not the
    /// registry and configuration it holds.
    final class Snapshot: Sendable {
        let registry: ClientRegistry
        /// The configured APIs, reloaded with the clients they name.
        let resources: ResourceCatalog
        /// The CSP `form-action` sources for these clients' redirect URIs.
        let formActionSources: String
        /// The configuration the clients came from (for the app association files).
        let configuration: Configuration
        /// Origins accepted in passkey ceremonies, including these clients' Android apps.
        let webAuthnOrigins: Set<String>

        init(registry: ClientRegistry, formActionSources: String, configuration: Configuration) {
            self.registry = registry
            self.resources = ResourceCatalog(configuration.resources, issuer: configuration.issuer)
            self.formActionSources = formActionSources
            self.configuration = configuration
            self.webAuthnOrigins = configuration.allowedWebAuthnOrigins
        }
    }

    private let state: Mutex<Snapshot>

    init(_ configuration: Configuration) {
        state = Mutex(Self.snapshot(configuration))
    }

    var current: Snapshot { state.withLock { $0 } }

    /// Takes the clients and APIs of `configuration`; everything else in it is ignored.
    func replace(clientsOf configuration: Configuration) {
        var updated = current.configuration
        updated.clients = configuration.clients
        updated.resources = configuration.resources
        let snapshot = Self.snapshot(updated)
        state.withLock { $0 = snapshot }
    }

    private static func snapshot(_ configuration: Configuration) -> Snapshot {
        Snapshot(
            registry: ClientRegistry(configuration.clients),
            formActionSources: FormActionSources.sources(for: configuration), configuration: configuration)
    }
}
