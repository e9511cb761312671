/// The column names of one result, shared by all its rows.
final class PostgresColumns: Sendable {
    let names: [String]
    let indexByName: [String: Int]

    init(names: [String]) {
        self.names = names
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() where index[name] == nil {
            index[name] = position
        }
        self.indexByName = index
    }
}

/// One result row, copied out of the `PGresult` as text so it can outlive it and cross threads.
public struct PostgresRow: Sendable {
    let columns: PostgresColumns
    let values: [String?]

    /// The column names in result order.
    public var columnNames: [String] { columns.names }

    /// Decodes a column by name. NULL decodes as nil for optionals and throws `.decoding` otherwise.
    public func decode<T: PostgresDecodable>(_ column: String, as type: T.Type = T.self) throws -> T {
        try decode(index(of: column), column: column, as: type)
    }

    /// Decodes a column by its zero-based position.
    public func decode<T: PostgresDecodable>(_ index: Int, as type: T.Type = T.self) throws -> T {
        guard values.indices.contains(index) else {
            throw PostgresError(
                kind: .decoding, detail: "column index \(index) out of range 0..<\(values.count)")
        }
        return try decode(index, column: columns.names[index], as: type)
    }

    /// Whether the named column is SQL NULL.
    public func isNull(_ column: String) throws -> Bool {
        values[try index(of: column)] == nil
    }

    private func index(of column: String) throws -> Int {
        guard let index = columns.indexByName[column] else {
            throw PostgresError(kind: .decoding, detail: "no column named \"\(column)\" in the result")
        }
        return index
    }

    private func decode<T: PostgresDecodable>(_ index: Int, column: String, as type: T.Type) throws -> T {
        guard let text = values[index] else {
            if let null = T.postgresNull { return null }
            throw PostgresError(kind: .decoding, detail: "column \"\(column)\" is NULL, expected \(T.self)")
        }
        // The value itself stays out of the message: it may be a secret.
        guard let value = T(postgresText: text) else {
            throw PostgresError(
                kind: .decoding, detail: "column \"\(column)\" cannot be decoded as \(T.self)")
        }
        return value
    }
}

/// All rows of a result, plus the number of rows the statement affected.
public struct PostgresRows: Sendable, RandomAccessCollection {
    public let rows: [PostgresRow]
    /// Rows inserted, updated, deleted, selected or copied (`PQcmdTuples`); 0 for other commands.
    public let affectedRows: Int

    public init(rows: [PostgresRow], affectedRows: Int) {
        self.rows = rows
        self.affectedRows = affectedRows
    }

    public var startIndex: Int { rows.startIndex }
    public var endIndex: Int { rows.endIndex }
    public subscript(position: Int) -> PostgresRow { rows[position] }
}
