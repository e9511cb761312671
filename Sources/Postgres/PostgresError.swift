/// An error from PostgreSQL, libpq, the pool or column decoding.
///
/// `kind` is what callers branch on (retry a serialization failure, answer 409 to a unique
/// violation, 503 when the database is unavailable). `detail` holds the full libpq or server
/// message for logs; it may contain table names or values and is never meant for clients,
/// which get the generic `description` instead.
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// The class of failure, mapped from the SQLSTATE where the server sent one.
    public enum Kind: Sendable, Equatable {
        /// 23505: a unique or primary-key constraint rejected the row.
        case uniqueViolation
        /// 23503: a foreign-key constraint rejected the row.
        case foreignKeyViolation
        /// 23514: a check constraint rejected the row.
        case checkViolation
        /// 23502: NULL given for a NOT NULL column.
        case notNullViolation
        /// 40001: the transaction must be retried from the start.
        case serializationFailure
        /// 40P01: the transaction lost a deadlock and must be retried.
        case deadlockDetected
        /// 57014: statement_timeout expired or the query was cancelled.
        case queryCanceled
        /// 57P01, 57P02, 57P03: the server is shutting down, crashed or is still starting.
        case adminShutdown
        /// Connecting failed or the connection was lost (SQLSTATE class 08 or no SQLSTATE at all).
        case connectionFailure
        /// No pooled connection became available within the pool's acquire timeout.
        case poolTimeout
        /// A column could not be decoded as the requested Swift type (or was NULL for a non-optional).
        case decoding
        /// Class 22: a value was rejected by its type (bad text representation, out of range, NUL byte).
        case dataException
        /// Class 42 and other misuse: syntax errors, unknown tables or columns, missing privileges.
        case syntaxOrUsage
        /// Anything else.
        case other
    }

    public let kind: Kind
    /// The five-character SQLSTATE when the server sent one.
    public let sqlState: String?
    /// The violated constraint's name for integrity violations (`PG_DIAG_CONSTRAINT_NAME`).
    public let constraint: String?
    /// The full libpq or server message: for logs only, never shown to clients.
    public let detail: String

    public init(kind: Kind, sqlState: String? = nil, constraint: String? = nil, detail: String) {
        self.kind = kind
        self.sqlState = sqlState
        self.constraint = constraint
        self.detail = detail
    }

    /// Builds an error from a server SQLSTATE, choosing the kind from it.
    init(sqlState: String?, constraint: String?, detail: String, connectionLost: Bool) {
        self.init(
            kind: Self.kind(forSQLState: sqlState, connectionLost: connectionLost),
            sqlState: sqlState, constraint: constraint, detail: detail)
    }

    /// A generic text that is safe to show to anyone.
    public var description: String {
        switch kind {
        case .uniqueViolation: "unique violation"
        case .foreignKeyViolation: "foreign key violation"
        case .checkViolation: "check violation"
        case .notNullViolation: "not null violation"
        case .serializationFailure: "serialization failure"
        case .deadlockDetected: "deadlock detected"
        case .queryCanceled: "query canceled"
        case .adminShutdown, .connectionFailure: "database unavailable"
        case .poolTimeout: "database busy"
        case .decoding: "database value could not be decoded"
        case .dataException: "invalid value"
        case .syntaxOrUsage: "invalid database query"
        case .other: "database error"
        }
    }

    /// Whether the connection that produced this error must not be reused.
    var breaksConnection: Bool { kind == .connectionFailure || kind == .adminShutdown }

    /// Maps a SQLSTATE to a kind. Without a SQLSTATE, a lost connection is the usual cause.
    static func kind(forSQLState state: String?, connectionLost: Bool) -> Kind {
        guard let state, state.utf8.count == 5 else {
            return connectionLost ? .connectionFailure : .other
        }
        switch state {
        case "23505": return .uniqueViolation
        case "23503": return .foreignKeyViolation
        case "23514": return .checkViolation
        case "23502": return .notNullViolation
        case "40001": return .serializationFailure
        case "40P01": return .deadlockDetected
        case "57014": return .queryCanceled
        case "57P01", "57P02", "57P03": return .adminShutdown
        default: break
        }
        switch state.prefix(2) {
        case "08": return .connectionFailure
        case "22": return .dataException
        case "42", "26", "34", "0A": return .syntaxOrUsage
        default: return connectionLost ? .connectionFailure : .other
        }
    }
}
