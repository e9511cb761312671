import Foundation

/// What `serve` does on SIGHUP: re-reads its configuration file and, when it is valid, swaps
/// the clients in one step. Every other setting needs a restart; a change to one is logged so
/// that the operator knows the running server still uses the old value.
enum ConfigurationReload {
    enum Outcome: Sendable, Equatable {
        case reloaded(clients: Int, needRestart: [String])
        case refused([ConfigurationProblem])
    }

    static func reload(
        path: String, running: Configuration, clients: ReloadableClients, pool: any SQLExecutor, log: Log,
        signingKeys: SigningKeyRing? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Outcome {
        let result = ConfigurationLoader.check(path: path, environment: environment)
        guard let configuration = result.configuration else {
            let errors = result.problems.filter { $0.severity == .error }
            for problem in errors {
                log.error(
                    "config.reload", ["step": "validate", "path": problem.path, "problem": problem.message])
            }
            log.error(
                "config.reload",
                ["step": "refused", "errors": String(errors.count), "reason": "keptPreviousConfiguration"])
            return .refused(errors)
        }
        for problem in result.problems where problem.severity == .warning {
            log.warning(
                "config.reload", ["step": "validate", "path": problem.path, "problem": problem.message])
        }
        // A client may name an ID token algorithm that has no key yet: create it before the
        // client can ask for a token, or keep the previous clients.
        if let signingKeys {
            do {
                let created = try signingKeys.ensureSigningKeys(
                    for: SigningKeyRing.algorithms(for: configuration.clients))
                if !created.isEmpty {
                    log.info(
                        "config.reload", ["step": "signingKeys", "created": created.joined(separator: ",")])
                }
            } catch {
                let problem = ConfigurationProblem(
                    path: "clients", message: "cannot create the signing keys the clients need: \(error)")
                log.error(
                    "config.reload",
                    [
                        "step": "signingKeys", "reason": ServeCommand.describe(error),
                        "result": "keptPreviousConfiguration",
                    ])
                return .refused([problem])
            }
        }
        clients.replace(clientsOf: configuration)
        let needRestart = changedSettings(running, configuration)
        for key in needRestart {
            log.warning("config.reload", ["step": "compare", "setting": key, "reason": "needsRestart"])
        }
        do {
            try AuditLog.record(
                AuditEvent(
                    kind: .clientsReloaded, actor: .admin,
                    detail: ["clients": String(configuration.clients.count)]), on: pool)
        } catch {
            log.error("audit.record", ["event": "clients.reloaded", "reason": ServeCommand.describe(error)])
        }
        log.info("config.reload", ["step": "done", "clients": String(configuration.clients.count)])
        return .reloaded(clients: configuration.clients.count, needRestart: needRestart)
    }

    /// The top-level keys, other than `clients`, whose values differ.
    static func changedSettings(_ old: Configuration, _ new: Configuration) -> [String] {
        var changed: [String] = []
        func compare<T: Equatable>(_ key: String, _ value: (Configuration) -> T) {
            if value(old) != value(new) { changed.append(key) }
        }
        compare("issuer") { $0.issuer }
        compare("listen") { $0.listen }
        compare("database_url") { $0.databaseURL }
        compare("data_dir") { $0.dataDirectory }
        compare("public_dir") { $0.publicDirectory }
        compare("tls_cert_file") { $0.tls }
        compare("http") { $0.http }
        compare("database") { $0.database }
        compare("key_encryption_key_file") { $0.keyEncryptionKeyFile }
        compare("signing_keys") { $0.signingKeys }
        compare("sessions") { $0.sessions }
        compare("webauthn") { $0.webAuthn }
        compare("passkeys") { $0.passkeys }
        compare("sign_in_throttle") { $0.signInThrottle }
        compare("oauth") { $0.oauth }
        compare("pid_file") { $0.pidFile }
        compare("maintenance") { $0.maintenance }
        compare("audit") { $0.audit }
        compare("metrics") { $0.metrics }
        // Anything added to Configuration later is still caught, without a key name.
        var oldRest = old
        var newRest = new
        oldRest.clients = []
        newRest.clients = []
        oldRest.resources = []
        newRest.resources = []
        if changed.isEmpty && oldRest != newRest { changed.append("other settings") }
        return changed
    }
}
