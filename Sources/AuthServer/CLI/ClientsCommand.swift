import Foundation
import OIDC

/// `auth-server clients hash-secret` and `auth-server clients check --config FILE`.
enum ClientsCommand {
    static let usage = """
        Usage:
          auth-server clients hash-secret [--generate]
              Reads a client secret from standard input (one line), or generates a 256-bit one
              with --generate or when the input is empty, and prints the secret and the
              client_secret_hash to put in the config. Secrets must have at least 32 characters:
              the hash is a fast keyed hash, which is only safe for high-entropy secrets.
          auth-server clients check --config FILE
              Lists each client (type, authentication, redirect URIs, app associations) with
              the configuration's problems; exits 1 when there are errors.
          auth-server clients reload --config FILE
              Validates FILE; when it has errors, prints each with its JSON path and exits 1
              without touching the running server. Otherwise sends SIGHUP to the server whose
              process id is in the pid file (pid_file, default <data_dir>/auth-server.pid): it
              re-reads FILE and swaps its clients at once (other settings need a restart).
        """

    static let minimumSecretLength = 32

    static func run(
        _ args: [String], output: TextOutput, input: () -> String? = { readLine(strippingNewline: true) }
    )
        -> Int32
    {
        guard let subcommand = args.first, subcommand != "--help", subcommand != "-h" else {
            if args.first == "--help" || args.first == "-h" {
                output.print(usage)
                return 0
            }
            output.error(usage)
            return 2
        }
        let rest = Array(args.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            output.print(usage)
            return 0
        }
        switch subcommand {
        case "hash-secret":
            return hashSecret(rest, output: output, input: input)
        case "check":
            return CommandLineTool.withConfigOption(rest, command: "clients check", output: output) { path in
                check(path: path, output: output)
            }
        case "reload":
            return CommandLineTool.withConfigOption(rest, command: "clients reload", output: output) { path in
                reload(path: path, output: output)
            }
        default:
            output.error("auth-server clients: unknown subcommand \"\(subcommand)\"\n\(usage)")
            return 2
        }
    }

    static func hashSecret(_ args: [String], output: TextOutput, input: () -> String?) -> Int32 {
        guard args.allSatisfy({ $0 == "--generate" }) else {
            output.error("Usage: auth-server clients hash-secret [--generate]")
            return 2
        }
        var secret = args.contains("--generate") ? "" : (input() ?? "")
        secret = secret.trimmingCharacters(in: .whitespacesAndNewlines)
        if secret.isEmpty {
            secret = ClientSecret.generate()
        } else if secret.count < minimumSecretLength {
            output.error(
                "auth-server clients hash-secret: the secret has \(secret.count) characters; use at least "
                    + "\(minimumSecretLength) random characters, or --generate")
            return 1
        }
        output.print("client_secret: \(secret)")
        output.print("client_secret_hash: \(ClientSecret.hash(secret))")
        return 0
    }

    static func reload(path: String, output: TextOutput) -> Int32 {
        let result = ConfigurationLoader.check(path: path, environment: ProcessInfo.processInfo.environment)
        guard let configuration = result.configuration else {
            let errors = result.problems.filter { $0.severity == .error }
            for problem in errors { output.print(problem.description) }
            output.error("\(path): \(errors.count) error(s); the running server was not changed")
            return 1
        }
        let pidFile = configuration.resolvedPIDFile
        guard let pid = PIDFile.read(pidFile), pid > 0 else {
            output.error(
                "auth-server clients reload: no running server found: cannot read a process id from \(pidFile) "
                    + "(is auth-server serve running with this configuration?)")
            return 1
        }
        guard kill(pid, 0) == 0 || errno == EPERM else {
            output.error(
                "auth-server clients reload: no running server found: process \(pid) named in \(pidFile) is not running")
            return 1
        }
        guard kill(pid, SIGHUP) == 0 else {
            output.error(
                "auth-server clients reload: cannot signal process \(pid): \(String(cString: strerror(errno)))")
            return 1
        }
        output.print(
            "\(path) is valid (\(configuration.clients.count) client(s)); sent SIGHUP to the server (pid \(pid)), "
                + "which now reloads its clients; its log reports the result")
        return 0
    }

    static func check(path: String, output: TextOutput) -> Int32 {
        let result = ConfigurationLoader.check(path: path, environment: [:])
        if let configuration = result.configuration {
            let host = URLComponents(string: configuration.issuer)?.host ?? ""
            for client in configuration.clients {
                output.print(
                    "\(client.clientID): \(client.applicationType.rawValue), \(client.tokenEndpointAuthMethod.rawValue)"
                        + (client.isPublic ? " (public)" : " (confidential)")
                        + (client.firstParty ? ", first party" : ""))
                for uri in client.redirectURIs { output.print("  redirect_uri \(uri)") }
                let claimed = NativeAppAssociation.claimedPaths(client, issuerHost: host)
                if !client.appleAppIDs.isEmpty {
                    output.print(
                        "  apple apps \(client.appleAppIDs.joined(separator: ", ")); universal link paths: \(claimed.isEmpty ? "none" : claimed.joined(separator: ", "))"
                    )
                }
                for app in client.androidApps {
                    output.print(
                        "  android app \(app.packageName): \(app.sha256CertFingerprints.count) certificate(s)"
                    )
                }
                if let uri = client.backchannelLogoutURI { output.print("  backchannel_logout_uri \(uri)") }
            }
        }
        for problem in result.problems { output.print(problem.description) }
        let errors = result.problems.filter { $0.severity == .error }.count
        if errors > 0 {
            output.error("\(path): \(errors) error(s)")
            return 1
        }
        return 0
    }
}
