import Crypto
import Foundation
import OIDC
import Postgres

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
            let hash = try PasswordHasher().hash(password)
            do {
                let id = try AccountStore.createWithPassword(
                    displayName: displayName, email: address, passwordHash: hash, pool: pool,
                    audit: AuditEvent(kind: .accountCreated, actor: .admin, detail: ["method": "cli"]),
                    exclusive: true)
                output.print("created account \(id.lowercased) for \(address.address)")
                return 0
            } catch AccountStore.CreateError.emailTaken {
                output.error("auth-server users create: an account with \(address.address) already exists")
                return 1
            }
        }
    }

    struct ImportEntry: Sendable, Equatable {
        var email: EmailAddress
        var name: String
        var passwordHash: String
    }

    /// Parses and validates an import file; every problem names the entry's index.
    static func parseImport(_ data: Data) -> (entries: [ImportEntry], problems: [String]) {
        guard case .array(let array)? = try? JSONValue.parse(data) else {
            return ([], ["the file must be a JSON array of user objects"])
        }
        var entries: [ImportEntry] = []
        var problems: [String] = []
        var seen: [String: Int] = [:]
        for (index, item) in array.enumerated() {
            guard case .object(let object) = item else {
                problems.append("[\(index)]: must be an object")
                continue
            }
            var entryProblems: [String] = []
            let email = object["email"]?.stringValue.flatMap(EmailAddress.init)
            if email == nil { entryProblems.append("[\(index)].email: missing or not a valid email address") }
            let name = object["name"]?.stringValue.flatMap(AccountStore.validDisplayName)
            if name == nil { entryProblems.append("[\(index)].name: missing or not 1 to 200 characters") }
            let hash = object["password_hash"]?.stringValue
            if hash == nil || !isSupportedPHC(hash ?? "") {
                entryProblems.append(
                    "[\(index)].password_hash: missing or not a PHC string ($argon2id$, $scrypt$, $pbkdf2-sha256$)"
                )
            }
            for key in object.keys where !["email", "name", "password_hash"].contains(key) {
                entryProblems.append("[\(index)].\(key): unknown member")
            }
            if let email {
                if let first = seen[email.normalized] {
                    entryProblems.append("[\(index)].email: duplicates entry [\(first)]")
                } else {
                    seen[email.normalized] = index
                }
            }
            if entryProblems.isEmpty, let email, let name, let hash {
                entries.append(ImportEntry(email: email, name: name, passwordHash: hash))
            }
            problems += entryProblems
        }
        return (entries, problems)
    }

    /// A structural check of a PHC string of a scheme the hasher verifies; the full parse
    /// happens at sign-in.
    static func isSupportedPHC(_ text: String) -> Bool {
        let fields = text.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count >= 5, fields[0].isEmpty else { return false }
        let schemes = ["argon2id", "argon2i", "argon2d", "scrypt", "pbkdf2-sha256", "pbkdf2-sha512"]
        guard schemes.contains(String(fields[1])) else { return false }
        let base64 = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/.=")
        return fields.suffix(2).allSatisfy { !$0.isEmpty && $0.allSatisfy(base64.contains) }
    }

    static func importFile(configPath: String, file: String, output: TextOutput) -> Int32 {
        guard let data = FileManager.default.contents(atPath: file) else {
            output.error("auth-server users import: cannot read \(file)")
            return 1
        }
        let (entries, problems) = parseImport(data)
        guard problems.isEmpty else {
            output.error(
                "auth-server users import: \(file) has \(problems.count) problem(s); nothing imported:\n"
                    + problems.joined(separator: "\n"))
            return 1
        }
        return OperatorCommand.withDatabase(configPath, command: "users", output: output) { _, pool in
            var taken: [String] = []
            do {
                try pool.withTransaction { connection in
                    for (index, entry) in entries.enumerated() {
                        let id = UUID.random()
                        // A savepoint keeps the transaction usable after a duplicate, so every
                        // duplicate is reported, not only the first.
                        try connection.query("SAVEPOINT entry")
                        do {
                            try AccountStore.insertAccount(
                                id: id, displayName: entry.name, email: entry.email,
                                userHandle: AccountStore.newUserHandle(), exclusive: true,
                                on: connection)
                            try AccountStore.setPassword(
                                accountID: id, hash: entry.passwordHash, on: connection)
                            try AuditLog.record(
                                AuditEvent(
                                    kind: .accountCreated, actor: .admin, accountID: id,
                                    detail: ["method": "import"]), on: connection)
                            try connection.query("RELEASE SAVEPOINT entry")
                        } catch AccountStore.CreateError.emailTaken {
                            try connection.query("ROLLBACK TO SAVEPOINT entry")
                            taken.append(
                                "[\(index)].email: an account with \(entry.email.address) already exists")
                        }
                    }
                    if !taken.isEmpty { throw ImportRefused() }
                }
            } catch is ImportRefused {
                output.error(
                    "auth-server users import: \(taken.count) problem(s); nothing imported:\n"
                        + taken.joined(separator: "\n"))
                return 1
            }
            output.print("imported \(entries.count) account(s)")
            return 0
        }
    }

    struct ImportRefused: Error {}
}
