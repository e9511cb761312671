import Foundation
import OIDC

/// `auth-server users profile`: the operator's view and edit of an account's profile claims
/// (the display name and the optional OpenID Connect Core §5.1 fields), with the rules of the
/// account page.
enum UsersProfileCommand {
    static let usage = """
        auth-server users profile --config FILE ID|EMAIL [--name TEXT] [--given-name TEXT] [--family-name TEXT] [--preferred-username TEXT] [--locale LOCALE] [--picture URL] [--json]
            Shows an account's profile claims after changing the ones given (an empty value
            removes a field; the name cannot be removed). Same rules as the account page:
            names up to 200 characters, preferred username up to 64, locale a BCP 47 tag
            (ja-JP), picture an https URL. A change is the audit event account.profile_updated.
        """

    /// The options, by the claim each one sets.
    static let options: [(option: String, field: ProfileFields.Field)] = [
        ("--given-name", .givenName), ("--family-name", .familyName),
        ("--preferred-username", .preferredUsername), ("--locale", .locale), ("--picture", .picture),
    ]

    static func run(_ args: [String], output: TextOutput) -> Int32 {
        let command = "users profile"
        let usage = "Usage:\n  " + usage.replacingOccurrences(of: "\n", with: "\n  ")
        if args.contains("--help") || args.contains("-h") {
            output.print(usage)
            return 0
        }
        guard
            let (parsed, configPath) = OperatorCommand.parse(
                args, command: command, usage: usage, valued: Set(["--name"] + options.map(\.option)),
                flags: ["--json"], positional: true, output: output)
        else { return 2 }
        guard parsed.positional.count == 1 else {
            output.error("auth-server \(command): one ID|EMAIL is required\n\(usage)")
            return 2
        }
        var change = ProfileChange()
        change.displayName = parsed.values["--name"]
        for (option, field) in options {
            if let value = parsed.values[option] { change.fields[field] = .some(value) }
        }
        // The values are checked before the database is opened.
        do {
            _ = try change.validated()
        } catch {
            output.error("auth-server \(command): \(message(error))")
            return 2
        }
        let reference = parsed.positional[0]
        return OperatorCommand.withAccount(
            reference, configPath: configPath, command: command, output: output
        ) {
            admin, accountID in
            if change != ProfileChange() {
                switch try admin.updateProfile(accountID: accountID, change: change) {
                case .invalid(let problem):
                    output.error("auth-server \(command): \(message(problem))")
                    return 2
                case .noAccount:
                    output.error(
                        "auth-server \(command): no account with id \(OperatorCommand.id(accountID))")
                    return 1
                case .updated: break
                }
            }
            guard let account = try admin.profile(accountID: accountID) else {
                output.error("auth-server \(command): no account with id \(OperatorCommand.id(accountID))")
                return 1
            }
            show(account, json: parsed.flags.contains("--json"), output: output)
            return 0
        }
    }

    static func message(_ problem: ProfileChange.Problem) -> String {
        switch problem {
        case .displayName: "--name: enter 1 to 200 characters, without control characters"
        case .field(let field):
            "\(options.first { $0.field == field }?.option ?? field.rawValue): enter \(field.rule), or an empty value to remove it"
        }
    }

    /// The claims as apps receive them (`name`, the fields, `updated_at`); `-` (JSON: null)
    /// for a field that is not set.
    static func show(_ account: AccountSummary, json: Bool, output: TextOutput) {
        let fields = ProfileFields.Field.allCases.map { ($0.rawValue, account.profile[$0]) }
        if json {
            var object: [String: JSONValue] = [
                "account": .string(OperatorCommand.id(account.id)), "name": .string(account.displayName),
                "updated_at": .string(iso8601(account.profileUpdatedAt)),
            ]
            for (name, value) in fields { object[name] = value.map(JSONValue.string) ?? .null }
            OperatorCommand.printJSON(.object(object), output: output)
            return
        }
        let rows =
            [("name", Optional(account.displayName))] + fields + [
                ("updated_at", Optional(iso8601(account.profileUpdatedAt)))
            ]
        output.print(
            rows.map { $0.0.padding(toLength: 20, withPad: " ", startingAt: 0) + ($0.1 ?? "-") }
                .joined(separator: "\n"))
    }
}
