import Foundation
import HTTPServer
import OIDC

/// One reader per section of the configuration file (`http`, `sessions`, `webauthn`, …): each
/// starts from the section's defaults, reads and checks its members, and reports unknown ones.
extension ConfigurationLoader {
    /// `listen`, which `AUTH_SERVER_LISTEN` overrides.
    static func readListen(_ root: ObjectReader, environment: [String: String], sink: ProblemSink)
        -> Configuration.ListenAddress
    {
        var listen = Configuration.ListenAddress(host: "127.0.0.1", port: 8080)
        if let text = environment[listenVariable] {
            if let parsed = parseListen(text) {
                listen = parsed
            } else {
                sink.error("$ENV.\(listenVariable)", "must be host:port, like 127.0.0.1:8080")
            }
            _ = root.value("listen")
        } else if let text = root.string("listen") {
            if let parsed = parseListen(text) {
                listen = parsed
            } else {
                root.error("listen", "must be host:port, like 127.0.0.1:8080 or [::1]:8080")
            }
        }
        return listen
    }

    /// `database_url`, which `AUTH_SERVER_DATABASE_URL` overrides.
    static func readDatabaseURL(_ root: ObjectReader, environment: [String: String]) -> String? {
        var databaseURL = root.string("database_url")
        if let fromEnvironment = environment[databaseURLVariable], !fromEnvironment.isEmpty {
            databaseURL = fromEnvironment
        }
        if let url = databaseURL, !(url.hasPrefix("postgres://") || url.hasPrefix("postgresql://")) {
            root.error("database_url", "must be a postgresql:// URL")
        }
        return databaseURL
    }

    /// `tls_cert_file` and `tls_key_file`: both or neither, each readable.
    static func readTLS(_ root: ObjectReader) -> Configuration.TLSFiles? {
        var tls: Configuration.TLSFiles?
        let certificate = root.string("tls_cert_file")
        let key = root.string("tls_key_file")
        switch (certificate, key) {
        case (let certificate?, let key?):
            for (member, path) in [("tls_cert_file", certificate), ("tls_key_file", key)]
            where !FileManager.default.isReadableFile(atPath: path) {
                root.error(member, "cannot read \(path)")
            }
            tls = Configuration.TLSFiles(certificateFile: certificate, privateKeyFile: key)
        case (nil, nil): break
        case (nil, _): root.error("tls_cert_file", "is required when tls_key_file is set")
        case (_, nil): root.error("tls_key_file", "is required when tls_cert_file is set")
        }
        return tls
    }

    /// `clients`: required, an array of client objects with distinct ids.
    static func readClients(_ root: ObjectReader, sink: ProblemSink) -> [ClientMetadata] {
        var clients: [ClientMetadata] = []
        if let value = root.value("clients") {
            if case .array(let items) = value {
                var seen: Set<String> = []
                for (index, item) in items.enumerated() {
                    let path = "$.clients[\(index)]"
                    guard let client = ClientMetadataReader.read(item, path: path, sink: sink) else {
                        continue
                    }
                    if !seen.insert(client.clientID).inserted {
                        sink.error(
                            "\(path).client_id", "duplicates an earlier client_id \"\(client.clientID)\"")
                    }
                    clients.append(client)
                }
            } else {
                root.error("clients", "must be an array of client objects, found \(value.typeName)")
            }
        } else {
            root.error("clients", "is required (an empty array is allowed)")
        }
        return clients
    }

    /// Reads the optional object member `key` of `root` with `read`, then reports the members
    /// it did not know. A missing member leaves the section's defaults.
    static func section(
        _ key: String, of root: ObjectReader, sink: ProblemSink, _ read: (ObjectReader) -> Void
    ) {
        guard let value = root.value(key),
            let reader = ObjectReader(value, path: root.memberPath(key), sink: sink)
        else { return }
        read(reader)
        reader.reportUnknownMembers()
    }

