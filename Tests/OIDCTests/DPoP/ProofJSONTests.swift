import Crypto
import Foundation
import Testing
@testable import OIDC

@Suite struct ProofJSONTests {
    func parse(_ text: String) -> [String: JSONValue]? { ProofJSON.object(Array(text.utf8)) }

    @Test func readsWhatJSONSerializationReads() throws {
        let text =
            #" { "a" : "x\"y\\z\/\u00e9\ud83d\ude00\n", "b": 1800000000, "c": -2.5e1, "d": [true, false, null, {}], "e": {"f": []} } "#
        let parsed = try #require(parse(text))
        #expect(parsed["a"] == .string("x\"y\\z/é😀\n"))
        #expect(parsed["b"] == .int(1_800_000_000))
        #expect(parsed["c"] == .double(-25))
        #expect(parsed["d"] == .array([.bool(true), .bool(false), .null, .object([:])]))
        #expect(parsed["e"] == .object(["f": .array([])]))
        #expect(parse("{}") == [:])
    }

    @Test(arguments: [
        "", "[]", "\"x\"", "{", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{\"a\":1} x", "{\"a\":1}{}",
        "{\"a\":1,\"a\":2}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":+1}", "{\"a\":1e}",
        "{\"a\":\"\u{01}\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}", "{\"a\":tru}",
        "{'a':1}", "{\"a\":[1,]}", "{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{}}}}}}",
    ])
    func refuses(_ text: String) {
        #expect(parse(text) == nil)
    }

    @Test func refusesInvalidUTF8() {
        #expect(ProofJSON.object([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]) == nil)
    }
}

@Suite struct DPoPKeyCacheTests {
    @Test func aCachedHeaderGivesTheSameProofAndARefusedOneIsNotKept() throws {
        let cache = DPoPKeyCache(capacity: 2)
        let request = DPoPRequest(method: "POST", uri: Fixture.tokenEndpoint, keys: cache)
        let builder = try ProofBuilder.es256()
        let first = try DPoPProofVerifier.verify(try builder.compact(), request: request, now: Fixture.now)
        let second = try DPoPProofVerifier.verify(
            try builder.with("jti", .string("proof-2")).compact(), request: request, now: Fixture.now)
        #expect(cache.count == 1)
        #expect(first.thumbprint == second.thumbprint)
        // A cached header does not vouch for another key's signature.
        var forged = try ProofBuilder.es256()
        forged.header = builder.header
        #expect(throws: DPoPError.signatureInvalid) {
            try DPoPProofVerifier.verify(try forged.compact(), request: request, now: Fixture.now)
        }
        // A refused header is not kept.
        #expect(throws: DPoPError.wrongType) {
            try DPoPProofVerifier.verify(
                try builder.withHeader("typ", .string("JWT")).compact(), request: request, now: Fixture.now)
        }
        #expect(cache.count == 1)
        // Past its capacity the cache starts again.
        for _ in 0..<2 {
            _ = try DPoPProofVerifier.verify(
                try ProofBuilder.es256().compact(), request: request, now: Fixture.now)
        }
        #expect(cache.count == 1)
    }
}
