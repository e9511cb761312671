import Testing
import WebAuthnCore

@Suite struct CollectedClientDataTests {
    @Test func parsesAllMembersAndIgnoresUnknown() throws {
        let json = #"{"type":"webauthn.get","challenge":"AAEC","origin":"https://a.example","crossOrigin":false,"topOrigin":"https://b.example","other_keys_can_be_added_here":"x"}"#
        let data = try CollectedClientData(from: Array(json.utf8))
        #expect(data == CollectedClientData(
            type: "webauthn.get", challenge: "AAEC", origin: "https://a.example", crossOrigin: false,
            topOrigin: "https://b.example"))
    }

    @Test(arguments: [
        #"{"challenge":"AAEC","origin":"https://a.example"}"#,
        #"{"type":"webauthn.get","origin":"https://a.example"}"#,
        #"{"type":"webauthn.get","challenge":"AAEC"}"#,
        #"{"type":1,"challenge":"AAEC","origin":"https://a.example"}"#,
        #"{"type":"webauthn.get","challenge":"AAEC","origin":"https://a.example","crossOrigin":"yes"}"#,
        #"["webauthn.get"]"#,
        "",
        "{",
    ])
    func rejectsMalformedJSON(json: String) {
        #expect(throws: WebAuthnError.malformedClientData) { try CollectedClientData(from: Array(json.utf8)) }
    }

    @Test func stripsByteOrderMark() throws {
        let json = Array(#"{"type":"webauthn.get","challenge":"AAEC","origin":"https://a.example"}"#.utf8)
        #expect(try CollectedClientData(from: [0xEF, 0xBB, 0xBF] + json).type == "webauthn.get")
    }

    @Test func rejectsInvalidUTF8() {
        let bytes: [UInt8] = Array(#"{"type":""#.utf8) + [0xFF, 0xFE] + Array(#"","challenge":"","origin":""}"#.utf8)
        #expect(throws: WebAuthnError.malformedClientData) { try CollectedClientData(from: bytes) }
    }
}
