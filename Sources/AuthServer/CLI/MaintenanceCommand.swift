import Foundation

/// `auth-server maintenance run --config FILE`: one maintenance pass now.
enum MaintenanceCommand {
    static let usage = """
        Usage:
          auth-server maintenance run --config FILE
              Removes expired challenges, codes, sessions and tokens and audit events older than
              audit.retention_days now, paced by maintenance.duty_cycle_percent, and prints
              the rows removed per table. (serve runs the same pass every
              maintenance.interval_seconds.)
        """

    static func run(_ args: [String], output: TextOutput) -> Int32 {
        if args.contains("--help") || args.contains("-h") {
            output.print(usage)
            return 0
        }
        guard args.first == "run" else {
            output.error(
                args.first.map { "auth-server maintenance: unknown subcommand \"\($0)\"\n\(usage)" } ?? usage)
            return 2
        }
        return CommandLineTool.withConfigOption(
            Array(args.dropFirst()), command: "maintenance run", output: output
        ) {
            path in
            OperatorCommand.withDatabase(path, command: "maintenance run", output: output) {
                configuration, pool in
                guard
                    let removed = try Maintenance.runOnce(
                        pool: pool, auditRetentionDays: configuration.audit.retentionDays,
                        pacing: Maintenance.Pacing(
                            dutyCyclePercent: configuration.maintenance.dutyCyclePercent))
                else {
                    output.error(
                        "auth-server maintenance run: another instance is running a pass; try again later")
                    return 1
                }
                output.print(
                    OperatorCommand.table(
                        [["TABLE", "REMOVED"]] + removed.map { [$0.table, String($0.rows)] }))
                return 0
            }
        }
    }
}