    static func readHTTP(_ root: ObjectReader, sink: ProblemSink) -> Configuration.HTTPLimits {
        var http = Configuration.HTTPLimits()
        section("http", of: root, sink: sink) { reader in
            http.maxBodyBytes = reader.integer("max_body_bytes", in: 1_024...(64 << 20)) ?? http.maxBodyBytes
            http.maxConnections = reader.integer("max_connections", in: 1...100_000) ?? http.maxConnections
            http.maxConnectionsPerAddress =
                reader.integer("max_connections_per_address", in: 1...100_000)
                ?? http.maxConnectionsPerAddress
            http.keepAliveTimeoutSeconds =
                reader.integer("keep_alive_timeout_seconds", in: 1...300) ?? http.keepAliveTimeoutSeconds
            http.workerThreads = reader.integer("worker_threads", in: 0...1_024) ?? http.workerThreads
            if let proxies = addressList("trusted_proxies", in: reader, example: "127.0.0.1", sink: sink) {
                http.trustedProxies = proxies
            }
        }
        return http
    }

    static func readDatabase(_ root: ObjectReader, sink: ProblemSink)
        -> Configuration.DatabaseSettings
    {
        var database = Configuration.DatabaseSettings()
        section("database", of: root, sink: sink) { reader in
            database.maxConnections =
                reader.integer("max_connections", in: 1...1_000) ?? database.maxConnections
            database.statementTimeoutMilliseconds =
                reader.integer("statement_timeout_ms", in: 100...600_000)
                ?? database.statementTimeoutMilliseconds
        }
        return database
    }

    static func readSigningKeys(_ root: ObjectReader, sink: ProblemSink)
        -> Configuration.SigningKeySettings
    {
        var signingKeys = Configuration.SigningKeySettings()
        section("signing_keys", of: root, sink: sink) { reader in
            // At least ten minutes: longer than the JWKS cache lifetime plus the key refresh interval.
            signingKeys.prePublicationSeconds =
                reader.integer("pre_publication_seconds", in: 600...(30 * 86_400))
                ?? signingKeys.prePublicationSeconds
            signingKeys.retentionSeconds =
                reader.integer("retention_seconds", in: 3_600...(365 * 86_400))
                ?? signingKeys.retentionSeconds
        }
        return signingKeys
    }

    static func readSessions(_ root: ObjectReader, sink: ProblemSink) -> Configuration.SessionSettings {
        var sessions = Configuration.SessionSettings()
        section("sessions", of: root, sink: sink) { reader in
            sessions.lifetimeSeconds =
                reader.integer("lifetime_seconds", in: 300...(400 * 86_400)) ?? sessions.lifetimeSeconds
            sessions.idleTimeoutSeconds =
                reader.integer("idle_timeout_seconds", in: 60...(400 * 86_400)) ?? sessions.idleTimeoutSeconds
            sessions.reauthenticationSeconds =
                reader.integer("reauthentication_seconds", in: 30...86_400)
                ?? sessions.reauthenticationSeconds
        }
        return sessions
    }

