import Foundation
import OIDC

/// `auth-server users list|show|disable|enable|reset-password|delete|profile|roles|groups`:
/// what an operator does to accounts. ID|EMAIL is an account id (UUID) or one of its email addresses.
enum UsersAdminCommand {
    static let order = [
        "list", "show", "disable", "enable", "reset-password", "delete", "profile", "roles", "groups",
    ]

    static let usages: [String: String] = [
        "list": """
        auth-server users list --config FILE [--email-contains TEXT] [--disabled] [--limit N] [--json]
            Lists accounts, newest first (at most N, default 100): id, email, verified, name,
            password, passkeys, disabled, created.
        """,
        "show": """
        auth-server users show --config FILE ID|EMAIL [--json]
            Shows an account: emails, password, passkeys, roles and groups, active sessions,
            connected clients and its last 10 audit events.
        """,
        "disable": """
        auth-server users disable --config FILE ID|EMAIL
            Disables an account: it can no longer sign in, and its sessions, refresh tokens
            and access tokens are revoked at once.
        """,
        "enable": """
        auth-server users enable --config FILE ID|EMAIL
            Lets a disabled account sign in again.
        """,
        "reset-password": """
        auth-server users reset-password --config FILE ID|EMAIL [--generate]
            Sets a new password read from standard input (one line), or a generated one that
            is printed with --generate; ends the account's sessions.
        """,
        "delete": """
        auth-server users delete --config FILE ID|EMAIL --yes
            Deletes an account and everything that belongs to it (emails, password,
            passkeys, sessions, tokens, consents). Its audit events are kept.
        """,
        "profile": UsersProfileCommand.usage,
        "roles": UsersAttributesCommand.usage(.role),
        "groups": UsersAttributesCommand.usage(.group),
    ]

    static func run(_ subcommand: String, _ args: [String], output: TextOutput, input: () -> String?) -> Int32
    {
        if subcommand == "profile" { return UsersProfileCommand.run(args, output: output) }
        if subcommand == "roles" { return UsersAttributesCommand.run(.role, args, output: output) }
        if subcommand == "groups" { return UsersAttributesCommand.run(.group, args, output: output) }
        let usage = "Usage:\n  " + (usages[subcommand] ?? "").replacingOccurrences(of: "\n", with: "\n  ")
        if args.contains("--help") || args.contains("-h") {
            output.print(usage)
            return 0
        }
        let command = "users \(subcommand)"
        let flags: Set<String> =
            switch subcommand {
            case "list": ["--disabled", "--json"]
            case "show": ["--json"]
            case "reset-password": ["--generate"]
            case "delete": ["--yes"]
            default: []
            }
        let valued: Set<String> = subcommand == "list" ? ["--email-contains", "--limit"] : []
        guard
            let (options, configPath) = OperatorCommand.parse(
                args, command: command, usage: usage, valued: valued, flags: flags,
                positional: subcommand != "list", output: output)
        else { return 2 }
        if subcommand == "list" {
            guard let limit = OperatorCommand.limit(options, default: 100, command: command, output: output)
            else {
                return 2
            }
            let filter = AdminFlow.ListFilter(
                emailContains: options.values["--email-contains"],
                disabledOnly: options.flags.contains("--disabled"),
                limit: limit)
            return OperatorCommand.withDatabase(configPath, command: command, output: output) { _, pool in
                list(
                    try AdminFlow(store: PostgresAdminStore(db: pool)).list(filter),
                    json: options.flags.contains("--json"), output: output)
            }
        }
        guard options.positional.count == 1 else {
            output.error("auth-server \(command): one ID|EMAIL is required\n\(usage)")
            return 2
        }
        let reference = options.positional[0]
        if subcommand == "delete" && !options.flags.contains("--yes") {
            output.error(
                "auth-server users delete: deleting \(reference) cannot be undone; add --yes to confirm\n\(usage)"
            )
            return 2
        }
        var newPassword: String?
        if subcommand == "reset-password" && !options.flags.contains("--generate") {
            newPassword = input() ?? ""
        }
        return OperatorCommand.withAccount(
            reference, configPath: configPath, command: command, output: output
        ) {
            admin, accountID in
            return try perform(
                subcommand, on: accountID, options: options, newPassword: newPassword, admin: admin,
                output: output)
        }
    }

    /// One account's subcommand, once the account is found: show, disable, enable,
    /// reset-password or delete.
    private static func perform(
        _ subcommand: String, on accountID: UUID, options: OperatorCommand.Options, newPassword: String?,
        admin: AdminFlow, output: TextOutput
    ) throws -> Int32 {
        let command = "users \(subcommand)"
        let id = OperatorCommand.id(accountID)
        switch subcommand {
        case "show":
            guard let details = try admin.details(accountID: accountID) else {
                output.error("auth-server \(command): no account with id \(id)")
                return 1
            }
            show(details, json: options.flags.contains("--json"), output: output)
        case "disable":
            if try admin.disable(accountID: accountID) {
                output.print("disabled account \(id); its sessions and tokens are revoked")
            } else {
                output.print("account \(id) was already disabled")
            }
        case "enable":
            if try admin.enable(accountID: accountID) {
                output.print("enabled account \(id)")
            } else {
                output.print("account \(id) was not disabled")
            }
        case "reset-password":
            return try resetPassword(accountID, given: newPassword, admin: admin, output: output)
        case "delete":
            guard try admin.delete(accountID: accountID) != nil else {
                output.error("auth-server \(command): no account with id \(id)")
                return 1
            }
            output.print("deleted account \(id) and everything that belonged to it")
        default:
            return 2
        }
        return 0
    }

