import Foundation
import OIDC

/// `auth-server users roles|groups add|remove|list`: the roles and groups an operator assigns
/// to an account, which configured APIs may put into their access tokens as claims.
enum UsersAttributesCommand {
    static func usage(_ kind: AccountAttributes.Kind) -> String {
        let plural = "\(kind.rawValue)s"
        let name = kind.rawValue.uppercased()
        return """
            auth-server users \(plural) add --config FILE ID|EMAIL \(name)
            auth-server users \(plural) remove --config FILE ID|EMAIL \(name)
            auth-server users \(plural) list --config FILE ID|EMAIL [--json]
                Assigns, removes or lists an account's \(plural). A name is 1 to 100 letters,
                digits and . _ : / - starting with a letter or digit. Each change is an audit
                event (account.\(kind.rawValue)_added, account.\(kind.rawValue)_removed).
                Tokens already issued keep the \(plural) they were issued with until they expire.
            """
    }

    static func run(_ kind: AccountAttributes.Kind, _ args: [String], output: TextOutput) -> Int32 {
        let plural = "\(kind.rawValue)s"
        let usage = "Usage:\n  " + usage(kind).replacingOccurrences(of: "\n", with: "\n  ")
        if args.contains("--help") || args.contains("-h") {
            output.print(usage)
            return 0
        }
        guard let action = args.first, ["add", "remove", "list"].contains(action) else {
            output.error(
                "auth-server users \(plural): \(args.first.map { "unknown action \"\($0)\"" } ?? "add, remove or list is required")\n\(usage)"
            )
            return 2
        }
        let command = "users \(plural) \(action)"
        guard
            let (options, configPath) = OperatorCommand.parse(
                Array(args.dropFirst()), command: command, usage: usage, valued: [],
                flags: action == "list" ? ["--json"] : [], positional: true, output: output)
        else { return 2 }
        let expected = action == "list" ? 1 : 2
        guard options.positional.count == expected else {
            output.error(
                "auth-server \(command): \(action == "list" ? "one ID|EMAIL is" : "ID|EMAIL and \(kind.rawValue.uppercased()) are") required\n\(usage)"
            )
            return 2
        }
        let reference = options.positional[0]
        let name = expected == 2 ? options.positional[1] : ""
        if expected == 2 && !AccountAttributes.isValidName(name) {
            output.error(
                "auth-server \(command): \"\(name)\" is not a valid \(kind.rawValue) name: use 1 to 100 letters, digits and . _ : / - starting with a letter or digit"
            )
            return 2
        }
        return OperatorCommand.withAccount(
            reference, configPath: configPath, command: command, output: output
        ) {
            admin, accountID in
            let id = OperatorCommand.id(accountID)
            if action == "list" {
                let attributes = try admin.attributes(accountID: accountID)
                let names = kind == .role ? attributes.roles : attributes.groups
                if options.flags.contains("--json") {
                    OperatorCommand.printJSON(
                        .object(["account": .string(id), plural: .array(names.map(JSONValue.string))]),
                        output: output)
                } else if !names.isEmpty {
                    output.print(names.joined(separator: "\n"))
                }
                return 0
            }
            let add = action == "add"
            switch try admin.changeAttribute(kind, name: name, add: add, accountID: accountID) {
            case .invalidName:
                output.error("auth-server \(command): \"\(name)\" is not a valid \(kind.rawValue) name")
                return 2
            case .noAccount:
                output.error("auth-server \(command): no account with id \(id)")
                return 1
            case .changed:
                output.print(
                    add
                        ? "added \(kind.rawValue) \(name) to account \(id)"
                        : "removed \(kind.rawValue) \(name) from account \(id)")
            case .unchanged:
                output.print(
                    add
                        ? "account \(id) already has \(kind.rawValue) \(name)"
                        : "account \(id) has no \(kind.rawValue) \(name)")
            }
            return 0
        }
    }
}
