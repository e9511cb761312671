/// `auth-server config check FILE`: every problem with its JSON path; exit 1 on errors.
enum ConfigCommand {
    static func run(_ args: [String], output: TextOutput) -> Int32 {
        guard args.first == "check" else {
            output.error("Usage: auth-server config check FILE")
            return args.first == "--help" ? 0 : 2
        }
        guard args.count == 2, !args[1].hasPrefix("-") else {
            if args.contains("--help") {
                output.print("Usage: auth-server config check FILE\nValidates FILE and prints every problem with its JSON path.")
                return 0
            }
            output.error("Usage: auth-server config check FILE")
            return 2
        }
        let result = ConfigurationLoader.check(path: args[1], environment: [:])
        let problems = result.problems + (result.configuration.map(ConfigurationLoader.serveProblems) ?? [])
        for problem in problems { output.print(problem.description) }
        let errors = problems.filter { $0.severity == .error }.count
        if errors > 0 {
            output.error("\(args[1]): \(errors) error(s)")
            return 1
        }
        output.print("\(args[1]): ok (\(result.configuration?.clients.count ?? 0) client(s))")
        return 0
    }
}