    static func resetPassword(_ accountID: UUID, given: String?, admin: AdminFlow, output: TextOutput) throws
        -> Int32
    {
        switch try admin.resetPassword(accountID: accountID, given: given) {
        case .refused(let problem):
            output.error(
                "auth-server users reset-password: password refused: \(problem) (read from standard input)")
            return 1
        case .reset(let generated, let ended):
            if let generated { output.print("new password: \(generated)") }
            output.print(
                "password reset for account \(OperatorCommand.id(accountID)); \(ended) session(s) ended")
            return 0
        }
    }

    // MARK: - Output

    static func list(_ accounts: [AccountListing], json: Bool, output: TextOutput) -> Int32 {
        if json {
            OperatorCommand.printJSON(.array(accounts.map { .object(listingJSON($0)) }), output: output)
            return 0
        }
        var rows = [["ID", "EMAIL", "VERIFIED", "NAME", "PASSWORD", "PASSKEYS", "DISABLED", "CREATED"]]
        for account in accounts {
            rows.append([
                OperatorCommand.id(account.id), account.email, account.emailVerified ? "yes" : "no",
                account.displayName, account.hasPassword ? "yes" : "no", String(account.passkeys),
                account.disabledAt.map(iso8601) ?? "-", iso8601(account.createdAt),
            ])
        }
        output.print(OperatorCommand.table(rows))
        return 0
    }

    static func listingJSON(_ account: AccountListing) -> [String: JSONValue] {
        [
            "id": .string(OperatorCommand.id(account.id)), "email": .string(account.email),
            "email_verified": .bool(account.emailVerified),
            "display_name": .string(account.displayName), "has_password": .bool(account.hasPassword),
            "passkeys": .int(account.passkeys),
            "disabled_at": account.disabledAt.map { .string(iso8601($0)) } ?? .null,
            "created_at": .string(iso8601(account.createdAt)),
        ]
    }

    static func show(_ details: AccountDetails, json: Bool, output: TextOutput) {
        let account = details.account
        if json {
            var object = listingJSON(account)
            object["emails"] = .array(
                details.emails.map {
                    .object([
                        "email": .string($0.address),
                        "verified_at": $0.verifiedAt.map { .string(iso8601($0)) } ?? .null,
                    ])
                })
            object["passkeys"] = .array(
                details.passkeys.map {
                    .object([
                        "id": .string(OperatorCommand.id($0.id)), "name": .string($0.name),
                        "created_at": .string(iso8601($0.createdAt)),
                        "last_used_at": $0.lastUsedAt.map { .string(iso8601($0)) } ?? .null,
                        "backup_eligible": .bool($0.backupEligible), "backed_up": .bool($0.backedUp),
                    ])
                })
            object["active_sessions"] = .int(details.activeSessions)
            object["clients"] = .array(
                details.clients.map {
                    .object([
                        "client_id": .string($0.clientID), "scopes": .array($0.scopes.map(JSONValue.string)),
                        "granted_at": .string(iso8601($0.grantedAt)),
                    ])
                })
            object["recent_events"] = .array(details.recentEvents.map { .object(AuditQuery.json($0)) })
            object["roles"] = .array(details.attributes.roles.map(JSONValue.string))
            object["groups"] = .array(details.attributes.groups.map(JSONValue.string))
            OperatorCommand.printJSON(.object(object), output: output)
            return
        }
        var lines = [
            "account   \(OperatorCommand.id(account.id))",
            "name      \(account.displayName)",
            "created   \(iso8601(account.createdAt))",
            "disabled  \(account.disabledAt.map(iso8601) ?? "no")",
            "password  \(account.hasPassword ? "yes" : "no")",
            "roles     \(details.attributes.roles.isEmpty ? "none" : details.attributes.roles.joined(separator: ", "))",
            "groups    \(details.attributes.groups.isEmpty ? "none" : details.attributes.groups.joined(separator: ", "))",
            "sessions  \(details.activeSessions) active",
            "emails:",
        ]
        for email in details.emails {
            lines.append(
                "  \(email.address) (\(email.verifiedAt.map { "verified \(iso8601($0))" } ?? "not verified"))"
            )
        }
        lines.append("passkeys: \(details.passkeys.isEmpty ? "none" : "")")
        for passkey in details.passkeys {
            let backup =
                passkey.backedUp
                ? "synced" : passkey.backupEligible ? "backup eligible, not synced" : "device-bound"
            lines.append(
                "  \(passkey.name)  created \(iso8601(passkey.createdAt))  last used \(passkey.lastUsedAt.map(iso8601) ?? "never")  \(backup)"
            )
        }
        lines.append("connected clients: \(details.clients.isEmpty ? "none" : "")")
        for client in details.clients {
            lines.append(
                "  \(client.clientID)  \(client.scopes.joined(separator: " "))  since \(iso8601(client.grantedAt))"
            )
        }
        lines.append("recent events: \(details.recentEvents.isEmpty ? "none" : "")")
        for event in details.recentEvents { lines.append("  " + AuditQuery.line(event)) }
        output.print(lines.map { $0.hasSuffix(" ") ? String($0.dropLast()) : $0 }.joined(separator: "\n"))
    }
}
