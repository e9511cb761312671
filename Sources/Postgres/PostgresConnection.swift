import CLibPQ
import Foundation

/// One libpq connection. It owns the `PGconn` and finishes it in `deinit`.
///
/// Not `Sendable`: a connection serves one thread at a time. Share a `PostgresPool` instead.
/// Every session is set to UTC, ISO dates, hex bytea and UTF-8 so that text decoding is exact.
public final class PostgresConnection {
    private var handle: OpaquePointer?
    private var isBroken = false
    /// Prepared statement names keyed by SQL text and parameter types.
    private var preparedStatements: [PreparedKey: String] = [:]
    private var preparedCount = 0
    /// Statements of the open transaction not sent yet (`queue(_:)`): they go out with the next
    /// statement whose answer is awaited, in one round trip.
    private var queued: [PostgresQuery] = []
    /// `withTransaction` opened a transaction and nothing has been sent for it yet: its
    /// `BEGIN` is the first of `queued`.
    private(set) var beginIsQueued = false

    /// At most this many statements are kept prepared per connection; later ones run unprepared.
    /// The application's statements are fixed strings, so the bound only matters for ad-hoc SQL.
    public static let maximumPreparedStatements = 256

    fileprivate struct PreparedKey: Hashable {
        let sql: String
        let types: [UInt32]
    }

