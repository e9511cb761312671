import Foundation
import Testing

@testable import Postgres

@Suite struct PostgresCodingTests {
    @Test func everySupportedTypeRoundTrips() throws {
        let connection = try TestDatabase.connection()
        try connection.query(
            """
            CREATE TABLE everything (
                s text, i bigint, i32 integer, i64 bigint, b boolean, d double precision,
                bytes bytea, data bytea, id uuid, at timestamptz, tags text[], numbers bigint[])
            """)
        let text = "日本語 ✓ emoji 🔑 \"quoted\" back\\slash"
        let bytes: [UInt8] = [0, 1, 0, 255, 0x5c, 0x78, 0]
        let data = Data([0, 0, 42, 0])
        let id = UUID()
        let at = Date(timeIntervalSince1970: 1_764_425_118.123456)
        let tags = [
            "plain", "with space", "with,comma", "with \"quote\"", "back\\slash", "NULL", "", "{braces}",
            "ユーザー",
        ]
        let numbers = [1, -2, Int.max]
        try connection.execute(
            """
            INSERT INTO everything VALUES (\(text), \(Int.min), \(Int32.max), \(Int64(-7)), \(true), \(-1.5e-300),
                \(bytes), \(data), \(id), \(at), \(tags), \(numbers))
            """)
        let row = try #require(try connection.query("SELECT * FROM everything").first)
        #expect(try row.decode("s", as: String.self) == text)
        #expect(try row.decode("i", as: Int.self) == Int.min)
        #expect(try row.decode("i32", as: Int32.self) == Int32.max)
        #expect(try row.decode("i64", as: Int64.self) == -7)
        #expect(try row.decode("b", as: Bool.self) == true)
        #expect(try row.decode("d", as: Double.self) == -1.5e-300)
        #expect(try row.decode("bytes", as: [UInt8].self) == bytes)
        #expect(try row.decode("data", as: Data.self) == data)
        #expect(try row.decode("id", as: UUID.self) == id)
        let decodedAt = try row.decode("at", as: Date.self)
        #expect(abs(decodedAt.timeIntervalSince1970 - at.timeIntervalSince1970) < 0.000_001)
        #expect(try row.decode("tags", as: [String].self) == tags)
        #expect(try row.decode("numbers", as: [Int].self) == numbers)
        #expect(try row.decode(0, as: String.self) == text)
    }

