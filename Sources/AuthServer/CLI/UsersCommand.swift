import Foundation

/// `auth-server users create|import`: accounts from the command line, so a team can seed an
/// administrator or migrate its users with their existing password hashes.
enum UsersCommand {
    static let usage = """
        Usage:
          auth-server users create --config FILE --email EMAIL --name NAME
              Creates an account with a password read from standard input (one line).
          auth-server users import --config FILE USERS.json
              Imports a JSON array of {"email", "name", "password_hash"} objects, where
              password_hash is a PHC string: $argon2id$…, $scrypt$…, $pbkdf2-sha256$…
              All or nothing: every bad entry is reported with its index and nothing is
              written. Imported scrypt and PBKDF2 hashes become Argon2id at the next sign-in.
        """ + "\n"
        + UsersAdminCommand.order.compactMap { UsersAdminCommand.usages[$0] }
        .map { "  " + $0.replacingOccurrences(of: "\n", with: "\n  ") }.joined(separator: "\n")

    static func run(
        _ args: [String], output: TextOutput, input: () -> String? = { readLine(strippingNewline: true) }
    )
        -> Int32
    {
        guard let subcommand = args.first else {
            output.error(usage)
            return 2
        }
        let rest = Array(args.dropFirst())
        if UsersAdminCommand.usages[subcommand] != nil {
            return UsersAdminCommand.run(subcommand, rest, output: output, input: input)
        }
        if rest.contains("--help") || rest.contains("-h") || subcommand == "--help" || subcommand == "-h" {
            output.print(usage)
            return 0
        }
        var options: [String: String] = [:]
        var positional: [String] = []
        var index = 0
        while index < rest.count {
            let arg = rest[index]
            if ["--config", "--email", "--name"].contains(arg), index + 1 < rest.count {
                options[arg] = rest[index + 1]
                index += 2
            } else if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
                options[String(arg[..<eq])] = String(arg[arg.index(after: eq)...])
                index += 1
            } else if arg.hasPrefix("-") {
                output.error("auth-server users: unknown option \(arg)\n\(usage)")
                return 2
            } else {
                positional.append(arg)
                index += 1
            }
        }
        guard let configPath = options["--config"] else {
            output.error("auth-server users \(subcommand): --config FILE is required\n\(usage)")
            return 2
        }
        switch subcommand {
        case "create":
            guard let email = options["--email"], let name = options["--name"], positional.isEmpty else {
                output.error("auth-server users create: --email and --name are required\n\(usage)")
                return 2
            }
            return create(
                configPath: configPath, email: email, name: name, password: input() ?? "", output: output)
        case "import":
            guard positional.count == 1 else {
                output.error("auth-server users import: one USERS.json file is required\n\(usage)")
                return 2
            }
            return importFile(configPath: configPath, file: positional[0], output: output)
        default:
            output.error("auth-server users: unknown subcommand \"\(subcommand)\"\n\(usage)")
            return 2
        }
    }

    static func create(configPath: String, email: String, name: String, password: String, output: TextOutput)
        -> Int32
    {
        guard let address = EmailAddress(email) else {
            output.error("auth-server users create: \"\(email)\" is not a valid email address")
            return 1
        }
        guard let displayName = AccountStore.validDisplayName(name) else {
            output.error("auth-server users create: the name must be 1 to 200 characters")
            return 1
        }
        if let problem = PasswordPolicy.check(password, email: address.normalized) {
            output.error(
                "auth-server users create: password refused: \(problem.message) (read from standard input)")
            return 1
        }
        return OperatorCommand.withDatabase(configPath, command: "users", output: output) { _, pool in
            let admin = AdminFlow(store: PostgresAdminStore(db: pool))
            guard let id = try admin.create(displayName: displayName, email: address, password: password)
            else {
                output.error("auth-server users create: an account with \(address.address) already exists")
                return 1
            }
            output.print("created account \(id.lowercased) for \(address.address)")
            return 0
        }
    }

    static func importFile(configPath: String, file: String, output: TextOutput) -> Int32 {
        guard let data = FileManager.default.contents(atPath: file) else {
            output.error("auth-server users import: cannot read \(file)")
            return 1
        }
        let (entries, problems) = AccountImport.parse(data)
        guard problems.isEmpty else {
            output.error(
                "auth-server users import: \(file) has \(problems.count) problem(s); nothing imported:\n"
                    + problems.joined(separator: "\n"))
            return 1
        }
        return OperatorCommand.withDatabase(configPath, command: "users", output: output) { _, pool in
            switch try AdminFlow(store: PostgresAdminStore(db: pool)).importAccounts(entries) {
            case .refused(let taken):
                output.error(
                    "auth-server users import: \(taken.count) problem(s); nothing imported:\n"
                        + taken.joined(separator: "\n"))
                return 1
            case .imported(let count):
                output.print("imported \(count) account(s)")
                return 0
            }
        }
    }
}