    static func readWebAuthn(_ root: ObjectReader, issuer: String?, sink: ProblemSink)
        -> Configuration.WebAuthnSettings
    {
        var webAuthn = Configuration.WebAuthnSettings()
        section("webauthn", of: root, sink: sink) { reader in
            webAuthn.rpID = reader.string("rp_id")
            webAuthn.rpName = reader.string("rp_name")
            if let origins = reader.value("additional_origins") {
                if case .array(let items) = origins {
                    for (index, item) in items.enumerated() {
                        if case .string(let origin) = item,
                            origin.hasPrefix("https://") || origin.hasPrefix("android:apk-key-hash:")
                        {
                            webAuthn.additionalOrigins.append(origin)
                        } else {
                            sink.error(
                                "\(reader.memberPath("additional_origins"))[\(index)]",
                                "must be an https origin or android:apk-key-hash:…")
                        }
                    }
                } else {
                    reader.error("additional_origins", "must be an array of origins")
                }
            }
            if let origins = reader.value("related_origins") {
                if case .array(let items) = origins {
                    for (index, item) in items.enumerated() {
                        if case .string(let origin) = item, origin.hasPrefix("https://"),
                            let components = URLComponents(string: origin), components.host != nil,
                            components.path.isEmpty, components.query == nil, components.fragment == nil
                        {
                            webAuthn.relatedOrigins.append(origin)
                        } else {
                            sink.error(
                                "\(reader.memberPath("related_origins"))[\(index)]",
                                "must be an https origin (scheme and host, no path)")
                        }
                    }
                } else {
                    reader.error("related_origins", "must be an array of origins")
                }
            }
            webAuthn.challengeLifetimeSeconds =
                reader.integer("challenge_lifetime_seconds", in: 30...3_600)
                ?? webAuthn.challengeLifetimeSeconds
            webAuthn.upgradeChallengeLifetimeSeconds =
                reader.integer("upgrade_challenge_lifetime_seconds", in: 10...600)
                ?? webAuthn.upgradeChallengeLifetimeSeconds
            if let rpID = webAuthn.rpID, let issuer,
                let host = URLComponents(string: issuer)?.host?.lowercased()
            {
                if !(host == rpID.lowercased() || host.hasSuffix("." + rpID.lowercased())) {
                    reader.error("rp_id", "must be the issuer's host or a parent domain of it")
                }
            }
        }
        return webAuthn
    }

    static func readPasskeys(_ root: ObjectReader, sink: ProblemSink) -> Configuration.PasskeySettings {
        var passkeys = Configuration.PasskeySettings()
        section("passkeys", of: root, sink: sink) { reader in
            if let text = reader.string("on_counter_regression") {
                if let policy = Configuration.CounterRegressionPolicy(rawValue: text) {
                    passkeys.onCounterRegression = policy
                } else {
                    reader.error("on_counter_regression", "must be \"warn\" or \"refuse\", found \"\(text)\"")
                }
            }
        }
        return passkeys
    }

    static func readSignInThrottle(_ root: ObjectReader, sink: ProblemSink)
        -> Configuration.SignInThrottleSettings
    {
        var signInThrottle = Configuration.SignInThrottleSettings()
        section("sign_in_throttle", of: root, sink: sink) { reader in
            signInThrottle.accountMaxFailures =
                reader.integer("account_max_failures", in: 1...1_000) ?? signInThrottle.accountMaxFailures
            signInThrottle.addressMaxFailures =
                reader.integer("address_max_failures", in: 1...100_000) ?? signInThrottle.addressMaxFailures
            signInThrottle.windowSeconds =
                reader.integer("window_seconds", in: 10...86_400) ?? signInThrottle.windowSeconds
            signInThrottle.lockoutSeconds =
                reader.integer("lockout_seconds", in: 1...3_600) ?? signInThrottle.lockoutSeconds
            signInThrottle.maxLockoutSeconds =
                reader.integer("max_lockout_seconds", in: 1...86_400) ?? signInThrottle.maxLockoutSeconds
            signInThrottle.lockoutDecaySeconds =
                reader.integer("lockout_decay_seconds", in: 60...86_400) ?? signInThrottle.lockoutDecaySeconds
            if signInThrottle.maxLockoutSeconds < signInThrottle.lockoutSeconds {
                reader.error("max_lockout_seconds", "must be at least lockout_seconds")
            }
        }
        return signInThrottle
    }

