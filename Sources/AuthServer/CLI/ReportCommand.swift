import Foundation

/// `auth-server report adoption`: the passkey adoption figures for operators.
enum ReportCommand {
    static let usage = """
        Usage:
          auth-server report adoption --config FILE [--json]
              Accounts by state (password only, password + passkey, passkey only), sign-ins
              by method, conditional passkey upgrades offered and completed, and recoveries,
              over the last 7 and 30 days. --json prints one JSON object.
        """

    static func run(_ args: [String], output: TextOutput) -> Int32 {
        if args.contains("--help") || args.contains("-h") {
            output.print(usage)
            return 0
        }
        guard args.first == "adoption" else {
            output.error(
                args.first.map { "auth-server report: unknown report \"\($0)\"\n\(usage)" } ?? usage)
            return 2
        }
        var configPath: String?
        var json = false
        var index = 1
        while index < args.count {
            let arg = args[index]
            if arg == "--config", index + 1 < args.count {
                configPath = args[index + 1]
                index += 2
            } else if arg.hasPrefix("--config=") {
                configPath = String(arg.dropFirst("--config=".count))
                index += 1
            } else if arg == "--json" {
                json = true
                index += 1
            } else {
                output.error("auth-server report adoption: unexpected argument \"\(arg)\"\n\(usage)")
                return 2
            }
        }
        guard let configPath else {
            output.error("auth-server report adoption: --config FILE is required\n\(usage)")
            return 2
        }
        return OperatorCommand.withDatabase(configPath, command: "report adoption", output: output) { _, pool in
            let report = try AdoptionReport.load(on: pool)
            output.print(json ? report.json : report.text)
            return 0
        }
    }
}
