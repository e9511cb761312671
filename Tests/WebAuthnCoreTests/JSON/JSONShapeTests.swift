import Foundation
import Testing
import WebAuthnCore

@Suite struct JSONShapeTests {
    @Test func creationOptionsEncodeWithSpecNames() throws {
        let options = PublicKeyCredentialCreationOptionsJSON(
            rp: RelyingPartyEntity(id: "example.com", name: "Example"),
            user: UserEntityJSON(id: "AAEC", name: "ann", displayName: "Ann"),
            challenge: "Y2hhbGxlbmdl",
            pubKeyCredParams: [.init(alg: .es256), .init(alg: .rs256)],
            timeout: 60000,
            excludeCredentials: [.init(id: "AQ", transports: ["internal"])],
            authenticatorSelection: .init(
                authenticatorAttachment: .crossPlatform, residentKey: .required, userVerification: .preferred),
            hints: [.securityKey], attestation: AttestationConveyancePreference.none,
            extensions: .init(credProps: true))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let object = try #require(
            try JSONSerialization.jsonObject(with: encoder.encode(options)) as? [String: Any])
        #expect(object["challenge"] as? String == "Y2hhbGxlbmdl")
        #expect((object["pubKeyCredParams"] as? [[String: Any]])?.first?["alg"] as? Int == -7)
        #expect((object["pubKeyCredParams"] as? [[String: Any]])?.first?["type"] as? String == "public-key")
        let selection = try #require(object["authenticatorSelection"] as? [String: Any])
        #expect(selection["authenticatorAttachment"] as? String == "cross-platform")
        #expect(selection["residentKey"] as? String == "required")
        #expect(object["hints"] as? [String] == ["security-key"])
        #expect(object["attestation"] as? String == "none")
        #expect((object["extensions"] as? [String: Any])?["credProps"] as? Bool == true)
        #expect((object["user"] as? [String: Any])?["displayName"] as? String == "Ann")
        let decoded = try JSONDecoder().decode(PublicKeyCredentialCreationOptionsJSON.self, from: encoder.encode(options))
        #expect(decoded == options)
    }

    @Test func requestOptionsOmitAbsentMembers() throws {
        let options = PublicKeyCredentialRequestOptionsJSON(challenge: "AAEC", rpId: "example.com", userVerification: .required)
        let object = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(options)) as? [String: Any])
        #expect(Set(object.keys) == ["challenge", "rpId", "userVerification"])
    }

    @Test func decodesBrowserRegistrationResponse() throws {
        let json = #"""
            {"id":"AQID","rawId":"AQID","type":"public-key","authenticatorAttachment":"platform",
             "response":{"clientDataJSON":"e30","attestationObject":"oA","transports":["internal","hybrid"],
                         "authenticatorData":"AA","publicKey":"AA","publicKeyAlgorithm":-7},
             "clientExtensionResults":{"credProps":{"rk":true},"unknown":{}}}
            """#
        let response = try JSONDecoder().decode(RegistrationResponseJSON.self, from: Data(json.utf8))
        #expect(response.response.transports == ["internal", "hybrid"])
        #expect(response.response.publicKeyAlgorithm == -7)
        #expect(response.clientExtensionResults?.credProps?.rk == true)
        #expect(response.authenticatorAttachment == "platform")
    }

    @Test func decodesBrowserAuthenticationResponse() throws {
        let json = #"""
            {"id":"AQID","rawId":"AQID","type":"public-key",
             "response":{"clientDataJSON":"e30","authenticatorData":"AA","signature":"AA","userHandle":"AQ"},
             "clientExtensionResults":{}}
            """#
        let response = try JSONDecoder().decode(AuthenticationResponseJSON.self, from: Data(json.utf8))
        #expect(response.response.userHandle == "AQ")
        #expect(response.clientExtensionResults == AuthenticationExtensionsClientOutputsJSON())
    }

    @Test func missingRequiredMemberFailsToDecode() {
        let json = #"{"id":"AQID","rawId":"AQID","type":"public-key","response":{"clientDataJSON":"e30"}}"#
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(AuthenticationResponseJSON.self, from: Data(json.utf8))
        }
    }
}
