import Foundation
import HTTPServer
import OIDC

/// Turns a configuration file into a `Configuration`, or into the full list of its problems.
enum ConfigurationLoader {
    /// Environment variables that override the file, for containers and CI.
    static let databaseURLVariable = "AUTH_SERVER_DATABASE_URL"
    static let listenVariable = "AUTH_SERVER_LISTEN"
    static let keyEncryptionKeyVariable = "AUTH_SERVER_KEY_ENCRYPTION_KEY"

    struct Result: Sendable {
        var configuration: Configuration?
        var problems: [ConfigurationProblem]
    }

    /// Loads and validates `path`; throws with every error found. Warnings are returned.
    static func load(path: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ConfigurationError) -> (Configuration, warnings: [ConfigurationProblem])
    {
        let result = check(path: path, environment: environment)
        guard let configuration = result.configuration else {
            throw ConfigurationError(problems: result.problems.filter { $0.severity == .error })
        }
        return (configuration, result.problems.filter { $0.severity == .warning })
    }

    static func check(path: String, environment: [String: String] = [:]) -> Result {
        guard let data = FileManager.default.contents(atPath: path) else {
            return Result(problems: [ConfigurationProblem(path: "$", message: "cannot read file \(path)")])
        }
        return check(data: data, environment: environment)
    }

    static func check(data: Data, environment: [String: String] = [:]) -> Result {
        let document: JSONValue
        do {
            document = try JSONValue.parse(data)
        } catch {
            return Result(problems: [ConfigurationProblem(path: "$", message: "is not valid JSON")])
        }
        let sink = ProblemSink()
        let configuration = readConfiguration(document, environment: environment, sink: sink)
        return Result(configuration: sink.errors.isEmpty ? configuration : nil, problems: sink.problems)
    }

    // MARK: - Top level

    private static func readConfiguration(
        _ document: JSONValue, environment: [String: String], sink: ProblemSink
    ) -> Configuration? {
        guard let root = ObjectReader(document, path: "$", sink: sink) else { return nil }

        let issuer = root.string("issuer", required: true).flatMap { issuer -> String? in
            if let problem = issuerProblem(issuer) {
                root.error("issuer", problem)
                return nil
            }
            return issuer
        }

        let listen = readListen(root, environment: environment, sink: sink)
        let databaseURL = readDatabaseURL(root, environment: environment)
        let dataDirectory = root.string("data_dir") ?? "var"
        let publicDirectory = root.string("public_dir") ?? "public"

        let tls = readTLS(root)
        let http = readHTTP(root, sink: sink)
        let database = readDatabase(root, sink: sink)
        let keyEncryptionKeyFile = root.string("key_encryption_key_file")
        let signingKeys = readSigningKeys(root, sink: sink)
        let sessions = readSessions(root, sink: sink)
        let webAuthn = readWebAuthn(root, issuer: issuer, sink: sink)
        let passkeys = readPasskeys(root, sink: sink)
        let signInThrottle = readSignInThrottle(root, sink: sink)
        let oauth = readOAuth(root, sink: sink)
        let pidFile = root.string("pid_file")
        let maintenance = readMaintenance(root, sink: sink)
        let audit = readAudit(root, sink: sink)
        let metrics = readMetrics(root, sink: sink)
        let mail = MailConfigurationReader.readMail(root, environment: environment, sink: sink)
        let emailVerification = MailConfigurationReader.readEmailVerification(root, sink: sink)
        let signUp = SignUpConfigurationReader.read(root, sink: sink)

        let clients = readClients(root, sink: sink)
        let resources = ResourcesConfigurationReader.read(root, clients: clients, sink: sink)
        let upstreamProviders = UpstreamProvidersReader.read(root, sink: sink)
        let recovery = RecoverySettingsReader.recovery(root, sink: sink)
        let passwordless = RecoverySettingsReader.passwordless(root, sink: sink)
        root.reportUnknownMembers()
        guard let issuer else { return nil }
        NativeAppAssociation.warnings(clients: clients, issuer: issuer) { path, message in
            sink.warning(path, message)
        }
        var configuration = Configuration(
            issuer: issuer, listen: listen, databaseURL: databaseURL, dataDirectory: dataDirectory,
            publicDirectory: publicDirectory, tls: tls, http: http, database: database,
            keyEncryptionKeyFile: keyEncryptionKeyFile, signingKeys: signingKeys, clients: clients,
            sessions: sessions,
            webAuthn: webAuthn, signInThrottle: signInThrottle, oauth: oauth, mail: mail,
            emailVerification: emailVerification, pidFile: pidFile, maintenance: maintenance, audit: audit)
        configuration.recovery = recovery
        configuration.resources = resources
        configuration.upstreamProviders = upstreamProviders
        configuration.signUp = signUp
        configuration.passkeys = passkeys
        configuration.metrics = metrics
        configuration.passwordless = passwordless
        return configuration
    }

    /// What stops `serve` in a configuration that is otherwise valid. The development mailbox
    /// shows every mailed verification and recovery code at `/dev/mail`, so it is allowed
    /// only on a server that nothing but this machine can reach: a loopback issuer and a
    /// loopback `listen` address.
    static func serveProblems(_ configuration: Configuration) -> [ConfigurationProblem] {
        guard configuration.mail.transport == .development else { return [] }
        var reasons: [String] = []
        if !Loopback.isLoopbackURL(configuration.issuer) {
            reasons.append("issuer \(configuration.issuer) is not a loopback URL")
        }
        if !Loopback.isLoopbackHost(configuration.listen.host) {
            reasons.append("listen \(configuration.listen) is not a loopback address")
        }
        guard !reasons.isEmpty else { return [] }
        return [
            ConfigurationProblem(
                path: "$.mail",
                message:
                    "the development mailbox (the default without a mail block) shows every mailed code at "
                    + "/dev/mail, so it is allowed only when issuer and listen are loopback, but "
                    + reasons.joined(separator: " and ") + ": configure mail.transport \"smtp\"")
        ]
    }

    /// OpenID Connect Discovery §3: an https URL without query or fragment; http is tolerated
    /// for localhost so that the server can be tried without certificates.
    static func issuerProblem(_ issuer: String) -> String? {
        guard let components = URLComponents(string: issuer), let scheme = components.scheme,
            let host = components.host, !host.isEmpty
        else { return "must be an absolute URL like https://id.example.com" }
        guard components.query == nil, components.fragment == nil else {
            return "must not contain a query or fragment"
        }
        guard !issuer.hasSuffix("/") else { return "must not end with a slash" }
        switch scheme {
        case "https": return nil
        case "http" where ["localhost", "127.0.0.1", "::1", "[::1]"].contains(host.lowercased()): return nil
        default: return "must use https (http only for localhost)"
        }
    }

    static func parseListen(_ text: String) -> Configuration.ListenAddress? {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":")
            else {
                return nil
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2 else { return nil }
            host = parts[0]
            portText = parts[1]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65_535).contains(port) else { return nil }
        return Configuration.ListenAddress(host: String(host), port: port)
    }
}
