// fuzz-modules: Postgres
// The decoders for PostgreSQL text-format values (bytea hex, one-dimensional arrays,
// timestamps). Anything they accept must survive a round trip through the matching encoder.
@testable import Postgres
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)

    if let bytes = PostgresTextFormat.bytes(fromBytea: text) {
        guard PostgresTextFormat.bytes(fromBytea: PostgresTextFormat.byteaHex(bytes)) == bytes else {
            fatalError("bytea round trip failed")
        }
    }

    if let elements = PostgresTextFormat.arrayElements(text) {
        let values = elements.compactMap { $0 }
        guard PostgresTextFormat.arrayElements(PostgresTextFormat.arrayLiteral(values)) == values else {
            fatalError("array round trip failed")
        }
    }
    // Arbitrary strings as elements of an encoded array come back unchanged.
    let pieces = text.split(separator: "\u{1}", omittingEmptySubsequences: false).map(String.init)
    guard PostgresTextFormat.arrayElements(PostgresTextFormat.arrayLiteral(pieces)) == pieces else {
        fatalError("array literal of \(pieces.count) strings did not decode to the same strings")
    }

    // The encoder writes `infinity` beyond PostgreSQL's timestamp range (about 294,000 years,
    // while `date` values reach 5,874,897 AD), so only dates inside it must come back.
    if let date = PostgresTextFormat.date(fromTimestamp: text), abs(date.timeIntervalSince1970) < 9.2e12 {
        let again = PostgresTextFormat.date(fromTimestamp: PostgresTextFormat.timestamp(date))
        guard let again, abs(again.timeIntervalSince1970 - date.timeIntervalSince1970) < 1e-3 * max(1, abs(date.timeIntervalSince1970)) else {
            fatalError("timestamp round trip failed")
        }
    }
    return 0
}
