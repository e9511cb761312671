/// A parameter value in PostgreSQL's text format, together with its type.
///
/// Values always travel separately from the SQL text (`PQexecParams` / `PQexecPrepared`), so
/// no value can change the meaning of a statement.
public struct PostgresBinding: Sendable, Equatable {
    /// The parameter's type OID; 0 lets the server infer the type from the statement.
    public let typeOID: UInt32
    /// The value in PostgreSQL's text input format, or nil for SQL NULL.
    public let text: String?

    public init(typeOID: UInt32, text: String?) {
        self.typeOID = typeOID
        self.text = text
    }
}

/// A SQL statement whose interpolated values become bound parameters.
///
/// `"SELECT * FROM t WHERE id = \(id) AND name = \(name)"` produces the SQL
/// `SELECT * FROM t WHERE id = $1 AND name = $2` and two bindings, so values are never
/// spliced into the SQL text.
public struct PostgresQuery: ExpressibleByStringInterpolation, Sendable, CustomStringConvertible {
    public let sql: String
    public let bindings: [PostgresBinding]
    /// True for `init(unsafeSQL:)`: sent with the simple protocol, which allows several statements.
    let isUnsafeScript: Bool

    public init(stringLiteral value: String) {
        self.sql = value
        self.bindings = []
        self.isUnsafeScript = false
    }

    public init(stringInterpolation: StringInterpolation) {
        self.sql = stringInterpolation.sql
        self.bindings = stringInterpolation.bindings
        self.isUnsafeScript = false
    }

    /// SQL text used as is, possibly several statements separated by semicolons.
    ///
    /// Only for migration files and DDL written by developers: nothing derived from input may
    /// ever reach this initialiser, because it cannot bind parameters.
    public init(unsafeSQL: String) {
        self.sql = unsafeSQL
        self.bindings = []
        self.isUnsafeScript = true
    }

    /// The SQL text only: bound values are left out because they may be secrets.
    public var description: String { sql }

    public struct StringInterpolation: StringInterpolationProtocol {
        var sql: String
        var bindings: [PostgresBinding] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            sql = ""
            sql.reserveCapacity(literalCapacity + 3 * interpolationCount)
            bindings.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            sql += literal
        }

        /// Appends `$n` to the SQL and the value as parameter n.
        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value) {
            bindings.append(value.postgresBinding)
            sql += "$\(bindings.count)"
        }

        /// Appends a fixed piece of SQL written by developers (see `PostgresQuery.Fragment`).
        public mutating func appendInterpolation(_ fragment: PostgresQuery.Fragment) {
            sql += fragment.sql
        }

        /// Appends `$n` with the value, or SQL NULL for nil.
        public mutating func appendInterpolation<Value: PostgresEncodable>(_ value: Value?) {
            bindings.append(value.postgresBinding)
            sql += "$\(bindings.count)"
        }
    }
}

extension PostgresQuery {
    /// A piece of SQL text named once and interpolated as text, not as a parameter. Only
    /// developers' constants: the initialiser takes a `StaticString`, so nothing derived from
    /// input can become a fragment.
    public struct Fragment: Sendable {
        let sql: String

        public init(_ sql: StaticString) { self.sql = "\(sql)" }

        /// A FROM item that makes the statement commit without waiting for its WAL record to
        /// reach the disk (`synchronous_commit = off` for this transaction only): `UPDATE t SET …
        /// FROM \(.asynchronousCommit) WHERE …`. Only for autocommit statements whose loss in a
        /// PostgreSQL crash fails safe (counters, last-seen times, records a missing row refuses).
        public static let asynchronousCommit = Fragment(
            "(SELECT set_config('synchronous_commit', 'off', true)) AS async_commit")
    }
}
