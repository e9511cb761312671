import Foundation

/// `auth-server audit`: the security events, newest first.
enum AuditCommand {
    static let usage = """
        Usage:
          auth-server audit --config FILE [--since WHEN] [--until WHEN] [--account ID|EMAIL]
                            [--event NAME] [--limit N] [--json]
              Prints one line per event, newest first: time, event, actor, account, client,
              address, detail. WHEN is an ISO 8601 instant (2026-05-01T12:00:00Z) or a
              duration back from now (30m, 24h, 7d). N defaults to 100.
        """

    static func run(_ args: [String], output: TextOutput, now: Date = Date()) -> Int32 {
        if args.contains("--help") || args.contains("-h") {
            output.print(usage)
            return 0
        }
        guard
            let (options, configPath) = OperatorCommand.parse(
                args, command: "audit", usage: usage,
                valued: ["--since", "--until", "--account", "--event", "--limit"],
                flags: ["--json"], output: output)
        else { return 2 }
        var query = AuditQuery()
        for (option, keyPath) in [("--since", \AuditQuery.since), ("--until", \AuditQuery.until)] {
            guard let text = options.values[option] else { continue }
            guard let date = AuditQuery.parseWhen(text, now: now) else {
                output.error(
                    "auth-server audit: \(option) must be an ISO 8601 instant or a duration like 30m, 24h, 7d"
                )
                return 2
            }
            query[keyPath: keyPath] = date
        }
        query.event = options.values["--event"]
        guard let limit = OperatorCommand.limit(options, default: 100, command: "audit", output: output)
        else {
            return 2
        }
        query.limit = limit
        return OperatorCommand.withDatabase(configPath, command: "audit", output: output) { _, pool in
            let admin = AdminFlow(store: PostgresAdminStore(db: pool))
            if let account = options.values["--account"] {
                // An id is taken as is: events outlive deleted accounts.
                if let id = UUID(uuidString: account) {
                    query.accountID = id
                } else {
                    guard
                        let id = try OperatorCommand.account(
                            account, command: "audit", admin: admin, output: output)
                    else { return 1 }
                    query.accountID = id
                }
            }
            let records = try admin.auditEvents(query)
            if options.flags.contains("--json") {
                OperatorCommand.printJSON(
                    .array(records.map { .object(AuditQuery.json($0)) }), output: output)
            } else if !records.isEmpty {
                output.print(records.map(AuditQuery.line).joined(separator: "\n"))
            }
            return 0
        }
    }
}
