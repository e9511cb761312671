/// `auth-server migrate --config FILE`: applies pending migrations and exits.
enum MigrateCommand {
    static func run(configPath: String, output: TextOutput) -> Int32 {
        let configuration: Configuration
        do {
            configuration = try ConfigurationLoader.load(path: configPath).0
        } catch {
            output.error("\(configPath): the configuration has errors:\n\(error.description)")
            return 1
        }
        do {
            let database = try Database.open(configuration, log: Log())
            database.close()
            output.print("migrations applied")
            return 0
        } catch {
            output.error("auth-server migrate: \(ServeCommand.describe(error))")
            return 1
        }
    }
}
