import Foundation
import OIDC

/// `auth-server sessions list|revoke`: an account's browser sessions.
enum SessionsCommand {
    static let usage = """
        Usage:
          auth-server sessions list --config FILE --account ID|EMAIL [--json]
              Lists the account's active sessions: id, created, last seen, ends, methods,
              address, browser.
          auth-server sessions revoke --config FILE (--account ID|EMAIL | --session UUID)
              Ends the account's sessions, or one session, as signing out does (clients with
              back-channel logout are told); prints how many ended.
        """

    static func run(_ args: [String], output: TextOutput) -> Int32 {
        guard let subcommand = args.first, subcommand == "list" || subcommand == "revoke" else {
            if args.first == "--help" || args.first == "-h" {
                output.print(usage)
                return 0
            }
            output.error(
                args.first.map { "auth-server sessions: unknown subcommand \"\($0)\"\n\(usage)" } ?? usage)
            return 2
        }
        let rest = Array(args.dropFirst())
        if rest.contains("--help") || rest.contains("-h") {
            output.print(usage)
            return 0
        }
        let command = "sessions \(subcommand)"
        guard
            let (options, configPath) = OperatorCommand.parse(
                rest, command: command, usage: usage, valued: ["--account", "--session"],
                flags: subcommand == "list" ? ["--json"] : [], output: output)
        else { return 2 }
        let account = options.values["--account"]
        return subcommand == "list"
            ? list(account: account, options: options, configPath: configPath, output: output)
            : revoke(account: account, options: options, configPath: configPath, output: output)
    }

    /// `sessions list`: the account's active sessions, as a table or JSON.
    private static func list(
        account: String?, options: OperatorCommand.Options, configPath: String, output: TextOutput
    ) -> Int32 {
        let command = "sessions list"
        guard let account, options.values["--session"] == nil else {
            output.error("auth-server sessions list: --account ID|EMAIL is required\n\(usage)")
            return 2
        }
        return OperatorCommand.withAccount(account, configPath: configPath, command: command, output: output)
        {
            admin, accountID in
            let sessions = try admin.sessions(accountID: accountID)
            if options.flags.contains("--json") {
                OperatorCommand.printJSON(
                    .array(
                        sessions.map {
                            .object([
                                "id": .string(OperatorCommand.id($0.summary.id)),
                                "created_at": .string(iso8601($0.summary.createdAt)),
                                "last_seen_at": .string(iso8601($0.summary.lastSeenAt)),
                                "ends_at": .string(iso8601($0.expiresAt)),
                                "amr": .array($0.summary.amr.map(JSONValue.string)),
                                "client_address": .string($0.summary.clientAddress),
                                "user_agent": .string($0.summary.userAgent),
                            ])
                        }), output: output)
            } else {
                var rows = [["ID", "CREATED", "LAST SEEN", "ENDS", "AMR", "ADDRESS", "BROWSER"]]
                for session in sessions {
                    rows.append([
                        OperatorCommand.id(session.summary.id), iso8601(session.summary.createdAt),
                        iso8601(session.summary.lastSeenAt), iso8601(session.expiresAt),
                        session.summary.amr.joined(separator: ","),
                        session.summary.clientAddress.isEmpty ? "-" : session.summary.clientAddress,
                        UserAgentSummary.describe(session.summary.userAgent),
                    ])
                }
                output.print(OperatorCommand.table(rows))
            }
            return 0
        }
    }

    /// `sessions revoke`: ends the account's sessions, or one session.
    private static func revoke(
        account: String?, options: OperatorCommand.Options, configPath: String, output: TextOutput
    ) -> Int32 {
        let command = "sessions revoke"
        let sessionText = options.values["--session"]
        guard (account == nil) != (sessionText == nil) else {
            output.error(
                "auth-server sessions revoke: give either --account ID|EMAIL or --session UUID\n\(usage)")
            return 2
        }
        var sessionID: UUID?
        if let sessionText {
            guard let id = UUID(uuidString: sessionText) else {
                output.error("auth-server sessions revoke: --session must be a session id (UUID)")
                return 2
            }
            sessionID = id
        }
        return OperatorCommand.withDatabase(configPath, command: command, output: output) { _, pool in
            let admin = AdminFlow(store: PostgresAdminStore(db: pool))
            var accountID: UUID?
            if let account {
                guard
                    let id = try OperatorCommand.account(
                        account, command: command, admin: admin, output: output)
                else { return 1 }
                accountID = id
            }
            let count = try admin.revokeSessions(
                accountID: accountID, sessionID: sessionID)
            if let sessionID, count == 0 {
                output.error(
                    "auth-server sessions revoke: no active session with id \(OperatorCommand.id(sessionID))")
                return 1
            }
            output.print("revoked \(count) session(s)")
            return 0
        }
    }
}