    /// Connects and configures the session.
    ///
    /// - Parameters:
    ///   - url: a libpq connection URI or `key=value` string (`postgresql://user@127.0.0.1:5432/db`).
    ///   - statementTimeout: applied as `statement_timeout` for the whole session; nil keeps the
    ///     server's setting, `.zero` disables it.
    /// - Throws: `PostgresError` of kind `.connectionFailure` when the server cannot be reached
    ///   or refuses the login.
    public init(url: String, statementTimeout: Duration? = nil) throws {
        // Defaults come before the URL so the URL may override them; the encoding comes after
        // because text decoding relies on it.
        let keywords = ["connect_timeout", "dbname", "client_encoding"]
        let values = ["10", url, "UTF8"]
        let connection = withCStrings(keywords + [nil]) { keywordPointers in
            withCStrings(values + [nil]) { valuePointers in
                PQconnectdbParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let connection else {
            throw PostgresError(kind: .connectionFailure, detail: "libpq could not allocate a connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.message(PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError(kind: .connectionFailure, detail: "connect failed: \(message)")
        }
        // Notices (e.g. "relation already exists, skipping") would otherwise go to stderr.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection

        var settings = "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, MDY'; SET bytea_output = 'hex'; "
        if let statementTimeout {
            settings += "SET statement_timeout = \(Self.milliseconds(statementTimeout));"
        }
        try query(PostgresQuery(unsafeSQL: settings))
    }

    deinit {
        if let handle { PQfinish(handle) }
    }

    /// Closes the connection now instead of at deinit.
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
    }

    /// Whether the connection is open and has not failed with a connection-level error.
    public var isUsable: Bool {
        guard let handle, !isBroken else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// The server process serving this connection (for `pg_terminate_backend` and logs).
    public var backendPID: Int32 {
        guard let handle else { return 0 }
        return PQbackendPID(handle)
    }

    /// Runs a statement with its parameters bound, returning all rows.
    ///
    /// A statement with parameters is prepared on this connection the first time it runs (by SQL
    /// text and parameter types) and only executed afterwards: the server parses and plans it
    /// once per connection instead of once per call. Statements without parameters (`BEGIN`,
    /// `COMMIT`, scripts) are sent as they are.
    @discardableResult
    public func query(_ q: PostgresQuery) throws -> PostgresRows {
        try run(q, mayRetry: true)
    }

    /// Runs `q` inside the open transaction without waiting for its answer: it is sent with
    /// the next statement whose answer is awaited (or with the `COMMIT`), in one round trip
    /// (libpq's pipeline mode), and its error, if any (a NUL in a value included), is thrown by
    /// that call instead; the transaction is then aborted as after any failed statement. For
    /// writes whose outcome the caller does not read. Outside a transaction `q` runs at once.
    public func queue(_ q: PostgresQuery) throws {
        guard isInTransaction, !q.isUnsafeScript else {
            try query(q)
            return
        }
        queued.append(q)
    }

    private func run(_ q: PostgresQuery, mayRetry: Bool) throws -> PostgresRows {
        if !queued.isEmpty {
            // A script cannot join a pipeline: what is queued goes first, on its own.
            guard q.isUnsafeScript else { return try runPipeline(queued + [q]) }
            try runPipeline(queued)
        }
        let connection = try openHandle()
        let types = q.bindings.map(\.typeOID)
        let key = PreparedKey(sql: q.sql, types: types)
        let prepared = q.isUnsafeScript ? nil : preparedStatements[key]
        // A prepared statement's SQL was checked when it was prepared; its values still are.
        try checkForNUL(q, sqlChecked: prepared != nil)
        if q.isUnsafeScript { return try consume(PQexec(connection, q.sql)) }
        let name: String
        if let existing = prepared {
            name = existing
        } else if !q.bindings.isEmpty, preparedStatements.count < Self.maximumPreparedStatements {
            preparedCount += 1
            name = "s\(preparedCount)"
            try consume(PQprepare(connection, name, q.sql, Int32(types.count), types))
            preparedStatements[key] = name
        } else {
            let result = withCStrings(q.bindings.map(\.text)) { values in
                PQexecParams(connection, q.sql, Int32(q.bindings.count), types, values, nil, nil, 0)
            }
            return try consume(result)
        }
        let result = withCStrings(q.bindings.map(\.text)) { values in
            PQexecPrepared(connection, name, Int32(q.bindings.count), values, nil, nil, 0)
        }
        do {
            return try consume(result)
        } catch let error as PostgresError where error.sqlState == "26000" || error.sqlState == "0A000" {
            // The server no longer knows the statement (DISCARD ALL), or a table it reads changed
            // shape under it (a migration): forget it. Outside a transaction the failed run had
            // no effect, so it runs again, prepared afresh; inside one, the transaction is
            // aborted and the error stands.
            preparedStatements[key] = nil
            guard mayRetry, transactionStatus == PQTRANS_IDLE else { throw error }
            return try run(q, mayRetry: false)
        }
    }

    /// Runs a statement and returns the number of rows it affected.
    @discardableResult
    public func execute(_ q: PostgresQuery) throws -> Int {
        try query(q).affectedRows
    }

    // MARK: - State used by transactions and the pool

    var transactionStatus: PGTransactionStatusType {
        guard let handle else { return PQTRANS_UNKNOWN }
        return PQtransactionStatus(handle)
    }

    /// True between `BEGIN` and its `COMMIT` or `ROLLBACK` (a `BEGIN` not sent yet included).
    public var isInTransaction: Bool { beginIsQueued || transactionStatus != PQTRANS_IDLE }

    /// The transaction `withTransaction` opens: its `BEGIN` waits to be sent with the first
    /// statement.
    func queueBegin(_ isolation: IsolationLevel) {
        let sql = "BEGIN ISOLATION LEVEL " + isolation.sql
        queued = [PostgresQuery(stringLiteral: sql)]
        beginIsQueued = true
    }

    var queuedCount: Int { queued.count }

    /// Forgets what was queued and not sent; true when that was the whole transaction (so
    /// there is nothing to commit or roll back).
    func dropQueued() -> Bool {
        let nothingSent = beginIsQueued
        queued = []
        beginIsQueued = false
        return nothingSent
    }

    /// Reads whatever the server sent while the connection sat idle, so that a connection the
    /// server closed (restart, termination) is noticed before it is handed out again.
    func checkAlive() -> Bool {
        guard isUsable, let handle else { return false }
        for _ in 0..<2 where PQconsumeInput(handle) == 0 {
            isBroken = true
        }
        return isUsable
    }

    // MARK: - Internals

    private func openHandle() throws -> OpaquePointer {
        guard let handle else {
            throw PostgresError(kind: .connectionFailure, detail: "connection is closed")
        }
        return handle
    }

    /// PostgreSQL text cannot hold NUL and libpq would silently truncate at one.
    private func checkForNUL(_ q: PostgresQuery, sqlChecked: Bool = false) throws {
        if !sqlChecked, q.sql.utf8.contains(0) {
            throw PostgresError(kind: .syntaxOrUsage, detail: "SQL text contains a NUL character")
        }
        for (index, binding) in q.bindings.enumerated() where binding.text?.utf8.contains(0) == true {
            throw PostgresError(
                kind: .dataException, detail: "parameter $\(index + 1) contains a NUL character")
        }
    }

    @discardableResult
    private func consume(_ result: OpaquePointer?) throws -> PostgresRows {
        guard let result else { throw failure(nil) }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY else {
            if status != PGRES_FATAL_ERROR && status != PGRES_NONFATAL_ERROR {
                // COPY and other protocol states this wrapper does not drive: the connection
                // is out of step and cannot be reused.
                isBroken = true
            }
            throw failure(result)
        }
        return rows(of: result)
    }

    private func rows(of result: OpaquePointer) -> PostgresRows {
        let columnCount = PQnfields(result)
        let rowCount = PQntuples(result)
        // Names and values are taken exactly as sent: a value's own spaces and newlines are data.
        let columns = PostgresColumns(names: (0..<columnCount).map { String(cString: PQfname(result, $0)) })
        var rows: [PostgresRow] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            let values: [String?] = (0..<columnCount).map { column in
                PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
            }
            rows.append(PostgresRow(columns: columns, values: values))
        }
        let affected = Int(String(cString: PQcmdTuples(result))) ?? 0
        return PostgresRows(rows: rows, affectedRows: affected)
    }

    /// Sends `statements` in one pipeline (one round trip) and returns the last one's rows. The
    /// first error among them is thrown; PostgreSQL skips the statements after it. Only used
    /// inside a transaction, so a failed statement leaves it aborted and nothing is retried.
    @discardableResult
    private func runPipeline(_ statements: [PostgresQuery]) throws -> PostgresRows {
        try readPipeline(sendPipeline(statements))
    }

    /// A pipeline sent by `sendPipeline` whose results `readPipeline` has yet to read; the
    /// connection serves nothing else in between.
    struct SentPipeline {
        fileprivate enum Step {
            case prepare(PreparedKey, name: String)
            case execute(PreparedKey?)
        }
        fileprivate let steps: [Step]
    }

    /// Sends the transaction's queued statements and its `COMMIT` in one pipeline, without
    /// reading the answer (`readPipeline`).
    func sendCommit() throws -> SentPipeline {
        try sendPipeline(queued + ["COMMIT"])
    }

    /// Sends `statements` in one pipeline and flushes them to the server.
    func sendPipeline(_ statements: [PostgresQuery]) throws -> SentPipeline {
        typealias Step = SentPipeline.Step
        // Checked before anything is sent: a refused value leaves the queue as it was.
        for q in statements { try checkForNUL(q) }
        _ = dropQueued()
        let connection = try openHandle()
        guard PQenterPipelineMode(connection) == 1 else { throw failure(nil) }
        var steps: [Step] = []
        var preparing: [PreparedKey: String] = [:]
        for q in statements {
            let types = q.bindings.map(\.typeOID)
            let key = PreparedKey(sql: q.sql, types: types)
            var name = preparedStatements[key] ?? preparing[key]
            if name == nil, !q.bindings.isEmpty,
                preparedStatements.count + preparing.count < Self.maximumPreparedStatements
            {
                preparedCount += 1
                let new = "s\(preparedCount)"
                guard PQsendPrepare(connection, new, q.sql, Int32(types.count), types) == 1 else {
                    isBroken = true
                    throw failure(nil)
                }
                steps.append(.prepare(key, name: new))
                preparing[key] = new
                name = new
            }
            let sent = withCStrings(q.bindings.map(\.text)) { values in
                if let name {
                    PQsendQueryPrepared(connection, name, Int32(values.count), values, nil, nil, 0)
                } else {
                    PQsendQueryParams(connection, q.sql, Int32(values.count), types, values, nil, nil, 0)
                }
            }
            guard sent == 1 else {
                isBroken = true
                throw failure(nil)
            }
            steps.append(.execute(name == nil ? nil : key))
        }
        // Sends the sync and flushes what libpq buffered.
        guard PQpipelineSync(connection) == 1 else {
            isBroken = true
            throw failure(nil)
        }
        return SentPipeline(steps: steps)
    }

    /// Reads a sent pipeline's results and returns the last statement's rows; the first error
    /// among them is thrown (PostgreSQL skipped the statements after it).
    @discardableResult
    func readPipeline(_ sent: SentPipeline) throws -> PostgresRows {
        let connection = try openHandle()
        var firstError: PostgresError?
        var last = PostgresRows(rows: [], affectedRows: 0)
        for step in sent.steps {
            guard let result = PQgetResult(connection) else {
                isBroken = true
                throw firstError ?? pipelineLost()
            }
            switch PQresultStatus(result) {
            case PGRES_PIPELINE_ABORTED:
                break
            case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
                switch step {
                case .prepare(let key, let name): preparedStatements[key] = name
                case .execute: last = rows(of: result)
                }
            case PGRES_FATAL_ERROR, PGRES_NONFATAL_ERROR:
                let error = failure(result)
                // As in `run`: a statement the server forgot is prepared again next time.
                if case .execute(let key?) = step, error.sqlState == "26000" || error.sqlState == "0A000" {
                    preparedStatements[key] = nil
                }
                firstError = firstError ?? error
            default:
                isBroken = true
                firstError = firstError ?? failure(result)
            }
            PQclear(result)
            // Each statement's results end with a null result.
            while let extra = PQgetResult(connection) { PQclear(extra) }
        }
        guard let sync = PQgetResult(connection) else {
            isBroken = true
            throw firstError ?? pipelineLost()
        }
        let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        PQclear(sync)
        guard synced, PQexitPipelineMode(connection) == 1 else {
            isBroken = true
            throw firstError ?? pipelineLost()
        }
        if let firstError { throw firstError }
        return last
    }

    /// A pipeline whose results stopped before each statement had one, or came out of order.
    /// libpq gives no result for a statement when the server ended the session between two of
    /// them: its `FATAL` ("terminating connection due to administrator command") then reaches
    /// only `PQerrorMessage`, possibly before libpq has read the close, so the connection still
    /// looks open. Either way the exchange is out of step: the callers mark the connection broken,
    /// and the caller sees the database as unavailable rather than a statement as failed.
    private func pipelineLost() -> PostgresError {
        let message = handle.map { Self.message(PQerrorMessage($0)) } ?? ""
        let detail = message.isEmpty ? "the pipeline ended without a result" : message
        return PostgresError(kind: .connectionFailure, detail: detail)
    }

    private func failure(_ result: OpaquePointer?) -> PostgresError {
        var sqlState: String?
        var constraint: String?
        var message = ""
        if let result {
            sqlState = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            constraint = PQresultErrorField(result, Int32(UInt8(ascii: "n"))).map { String(cString: $0) }
            message = Self.message(PQresultErrorMessage(result))
        }
        if message.isEmpty, let handle { message = Self.message(PQerrorMessage(handle)) }
        let lost = handle.map { PQstatus($0) != CONNECTION_OK } ?? true
        let error = PostgresError(
            sqlState: sqlState, constraint: constraint, detail: message, connectionLost: lost)
        if error.breaksConnection || lost { isBroken = true }
        return error
    }

    private static func message(_ pointer: UnsafePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        return String(cString: pointer).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func message(_ pointer: UnsafeMutablePointer<CChar>?) -> String {
        message(pointer.map { UnsafePointer($0) })
    }

    /// `duration` in whole milliseconds, as `statement_timeout` takes it.
    public static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}

/// A connection must not be shared between threads: libpq allows only one command in flight.
@available(*, unavailable)
extension PostgresConnection: Sendable {}

/// Calls `body` with C copies of `strings` (nil stays a null pointer), freed afterwards.
func withCStrings<Result>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) throws -> Result) rethrows
    -> Result
{
    let copies = strings.map { $0.flatMap { strdup($0) } }
    defer { copies.forEach { free($0) } }
    return try body(copies.map { $0.map { UnsafePointer($0) } })
}