    static func readOAuth(_ root: ObjectReader, sink: ProblemSink) -> Configuration.OAuthSettings {
        var oauth = Configuration.OAuthSettings()
        section("oauth", of: root, sink: sink) { reader in
            oauth.authorizationCodeLifetimeSeconds =
                reader.integer("authorization_code_lifetime_seconds", in: 5...600)
                ?? oauth.authorizationCodeLifetimeSeconds
            oauth.accessTokenLifetimeSeconds =
                reader.integer("access_token_lifetime_seconds", in: 30...86_400)
                ?? oauth.accessTokenLifetimeSeconds
            oauth.idTokenLifetimeSeconds =
                reader.integer("id_token_lifetime_seconds", in: 30...86_400) ?? oauth.idTokenLifetimeSeconds
            oauth.refreshTokenIdleSeconds =
                reader.integer("refresh_token_idle_seconds", in: 60...(400 * 86_400))
                ?? oauth.refreshTokenIdleSeconds
            oauth.refreshTokenAbsoluteSeconds =
                reader.integer("refresh_token_absolute_seconds", in: 60...(800 * 86_400))
                ?? oauth.refreshTokenAbsoluteSeconds
            oauth.backchannelRetryBaseSeconds =
                reader.integer("backchannel_retry_base_seconds", in: 1...3_600)
                ?? oauth.backchannelRetryBaseSeconds
            oauth.backchannelMaxAttempts =
                reader.integer("backchannel_max_attempts", in: 1...50) ?? oauth.backchannelMaxAttempts
            oauth.pushedRequestLifetimeSeconds =
                reader.integer("pushed_request_lifetime_seconds", in: 1...600)
                ?? oauth.pushedRequestLifetimeSeconds
            oauth.requirePushedAuthorizationRequests =
                reader.bool("require_pushed_authorization_requests")
                ?? oauth.requirePushedAuthorizationRequests
            oauth.jwksURIAllowLoopbackForTests =
                reader.bool("jwks_uri_allow_loopback_for_tests") ?? oauth.jwksURIAllowLoopbackForTests
            if let caFile = reader.string("jwks_uri_ca_file") {
                if FileManager.default.isReadableFile(atPath: caFile) {
                    oauth.jwksURICAFile = caFile
                } else {
                    reader.error("jwks_uri_ca_file", "cannot read \(caFile)")
                }
            }
            oauth.dpopRequiredForPublicClients =
                reader.bool("dpop_required_for_public_clients") ?? oauth.dpopRequiredForPublicClients
            oauth.dpopNonceRequired = reader.bool("dpop_nonce_required") ?? oauth.dpopNonceRequired
        }
        return oauth
    }

    static func readMaintenance(_ root: ObjectReader, sink: ProblemSink)
        -> Configuration.MaintenanceSettings
    {
        var maintenance = Configuration.MaintenanceSettings()
        section("maintenance", of: root, sink: sink) { reader in
            maintenance.intervalSeconds =
                reader.integer("interval_seconds", in: 10...86_400) ?? maintenance.intervalSeconds
            maintenance.dutyCyclePercent =
                reader.integer("duty_cycle_percent", in: 1...100) ?? maintenance.dutyCyclePercent
        }
        return maintenance
    }

    static func readAudit(_ root: ObjectReader, sink: ProblemSink) -> Configuration.AuditSettings {
        var audit = Configuration.AuditSettings()
        section("audit", of: root, sink: sink) { reader in
            audit.retentionDays = reader.integer("retention_days", in: 1...3_650) ?? audit.retentionDays
        }
        return audit
    }

    static func readMetrics(_ root: ObjectReader, sink: ProblemSink) -> Configuration.MetricsSettings {
        var metrics = Configuration.MetricsSettings()
        section("metrics", of: root, sink: sink) { reader in
            if let addresses = addressList("allowed_addresses", in: reader, example: "10.0.0.5", sink: sink) {
                metrics.allowedAddresses = addresses
            }
        }
        return metrics
    }

    /// A list of IP addresses or CIDR blocks (trusted proxies, metrics readers); every other
    /// entry is an error naming its index.
    static func addressList(
        _ key: String, in reader: ObjectReader, example: String, sink: ProblemSink
    )
        -> [String]?
    {
        guard let entries = reader.strings(key) else { return nil }
        for (index, entry) in entries.enumerated() where AddressRange(entry) == nil {
            sink.error(
                "\(reader.memberPath(key))[\(index)]",
                "must be an IP address or a CIDR block, like \(example) or 10.0.0.0/8")
        }
        return entries
    }
}
