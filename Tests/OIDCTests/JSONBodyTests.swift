import Crypto
import Foundation
import Testing

@testable import OIDC

/// `JSONBody` writes JSON by hand; it must stay byte-identical to `JSONEncoder` with
/// `.sortedKeys, .withoutEscapingSlashes`, which clients and tests have always seen.
@Suite struct JSONBodyTests {
    static func foundation<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    @Test func everyEscapeMatchesJSONEncoder() throws {
        // Every control character, the two that must be escaped, the slash that is not, and
        // non-ASCII text (kept as UTF-8).
        let controls = String((0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) })
        let strings = [
            controls, "\"quoted\" \\ back\\slash", "https://a.example/b?c=d&e=<f>", "日本語 é 🔑", "",
            "\u{7F}\u{2028}",
        ]
        for string in strings {
            let object: [String: JSONValue] = ["v": .string(string)]
            #expect(JSONBody.encode(object) == (try Self.foundation(object)), "\(string.debugDescription)")
        }
    }

    @Test func nestedValuesAndKeyOrderMatchJSONEncoder() throws {
        let object: [String: JSONValue] = [
            "sub": .string("248289761001"), "aud": .array([.string("a"), .string("b")]),
            "exp": .int(1_700_000_000),
            "neg": .int(-42), "email_verified": .bool(true), "off": .bool(false), "none": .null,
            "address": .object(["street_address": .string("1 Main St\nApt 2"), "country": .string("JP")]),
            "Zeta": .string("capital letters sort first"), "é": .string("non-ASCII keys sort by UTF-8 bytes"),
            "amr": .array([]), "empty": .object([:]), "ratio": .double(0.25), "whole": .double(2),
            "big": .double(1e21), "small": .double(-1.5e-7),
        ]
        #expect(
            String(decoding: JSONBody.encode(object), as: UTF8.self)
                == String(decoding: try Self.foundation(object), as: UTF8.self))
    }

    @Test func topLevelArraysMatchJSONEncoder() throws {
        let array: [JSONValue] = [
            .string("https://a.example/x"), .object(["b": .int(1), "a": .null]), .array([]),
        ]
        #expect(JSONBody.encode(array) == (try Self.foundation(array)))
    }

    @Test func headersMatchJSONEncoder() throws {
        let header = ["alg": "RS256", "kid": "k/1\"", "typ": "at+jwt"]
        #expect(JSONBody.encode(header) == (try Self.foundation(header)))
        #expect(JSONBody.encode([String: String]()) == Array("{}".utf8))
    }

    @Test func prettyTextIsTheSameValueLaidOutForPeople() throws {
        let value: JSONValue = .array([
            .object([
                "b": .array([.int(1), .string("x/y")]), "a": .null, "empty": .array([]), "none": .object([:]),
            ])
        ])
        let expected = """
            [
              {
                "a" : null,
                "b" : [
                  1,
                  "x/y"
                ],
                "empty" : [],
                "none" : {}
              }
            ]
            """
        #expect(String(decoding: JSONBody.encodePretty(value), as: UTF8.self) == expected)
        #expect(try JSONValue.parse(Data(JSONBody.encodePretty(value))) == value)
        #expect(String(decoding: JSONBody.encodePretty(.string("s")), as: UTF8.self) == "\"s\"")
    }

    @Test func parseKeepsBooleansIntegersAndFractionsApart() throws {
        let value = try JSONValue.parse(
            Data(#"{"t": true, "one": 1, "half": 0.5, "s": "1", "n": null, "a": [false]}"#.utf8))
        #expect(
            value
                == .object([
                    "t": .bool(true), "one": .int(1), "half": .double(0.5), "s": .string("1"), "n": .null,
                    "a": .array([.bool(false)]),
                ]))
        #expect(throws: (any Error).self) { try JSONValue.parse(Data("{not json".utf8)) }
    }

    @Test func keysWriteAsJSONEncoderWritesThem() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let rsa = try JWK(
            privateKey: .rsa(try RSA.Signing.PrivateKey(keySize: 2048)), keyID: "k1", algorithm: .RS256)
        let ec = try JWK(privateKey: .p256(try P256.Signing.PrivateKey()), keyID: "k2", algorithm: .ES256)
        for key in [rsa, rsa.publicJWK, ec, ec.publicJWK, Vectors.okpJWK] {
            #expect(JSONBody.encode(key.json) == Array(try encoder.encode(key)))
        }
    }
}