    @Test func uuidArraysAndSpecialDoublesRoundTrip() throws {
        let connection = try TestDatabase.connection()
        let ids = [UUID(), UUID()]
        let row = try #require(
            try connection.query(
                """
                SELECT \(ids) AS ids, \(Double.infinity) AS inf, \(-Double.infinity) AS ninf, \(Double.nan) AS nan,
                    \([UUID]()) AS none
                """
            ).first)
        #expect(try row.decode("ids", as: [UUID].self) == ids)
        #expect(try row.decode("none", as: [UUID].self) == [])
        #expect(try row.decode("inf", as: Double.self) == .infinity)
        #expect(try row.decode("ninf", as: Double.self) == -.infinity)
        #expect(try row.decode("nan", as: Double.self).isNaN)
    }

    @Test func nullsDecodeAsNilOnlyIntoOptionals() throws {
        let connection = try TestDatabase.connection()
        try connection.query("CREATE TABLE n (s text, i bigint, b bytea, at timestamptz, tags text[])")
        try connection.execute(
            """
            INSERT INTO n VALUES (\(nil as String?), \(nil as Int?), \(nil as [UInt8]?), \(nil as Date?),
                \(nil as [String]?))
            """)
        let row = try #require(try connection.query("SELECT * FROM n").first)
        #expect(try row.decode("s", as: String?.self) == nil)
        #expect(try row.decode("i", as: Int?.self) == nil)
        #expect(try row.decode("b", as: [UInt8]?.self) == nil)
        #expect(try row.decode("at", as: Date?.self) == nil)
        #expect(try row.decode("tags", as: [String]?.self) == nil)
        #expect(try row.isNull("s"))
        #expect(postgresErrorKind { _ = try row.decode("s", as: String.self) } == .decoding)
        #expect(postgresErrorKind { _ = try row.decode("i", as: Int.self) } == .decoding)

        try connection.execute("INSERT INTO n (s, i) VALUES (\(Optional("x")), \(Optional(5)))")
        let second = try #require(try connection.query("SELECT s, i FROM n WHERE s IS NOT NULL").first)
        #expect(try second.decode("s", as: String?.self) == "x")
        #expect(try second.decode("i", as: Int?.self) == 5)
        #expect(try !second.isNull("i"))
    }

    @Test func wrongTypesAndMissingColumnsThrowDecodingErrors() throws {
        let connection = try TestDatabase.connection()
        let row = try #require(
            try connection.query(
                "SELECT 'abc'::text AS word, 3000000000::bigint AS big, ARRAY[NULL]::text[] AS nulls"
            )
            .first)
        #expect(postgresErrorKind { _ = try row.decode("word", as: Int.self) } == .decoding)
        #expect(postgresErrorKind { _ = try row.decode("word", as: UUID.self) } == .decoding)
        #expect(postgresErrorKind { _ = try row.decode("word", as: Date.self) } == .decoding)
        #expect(postgresErrorKind { _ = try row.decode("word", as: [UInt8].self) } == .decoding)
        #expect(postgresErrorKind { _ = try row.decode("big", as: Int32.self) } == .decoding)
        #expect(postgresErrorKind { _ = try row.decode("nulls", as: [String].self) } == .decoding)
        #expect(postgresErrorKind { _ = try row.decode("missing", as: String.self) } == .decoding)
        #expect(postgresErrorKind { _ = try row.decode(7, as: String.self) } == .decoding)
        #expect(postgresErrorKind { _ = try row.isNull("missing") } == .decoding)
    }

    @Test func interpolationBindsParametersInsteadOfSplicing() throws {
        let name = "x'); DROP TABLE users; --"
        let id = 7
        let query: PostgresQuery = "SELECT * FROM users WHERE id = \(id) AND name = \(name)"
        #expect(query.sql == "SELECT * FROM users WHERE id = $1 AND name = $2")
        #expect(
            query.bindings == [
                PostgresBinding(typeOID: 20, text: "7"), PostgresBinding(typeOID: 0, text: name),
            ])

        let connection = try TestDatabase.connection()
        try connection.query("CREATE TABLE users (id bigint, name text)")
        try connection.execute("INSERT INTO users VALUES (\(id), \(name))")
        let rows = try connection.query("SELECT name FROM users WHERE name = \(name)")
        #expect(rows.count == 1)
        #expect(try rows.first?.decode("name", as: String.self) == name)
        #expect(try connection.query("SELECT count(*) AS n FROM users").first?.decode("n", as: Int.self) == 1)
    }

    @Test func nulCharactersAreRejectedNotTruncated() throws {
        let connection = try TestDatabase.connection()
        #expect(postgresErrorKind { try connection.query("SELECT \("a\u{0}b") AS v") } == .dataException)
        #expect(connection.isUsable)
    }

    @Test func affectedRowsAndCollectionAccess() throws {
        let connection = try TestDatabase.connection()
        try connection.query("CREATE TABLE t (v integer)")
        #expect(try connection.execute("INSERT INTO t SELECT generate_series(1, 5)") == 5)
        #expect(try connection.execute("UPDATE t SET v = v + 1 WHERE v > \(Int32(3))") == 2)
        let rows = try connection.query("SELECT v FROM t ORDER BY v")
        #expect(rows.count == 5)
        #expect(rows.affectedRows == 5)
        #expect(try rows.map { try $0.decode("v", as: Int.self) } == [1, 2, 3, 5, 6])
        #expect(try rows[1].decode(0, as: Int32.self) == 2)
        #expect(rows.first?.columnNames == ["v"])
    }
}

