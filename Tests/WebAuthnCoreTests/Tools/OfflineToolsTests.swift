import Crypto
import Foundation
import Testing
import WebAuthnCore

/// The offline verification and inspection tools over captured responses.
@Suite struct OfflineToolsTests {
    func object(_ json: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    func bytes(_ object: [String: Any]) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: object))
    }

    func registrationDocument(_ name: String, challenge: String? = nil) throws -> [String: Any] {
        let vector = try #require(AttestationVectors.all.first { $0.name == name })
        var document: [String: Any] = [
            "ceremony": "registration",
            "response": try object(vector.json),
            "expected_challenge": challenge ?? vector.challenge,
            "origins": [vector.origin],
            "rp_id": vector.rpID,
            "now": ISO8601DateFormatter().string(from: vector.now),
        ]
        if !vector.anchors.isEmpty { document["trust_anchors"] = vector.anchors }
        return document
    }

    func authenticationDocument(json: String? = nil) throws -> [String: Any] {
        let assertion = try #require(CapturedResponseTests.assertions.first { $0.name == "ES256" })
        return [
            "ceremony": "authentication",
            "response": try object(json ?? assertion.json),
            "expected_challenge": assertion.challenge,
            "origins": [CapturedResponseTests.origin],
            "rp_id": CapturedResponseTests.rpID,
            "credential_public_key": assertion.publicKey,
            "sign_count": Int(assertion.storedSignCount),
        ]
    }

    func run(_ document: [String: Any]) throws -> (Int32, [String: Any]) {
        let (code, output) = OfflineVerification.run(document: try bytes(document))
        return (code, try object(output))
    }

    @Test func verifiesCapturedRegistration() throws {
        let (code, output) = try run(registrationDocument("packed-yubikey"))
        #expect(code == 0)
        #expect(output["verified"] as? Bool == true)
        #expect(output["ceremony"] as? String == "registration")
        #expect(output["credential_id"] as? String
            == "syGQPDZRUYdb4m3rdWeyPaIMYlbmydGp1TP_33vE_lqJ3PHNyTd0iKsnKr5WjnCcBzcesZrDEfB_RBLFzU3k4w")
        #expect(output["algorithm"] as? Int == -7)
        #expect(output["aaguid"] as? String == "6d44ba9b-f6ec-2e49-b930-0c8fe920cb73")
        #expect(output["sign_count"] as? Int == 52)
        let attestation = try #require(output["attestation"] as? [String: Any])
        #expect(attestation["format"] as? String == "packed")
        #expect(attestation["trust"] as? String == "basic")
        #expect(attestation["chain"] as? String == "verified_against_root")
        let subjects = try #require(attestation["certificate_subjects"] as? [String])
        #expect(subjects.first?.contains("OU=Authenticator Attestation") == true)
    }

    @Test func tpmRegistrationWithoutAnchorsIsUnverified() throws {
        var document = try registrationDocument("tpm-surface-pro-4")
        document["trust_anchors"] = nil
        // The capture is standard base64; the tool expects the browser's base64url.
        let vector = try #require(AttestationVectors.all.first { $0.name == "tpm-surface-pro-4" })
        document["response"] = try object(String(decoding: JSONEncoder().encode(vector.response), as: UTF8.self))
        let (code, output) = try run(document)
        #expect(code == 0)
        let attestation = try #require(output["attestation"] as? [String: Any])
        #expect(attestation["format"] as? String == "tpm")
        #expect(attestation["chain"] as? String == "unverified")
        #expect(output["algorithm_name"] as? String == "RS256")
    }

    @Test func failedRegistrationNamesTheStep() throws {
        let (code, output) = try run(registrationDocument("fido-u2f-yubikey", challenge: "AAAA"))
        #expect(code == 1)
        #expect(output["verified"] as? Bool == false)
        #expect(output["step"] as? String == "clientData.challenge")
        #expect(output["reason"] as? String == WebAuthnError.challengeMismatch.description)
    }

    @Test func verifiesCapturedAuthentication() throws {
        let (code, output) = try run(authenticationDocument())
        #expect(code == 0)
        #expect(output["verified"] as? Bool == true)
        #expect(output["new_sign_count"] as? Int == 78)
        #expect(output["user_verified"] as? Bool == false)
        #expect(output["possible_clone"] as? Bool == false)
    }

    @Test func failedAuthenticationNamesTheStep() throws {
        let assertion = try #require(CapturedResponseTests.assertions.first { $0.name == "ES256" })
        let tampered = assertion.json.replacingOccurrences(
            of: "SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MBAAAATg", with: "SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MBAAAATw")
        let (code, output) = try run(authenticationDocument(json: tampered))
        #expect(code == 1)
        #expect(output["step"] as? String == "assertion.signature")
    }

    @Test func unusableDocuments() throws {
        #expect(OfflineVerification.run(document: Array("not json".utf8)).exitCode == 2)
        var missing = try registrationDocument("packed-yubikey")
        missing["rp_id"] = nil
        let (code, output) = OfflineVerification.run(document: try bytes(missing))
        #expect(code == 2)
        #expect(output.contains("rp_id"))
        var wrongCeremony = try registrationDocument("packed-yubikey")
        wrongCeremony["ceremony"] = "signup"
        #expect(OfflineVerification.run(document: try bytes(wrongCeremony)).exitCode == 2)
        var noKey = try authenticationDocument()
        noKey["credential_public_key"] = nil
        let result = OfflineVerification.run(document: try bytes(noKey))
        #expect(result.exitCode == 2)
        #expect(result.output.contains("credential_public_key"))
        var badTime = try registrationDocument("packed-yubikey")
        badTime["now"] = "yesterday"
        #expect(OfflineVerification.run(document: try bytes(badTime)).exitCode == 2)
        // A registration response under "authentication" does not decode.
        var mismatched = try registrationDocument("packed-yubikey")
        mismatched["ceremony"] = "authentication"
        #expect(OfflineVerification.run(document: try bytes(mismatched)).exitCode == 2)
    }

    @Test func inspectsBareRegistrationAndVerifyDocument() throws {
        let vector = try #require(AttestationVectors.all.first { $0.name == "apple-passkey" })
        for input in [try object(vector.json), try registrationDocument("apple-passkey")] {
            let (code, text) = ResponseInspection.inspect(document: try bytes(input))
            #expect(code == 0)
            let output = try object(text)
            #expect(output["kind"] as? String == "registration")
            let clientData = try #require(output["client_data"] as? [String: Any])
            #expect(clientData["type"] as? String == "webauthn.create")
            #expect(clientData["origin"] as? String == vector.origin)
            let authData = try #require(output["authenticator_data"] as? [String: Any])
            #expect(authData["flags"] as? [String] == ["UP", "UV", "AT"])
            #expect(authData["rp_id_hash"] as? String == Hex.encode(SHA256.hash(data: Array(vector.rpID.utf8)).bytes))
            #expect(authData["aaguid"] as? String == "f24a8e70-d0d3-f82c-2937-32523cc4de5a")
            let key = try #require(authData["credential_public_key"] as? [String: Any])
            #expect(key["algorithm_name"] as? String == "ES256")
            #expect(key["key_type"] as? String == "EC2 P-256")
            let attestation = try #require(output["attestation"] as? [String: Any])
            #expect(attestation["format"] as? String == "apple")
            let certificates = try #require(attestation["certificates"] as? [[String: Any]])
            #expect(certificates.count == 2)
            #expect((certificates.last?["subject"] as? String)?.contains("CN=Apple WebAuthn CA 1") == true)
        }
    }

    @Test func inspectsAuthentication() throws {
        let (code, text) = ResponseInspection.inspect(document: try bytes(authenticationDocument()))
        #expect(code == 0)
        let output = try object(text)
        #expect(output["kind"] as? String == "authentication")
        let authData = try #require(output["authenticator_data"] as? [String: Any])
        #expect(authData["sign_count"] as? Int == 78)
        #expect(authData["flags"] as? [String] == ["UP"])
        #expect((output["signature_length"] as? Int ?? 0) > 64)
    }

    @Test func inspectionRefusesUndecodableInput() throws {
        #expect(ResponseInspection.inspect(document: Array("[1,2]".utf8)).exitCode == 2)
        #expect(ResponseInspection.inspect(document: Array(#"{"response":{"clientDataJSON":"x"}}"#.utf8)).exitCode == 2)
        let broken: [String: Any] = [
            "id": "AA", "rawId": "AA", "type": "public-key",
            "response": ["clientDataJSON": "e30", "attestationObject": "oA"],
        ]
        #expect(ResponseInspection.inspect(document: try bytes(broken)).exitCode == 2)
    }
}
