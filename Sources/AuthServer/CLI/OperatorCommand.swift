import Foundation
import OIDC
import Postgres

/// What the operators' commands share: option parsing, opening the configured database,
/// finding an account by id or email, tables and JSON on standard output.
enum OperatorCommand {
    struct Options {
        var values: [String: String] = [:]
        var flags: Set<String> = []
        var positional: [String] = []
    }

    /// Parses `--name VALUE`, `--name=VALUE` and bare `--flag`s; anything else starting with
    /// `-` is a usage error, returned as a sentence.
    static func parse(_ args: [String], valued: Set<String>, flags: Set<String> = []) -> Result<
        Options, UsageError
    > {
        var options = Options()
        var index = 0
        while index < args.count {
            let arg = args[index]
            if let eq = arg.firstIndex(of: "="), arg.hasPrefix("--"), valued.contains(String(arg[..<eq])) {
                options.values[String(arg[..<eq])] = String(arg[arg.index(after: eq)...])
                index += 1
            } else if valued.contains(arg) {
                guard index + 1 < args.count else { return .failure(UsageError("\(arg) needs a value")) }
                options.values[arg] = args[index + 1]
                index += 2
            } else if flags.contains(arg) {
                options.flags.insert(arg)
                index += 1
            } else if arg.hasPrefix("-") && arg != "-" {
                return .failure(UsageError("unknown option \(arg)"))
            } else {
                options.positional.append(arg)
                index += 1
            }
        }
        return .success(options)
    }

    /// `parse`, then the `--config FILE` every operator command needs and, unless the command
    /// takes positional arguments, none of those. Prints the usage error and returns nil (the
    /// command then exits 2).
    static func parse(
        _ args: [String], command: String, usage: String, valued: Set<String>, flags: Set<String> = [],
        positional: Bool = false, output: TextOutput
    ) -> (options: Options, configPath: String)? {
        let options: Options
        switch parse(args, valued: valued.union(["--config"]), flags: flags) {
        case .success(let parsed): options = parsed
        case .failure(let error):
            output.error("auth-server \(command): \(error.message)\n\(usage)")
            return nil
        }
        guard let configPath = options.values["--config"] else {
            output.error("auth-server \(command): --config FILE is required\n\(usage)")
            return nil
        }
        if !positional, let unexpected = options.positional.first {
            output.error("auth-server \(command): unexpected argument \(unexpected)\n\(usage)")
            return nil
        }
        return (options, configPath)
    }

    struct UsageError: Error {
        var message: String
        init(_ message: String) { self.message = message }
    }

    /// Loads the configuration, opens the database (applying migrations, as every command
    /// does) and runs `body`; configuration and database errors exit 1 with a sentence.
    static func withDatabase(
        _ configPath: String, command: String, output: TextOutput, log: Log = Log(write: { _ in }),
        _ body: (Configuration, PostgresPool) throws -> Int32
    ) -> Int32 {
        let configuration: Configuration
        do {
            configuration = try ConfigurationLoader.load(path: configPath).0
        } catch {
            output.error("\(configPath): the configuration has errors:\n\(error.description)")
            return 1
        }
        do {
            let database = try Database.open(configuration, log: log)
            defer { database.close() }
            return try body(configuration, database.pool)
        } catch {
            output.error("auth-server \(command): \(ServeCommand.describe(error))")
            return 1
        }
    }

    /// The account named by an id or an email address; prints the failure and returns nil.
    static func account(_ reference: String, command: String, admin: AdminFlow, output: TextOutput) throws
        -> UUID?
    {
        if let id = try admin.resolve(reference) { return id }
        output.error(
            "auth-server \(command): no account with \(UUID(uuidString: reference) == nil ? "email" : "id") \(reference)"
        )
        return nil
    }

    /// Opens the database and runs `body` with the admin flow and the account `reference`
    /// names (an id or an email address); 1 after saying so when there is none.
    static func withAccount(
        _ reference: String, configPath: String, command: String, output: TextOutput,
        _ body: (AdminFlow, UUID) throws -> Int32
    ) -> Int32 {
        withDatabase(configPath, command: command, output: output) { configuration, pool in
            var admin = AdminFlow(store: PostgresAdminStore(db: pool))
            admin.clients = configuration.clients
            // A deleted account's Apple tokens are revoked at Apple (Apple requires it): at once,
            // and what fails stays queued for the server's worker.
            admin.revokeUpstreamTokens = { revocations in
                do {
                    let keys = SigningKeyRing(
                        pool: pool,
                        keyEncryptionKey: try KeyEncryptionKey.load(
                            configuration, environment: ProcessInfo.processInfo.environment),
                        settings: configuration.signingKeys)
                    let worker = UpstreamRevocationWorker(
                        pool: pool, configuration: configuration, keys: keys, log: Log())
                    let revoked = try worker.runOnce(ids: revocations).revoked
                    output.print(
                        "revoked \(revoked) of \(revocations.count) upstream refresh tokens at the provider"
                            + (revoked < revocations.count ? " (the server retries the rest)" : ""))
                } catch {
                    output.error(
                        "auth-server \(command): upstream tokens not revoked: \(ServeCommand.describe(error))"
                    )
                }
            }
            guard let accountID = try account(reference, command: command, admin: admin, output: output)
            else { return 1 }
            return try body(admin, accountID)
        }
    }

    /// `--limit N` (1…10000), or the default; nil (after printing why) when malformed.
    static func limit(_ options: Options, default value: Int, command: String, output: TextOutput) -> Int? {
        guard let text = options.values["--limit"] else { return value }
        guard let limit = Int(text), (1...10_000).contains(limit) else {
            output.error("auth-server \(command): --limit must be a number from 1 to 10000")
            return nil
        }
        return limit
    }

    /// `--json` output: the one JSON writer, laid out for people.
    static func printJSON(_ value: JSONValue, output: TextOutput) {
        output.print(String(decoding: JSONBody.encodePretty(value), as: UTF8.self))
    }

    /// Left-aligned columns separated by two spaces, sized to their widest cell.
    static func table(_ rows: [[String]]) -> String {
        guard let first = rows.first else { return "" }
        var widths = [Int](repeating: 0, count: first.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        return rows.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1
                    ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n")
    }

    static func id(_ uuid: UUID) -> String { uuid.lowercased }
}
