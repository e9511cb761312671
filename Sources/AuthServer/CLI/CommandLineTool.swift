import Foundation

/// The `auth-server` command line: parses arguments and dispatches to a command.
/// Each command returns its exit code; nothing here calls `exit` except `main.swift`.
enum CommandLineTool {
    static let usage = """
        auth-server: an OAuth 2.0 / OpenID Connect provider with passkeys

        Usage:
          auth-server serve --config FILE        Run the server (embedded PostgreSQL when the
                                                 config has no database_url)
          auth-server migrate --config FILE      Apply database migrations and exit
          auth-server config check FILE          Validate a config file; prints every problem
                                                 with its JSON path, exits 1 when there are errors
          auth-server keys list --config FILE    Show the signing keys and their states
          auth-server keys rotate --config FILE [--algorithm ALG]
                                                 Add new signing keys (pre-published before use)
          auth-server users create --config FILE --email EMAIL --name NAME
                                                 Create an account; the password is read
                                                 from standard input
          auth-server users import --config FILE USERS.json
                                                 Import users with their PHC password hashes
                                                 (all or nothing)
          auth-server clients hash-secret [--generate]
                                                 Hash a client secret read from standard input
                                                 (or generate one) for client_secret_hash
          auth-server clients check --config FILE
                                                 List the clients and the config's problems
          auth-server report adoption --config FILE [--json]
                                                 Passkey adoption: accounts by state, sign-ins
                                                 by method, upgrades and recoveries
          auth-server clients reload --config FILE
                                                 Validate the config file, then make the running
                                                 server (pid file) reload its clients (SIGHUP)
          auth-server users list --config FILE [--email-contains TEXT] [--disabled] [--limit N] [--json]
                                                 List accounts
          auth-server users show --config FILE ID|EMAIL [--json]
                                                 Show an account, its credentials, sessions,
                                                 clients and recent audit events
          auth-server users disable --config FILE ID|EMAIL
                                                 Block sign-in and revoke sessions and tokens
          auth-server users enable --config FILE ID|EMAIL
                                                 Allow a disabled account to sign in again
          auth-server users reset-password --config FILE ID|EMAIL [--generate]
                                                 Set a password (standard input, or generated)
                                                 and end the account's sessions
          auth-server users delete --config FILE ID|EMAIL --yes
                                                 Delete an account and all that belongs to it
          auth-server users profile --config FILE ID|EMAIL [--name TEXT] [--given-name TEXT] …
                                                 Show or change an account's profile claims
          auth-server users roles add|remove|list --config FILE ID|EMAIL [NAME]
                                                 Assign, remove or list an account's roles
          auth-server users groups add|remove|list --config FILE ID|EMAIL [NAME]
                                                 Assign, remove or list an account's groups
          auth-server sessions list --config FILE --account ID|EMAIL [--json]
                                                 List an account's active sessions
          auth-server sessions revoke --config FILE (--account ID|EMAIL | --session UUID)
                                                 End sessions as signing out does
          auth-server audit --config FILE [--since WHEN] [--until WHEN] [--account ID|EMAIL]
                            [--event NAME] [--limit N] [--json]
                                                 Security events, newest first (WHEN: ISO 8601
                                                 instant or 30m, 24h, 7d; N defaults to 100)
          auth-server maintenance run --config FILE
                                                 Remove expired rows and old audit events now
          auth-server version                    Show the release version, the git commit it was
                                                 built from and the Swift and OpenSSL versions
                                                 (also --version)
          auth-server --help                     Show this help

        Environment:
          AUTH_SERVER_DATABASE_URL   overrides database_url
          AUTH_SERVER_LISTEN         overrides listen (host:port)
          AUTH_SERVER_KEY_ENCRYPTION_KEY
                                     the key that encrypts signing keys at rest (base64url,
                                     32 bytes); overrides key_encryption_key_file

        Exit codes: 0 success, 1 failure, 2 usage error.
        Every command takes --help. Configuration keys: docs/configuration.md; running the
        server (proxies, several instances, backups, upgrades): docs/operations.md.
        """

    static func run(_ arguments: [String], output: TextOutput = .standard) -> Int32 {
        var args = Array(arguments.dropFirst())
        guard let command = args.first else {
            output.error(usage)
            return 2
        }
        args.removeFirst()
        switch command {
        case "--help", "-h", "help":
            output.print(usage)
            return 0
        case "version", "--version":
            if args == ["--help"] || args == ["-h"] {
                output.print("Usage: auth-server version (or auth-server --version)")
                return 0
            }
            if let extra = args.first {
                output.error(
                    "auth-server \(command): unexpected argument \"\(extra)\"\nUsage: auth-server version")
                return 2
            }
            output.print(BuildInfo.current.text)
            return 0
        case "serve":
            return withConfigOption(args, command: "serve", output: output) {
                ServeCommand.run(configPath: $0, output: output)
            }
        case "migrate":
            return withConfigOption(args, command: "migrate", output: output) {
                MigrateCommand.run(configPath: $0, output: output)
            }
        case "config":
            return ConfigCommand.run(args, output: output)
        case "keys":
            return KeysCommand.run(args, output: output)
        case "users":
            return UsersCommand.run(args, output: output)
        case "clients":
            return ClientsCommand.run(args, output: output)
        case "report":
            return ReportCommand.run(args, output: output)
        case "sessions":
            return SessionsCommand.run(args, output: output)
        case "audit":
            return AuditCommand.run(args, output: output)
        case "maintenance":
            return MaintenanceCommand.run(args, output: output)
        default:
            output.error("auth-server: unknown command \"\(command)\"\n\n\(usage)")
            return 2
        }
    }

    /// Parses `--config FILE` (or `--config=FILE`), the only option of serve and migrate.
    static func withConfigOption(
        _ args: [String], command: String, output: TextOutput, _ body: (String) -> Int32
    ) -> Int32 {
        if args.contains("--help") || args.contains("-h") {
            output.print("Usage: auth-server \(command) --config FILE")
            return 0
        }
        var path: String?
        var index = 0
        while index < args.count {
            let arg = args[index]
            if arg == "--config", index + 1 < args.count {
                path = args[index + 1]
                index += 2
            } else if arg.hasPrefix("--config=") {
                path = String(arg.dropFirst("--config=".count))
                index += 1
            } else {
                output.error(
                    "auth-server \(command): unexpected argument \"\(arg)\"\nUsage: auth-server \(command) --config FILE"
                )
                return 2
            }
        }
        guard let path else {
            output.error("auth-server \(command): --config FILE is required")
            return 2
        }
        return body(path)
    }
}

/// Where commands write: standard output and standard error, or buffers in tests.
struct TextOutput: Sendable {
    var print: @Sendable (String) -> Void
    var error: @Sendable (String) -> Void

    static let standard = TextOutput(
        print: { Swift.print($0) },
        error: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
}
