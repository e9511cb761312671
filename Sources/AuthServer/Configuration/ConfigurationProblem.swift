/// One thing wrong with a configuration file, with the JSON path where it was found
/// (`$.clients[1].redirect_uris[0]`), so that an admin can fix every problem in one pass.
struct ConfigurationProblem: Sendable, Equatable, CustomStringConvertible {
    enum Severity: String, Sendable { case error, warning }
    var path: String
    var message: String
    var severity: Severity = .error

    var description: String { "\(severity.rawValue): \(path): \(message)" }
}

/// The configuration could not be used; `problems` lists every error found, not just the first.
struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    var problems: [ConfigurationProblem]
    var description: String { problems.map(\.description).joined(separator: "\n") }
}
