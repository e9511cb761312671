/// Why migrations did not run. Descriptions are written for the operator reading the log.
public enum MigrationError: Error, CustomStringConvertible {
    case unreadableDirectory(path: String, reason: String)
    case unreadableFile(file: String, reason: String)
    case duplicateVersion(version: Int, files: [String])
    /// An applied migration's file no longer matches what was applied.
    case checksumMismatch(file: String, recorded: String, actual: String)
    /// A migration's SQL failed; its transaction was rolled back.
    case failed(file: String, error: PostgresError)
    /// A statement of a no-transaction migration failed; the statements before it stay applied
    /// and the file is not recorded, so the next run starts it again from the top.
    case failedPartway(file: String, statement: Int, of: Int, error: PostgresError)

    public var description: String {
        switch self {
        case .unreadableDirectory(let path, let reason):
            "migrations directory \(path) cannot be read: \(reason)"
        case .unreadableFile(let file, let reason):
            "migration \(file) cannot be read: \(reason)"
        case .duplicateVersion(let version, let files):
            "migration version \(version) is used by more than one file (\(files.joined(separator: ", "))); "
                + "give each migration its own number"
        case .checksumMismatch(let file, let recorded, let actual):
            "migration \(file) was edited after it was applied (checksum \(recorded) ≠ \(actual)); "
                + "add a new migration instead"
        case .failed(let file, let error):
            "migration \(file) failed and was rolled back: \(error.detail)"
        case .failedPartway(let file, let statement, let count, let error):
            "migration \(file) failed at statement \(statement) of \(count) (it runs outside a transaction: "
                + "the statements before it stay applied, and the next start runs the file again): \(error.detail)"
        }
    }
}
