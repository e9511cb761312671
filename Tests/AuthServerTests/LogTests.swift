import Foundation
import Testing

@testable import AuthServer

@Suite struct LogTests {
    @Test func timestampIsISO8601InUTCWithMilliseconds() throws {
        let before = Date()
        let text = Log.timestamp()
        let after = Date()
        #expect(text.count == 24)
        #expect(text.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil)
        let parsed = try #require(try? Date(text, strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true)))
        #expect(parsed.timeIntervalSince(before) > -0.002)
        #expect(after.timeIntervalSince(parsed) > -0.002)
    }

    @Test func valuesWithSpacesQuotesOrNewlinesAreQuoted() {
        #expect(Log.quote("plain") == "plain")
        #expect(Log.quote("two words") == "\"two words\"")
        #expect(Log.quote("a=\"b\"\nc") == "\"a=\\\"b\\\"\\nc\"")
        #expect(Log.quote("") == "\"\"")
    }
}
