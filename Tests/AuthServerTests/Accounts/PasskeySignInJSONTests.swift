import Foundation
import OIDC
import Testing
import WebAuthnCore

@testable import AuthServer

/// A passkey sign-in writes its two answers with `JSONBody` instead of `JSONEncoder`: the bytes
/// must be those the types' `Encodable` form gives (`HTTPResponse.json`'s settings).
@Suite("Passkey sign-in JSON bodies")
struct PasskeySignInJSONTests {
    static func encoded(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func written(_ value: JSONValue) -> String {
        String(decoding: JSONBody.encode(value), as: UTF8.self)
    }

    /// Whether every stored member of `value` holds something: a member added to the type
    /// later and left out of the test's value fails here, before `json` can forget it.
    static func everyMemberSet(_ value: Any) -> Bool {
        Mirror(reflecting: value).children.allSatisfy { child in
            let member = Mirror(reflecting: child.value)
            return !(member.displayStyle == .optional && member.children.isEmpty)
        }
    }

    @Test func requestOptionsWriteTheBytesOfTheirEncodableForm() throws {
        let every = PublicKeyCredentialRequestOptionsJSON(
            challenge: "q1w2/e3\"r4\\t5", timeout: 300_000, rpId: "login.example.com",
            allowCredentials: [
                .init(id: "AAEC", transports: ["internal", "hybrid"]), .init(id: "AwQF"),
            ],
            userVerification: .preferred, hints: [.securityKey, .clientDevice, .hybrid],
            extensions: .init(credProps: true))
        #expect(Self.everyMemberSet(every))
        #expect(Self.everyMemberSet(try #require(every.allowCredentials?.first)))
        #expect(Self.everyMemberSet(try #require(every.extensions)))

        var cases = [every, PublicKeyCredentialRequestOptionsJSON(challenge: "only")]
        var noCredProps = every
        noCredProps.extensions = .init()
        noCredProps.allowCredentials = []
        cases.append(noCredProps)
        for options in cases {
            #expect(Self.written(options.json) == (try Self.encoded(options)))
        }
    }

    @Test func aSignedInAnswerWritesTheBytesOfItsEncodableForm() throws {
        let answer = PasskeySignedInResponse(
            accountID: UUID().lowercased, sessionID: UUID().lowercased, redirectTo: "/authorize?x=1&y=%2F",
            signals: PasskeySignals(
                .init(
                    userHandle: [1, 2, 250], credentialIDs: [[9, 8, 7], [255, 254]],
                    name: "ada@example.com", displayName: "Ada \"A.\" Lovelace\u{1}"),
                rpID: "login.example.com"))
        #expect(Self.everyMemberSet(answer))
        #expect(Self.written(.object(answer.json)) == (try Self.encoded(answer)))
    }
}
