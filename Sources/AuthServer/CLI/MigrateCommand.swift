/// `auth-server migrate --config FILE`: applies pending migrations and exits.
enum MigrateCommand {
    static func run(configPath: String, output: TextOutput) -> Int32 {
        // Opening the database applies the migrations; their log lines are shown.
        OperatorCommand.withDatabase(configPath, command: "migrate", output: output, log: Log()) { _, _ in
            output.print("migrations applied")
            return 0
        }
    }
}