@Suite struct PostgresTextFormatTests {
    @Test func arrayLiteralsParseWithQuotingEscapesAndNull() {
        #expect(PostgresTextFormat.arrayElements("{}")! == [])
        #expect(
            PostgresTextFormat.arrayElements(#"{a,"b c","d\"e",NULL,"NULL",f\,g}"#)! == [
                "a", "b c", "d\"e", nil, "NULL", "f,g",
            ])
        for malformed in ["", "{", "a,b", "{{1,2},{3,4}}", "[0:1]={a,b}", #"{"open}"#, "{a,}", "{,a}"] {
            #expect(PostgresTextFormat.arrayElements(malformed) == nil, "\(malformed)")
        }
    }

    @Test func timestampsFormatAndParse() throws {
        let date = Date(timeIntervalSince1970: 0.25)
        #expect(PostgresTextFormat.timestamp(date) == "1970-01-01 00:00:00.250000+00")
        #expect(
            PostgresTextFormat.timestamp(Date(timeIntervalSince1970: -1)) == "1969-12-31 23:59:59.000000+00")
        let parsed = try #require(PostgresTextFormat.date(fromTimestamp: "2026-11-29 14:25:18.5+05:30"))
        #expect(parsed.timeIntervalSince1970 == 1_795_942_518.5)
        #expect(PostgresTextFormat.date(fromTimestamp: "2026-11-29")?.timeIntervalSince1970 == 1_795_910_400)
        let bc = try #require(PostgresTextFormat.date(fromTimestamp: "0001-01-01 00:00:00+00 BC"))
        #expect(PostgresTextFormat.timestamp(bc) == "0001-01-01 00:00:00.000000+00 BC")
        for malformed in [
            "", "2026-13-01", "2026-11-29 25:00", "2026-11-29 14:25:18+", "yesterday", "2026-11-29x",
        ] {
            #expect(PostgresTextFormat.date(fromTimestamp: malformed) == nil, "\(malformed)")
        }
    }

    @Test func byteaHexRejectsMalformedText() {
        #expect(PostgresTextFormat.bytes(fromBytea: #"\x00ff"#) == [0, 255])
        #expect(PostgresTextFormat.bytes(fromBytea: #"\x0"#) == nil)
        #expect(PostgresTextFormat.bytes(fromBytea: #"\xzz"#) == nil)
        #expect(PostgresTextFormat.bytes(fromBytea: "00ff") == nil)
    }

    @Test func uuidsWriteAndParseAsFoundationDoes() {
        for _ in 0..<1_000 {
            let id = UUID()
            #expect(PostgresTextFormat.uuid(id) == id.uuidString.lowercased())
            #expect(PostgresTextFormat.uuid(fromText: id.uuidString) == id)
            #expect(PostgresTextFormat.uuid(fromText: id.uuidString.lowercased()) == id)
        }
        let edges = ["00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff"]
        for text in edges {
            #expect(PostgresTextFormat.uuid(fromText: text).map(PostgresTextFormat.uuid) == text)
        }
        for malformed in [
            "", "0190f3c2-7d1e-7c4b-9a55-3f6e8d2b1a0", "0190f3c2-7d1e-7c4b-9a55-3f6e8d2b1a077",
            "0190f3c27d1e7c4b9a553f6e8d2b1a07", "0190f3c2-7d1e-7c4b-9a553-f6e8d2b1a07",
            "0190f3c2x7d1e-7c4b-9a55-3f6e8d2b1a07", "0190f3g2-7d1e-7c4b-9a55-3f6e8d2b1a07",
            "{0190f3c2-7d1e-7c4b-9a55-3f6e8d2b1a}", "0190f3c2-7d1e-7c4b-9a55-3f6e8d2b1é",
        ] {
            #expect(PostgresTextFormat.uuid(fromText: malformed) == nil, "\(malformed)")
            #expect(UUID(uuidString: malformed) == nil, "\(malformed)")
        }
    }
}
