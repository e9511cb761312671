import Foundation
import HTTPServer
import Postgres

/// `auth-server serve --config FILE`: runs until SIGTERM or SIGINT, then finishes in-flight
/// requests, closes the pool and stops the embedded database. SIGHUP re-reads the file and
/// swaps the clients (see `ConfigurationReload`); the pid file lets `clients reload` find it.
enum ServeCommand {
    static func run(configPath: String, output: TextOutput) -> Int32 {
        let log = Log()
        let configuration: Configuration
        do {
            let (loaded, warnings) = try ConfigurationLoader.load(path: configPath)
            for warning in warnings { output.error(warning.description) }
            let refusals = ConfigurationLoader.serveProblems(loaded)
            guard refusals.isEmpty else {
                output.error(
                    "\(configPath): the configuration has errors:\n"
                        + refusals.map(\.description).joined(separator: "\n"))
                return 1
            }
            configuration = loaded
        } catch {
            output.error("\(configPath): the configuration has errors:\n\(error.description)")
            return 1
        }

        SystemdNotify.claimSocket()
        let database: Database
        do {
            database = try Database.open(configuration, log: log, shareRunningEmbedded: false)
        } catch {
            output.error("auth-server: cannot open the database: \(describe(error))")
            return 1
        }
        defer { database.close() }
        let signingKeys: SigningKeyRing
        do {
            signingKeys = try database.signingKeys(
                configuration, environment: ProcessInfo.processInfo.environment)
        } catch {
            output.error("auth-server: signing keys: \(describe(error))")
            return 1
        }

        let clients = ReloadableClients(configuration)
        var application = Application(
            configuration: configuration, pool: database.pool, signingKeys: signingKeys, metrics: Metrics(),
            log: log)
        application.clients = clients
        let mailQueue: MailDeliveryQueue?
        do {
            let clientName = URLComponents(string: configuration.issuer)?.host ?? "localhost"
            (application.mailTransport, mailQueue) = try configuration.mail.makeTransport(
                clientName: clientName, log: log)
        } catch {
            output.error("auth-server: mail transport: \(error)")
            return 1
        }
        mailQueue?.start()
        defer { mailQueue?.stop() }
        let app = application
        let server = HTTPServer(
            configuration: serverConfiguration(configuration),
            responder: app.makeRouter(),
            log: { line in log.raw(line) },
            onResponse: { request, context, status, duration in
                app.observe(request, context, status, duration)
            })
        do {
            try server.start()
        } catch {
            output.error("auth-server: cannot listen on \(configuration.listen): \(error)")
            return 1
        }
        let backchannelLogout = app.makeBackchannelLogoutWorker()
        backchannelLogout.start()
        defer { backchannelLogout.stop() }
        let upstreamRevocations = app.makeUpstreamRevocationWorker()
        upstreamRevocations.start()
        defer { upstreamRevocations.stop() }
        let maintenance = MaintenanceWorker(pool: database.pool, configuration: configuration, log: log)
        maintenance.start()
        defer { maintenance.stop() }

        let pidFile = configuration.resolvedPIDFile
        do {
            try PIDFile.write(pidFile)
        } catch {
            log.error("server.pid_file", ["path": pidFile, "reason": "\(error)"])
        }
        defer { PIDFile.remove(pidFile) }
        signal(SIGHUP, SIG_IGN)
        let reload = DispatchSource.makeSignalSource(
            signal: SIGHUP, queue: DispatchQueue(label: "config-reload"))
        reload.setEventHandler { [pool = database.pool] in
            log.info("config.reload", ["step": "start", "file": configPath])
            SystemdNotify.reloading(log: log)
            defer { SystemdNotify.ready(log: log) }
            _ = ConfigurationReload.reload(
                path: configPath, running: configuration, clients: clients, pool: pool, log: log,
                signingKeys: signingKeys)
        }
        reload.resume()
        defer { reload.cancel() }
        // Listening, migrated, reloadable: tell systemd (Type=notify); STOPPING=1 once the
        // server has stopped taking requests, before the database closes.
        SystemdNotify.ready(log: log)
        defer { SystemdNotify.stopping(log: log) }
        server.stopOnSignals()
        let build = BuildInfo.current
        log.info(
            "server.started",
            [
                "listen": "\(configuration.listen.host):\(server.port)", "issuer": configuration.issuer,
                "version": build.version, "commit": build.commit, "swift": build.swift,
                "openssl": build.openSSL,
            ])
        server.waitUntilStopped()
        log.info("server.stopped")
        return 0
    }

    static func serverConfiguration(_ configuration: Configuration) -> HTTPServer.Configuration {
        var server = HTTPServer.Configuration()
        server.host = configuration.listen.host
        server.port = configuration.listen.port
        server.maxBodyBytes = configuration.http.maxBodyBytes
        server.maxConnections = configuration.http.maxConnections
        server.maxConnectionsPerAddress = configuration.http.maxConnectionsPerAddress
        // A reverse proxy carries many clients over its connections.
        server.connectionLimitExemptions = configuration.http.trustedProxies.compactMap(AddressRange.init)
        server.idleTimeout = .seconds(configuration.http.keepAliveTimeoutSeconds)
        if configuration.http.workerThreads > 0 { server.workerThreads = configuration.http.workerThreads }
        if let tls = configuration.tls {
            server.tls = .init(certificateFile: tls.certificateFile, privateKeyFile: tls.privateKeyFile)
        }
        return server
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? PostgresError { return "\(error.description) (\(error.detail))" }
        return String(describing: error)
    }
}
