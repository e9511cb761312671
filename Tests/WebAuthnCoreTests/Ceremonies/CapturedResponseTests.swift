import Crypto
import Foundation
import Testing
import WebAuthnCore

// Responses captured from real authenticators, taken from the test suite of
// py_webauthn (https://github.com/duo-labs/py_webauthn, tests/test_verify_registration_response.py
// and tests/test_verify_authentication_response.py), used here as test data under its licence:
//
//   Copyright (c) 2017, Duo Security, Inc. All rights reserved.
//   BSD 3-Clause licence: redistribution and use in source and binary forms, with or without
//   modification, are permitted provided that the above copyright notice, the conditions of
//   the licence and its disclaimer are retained; the name of the author may not be used to
//   endorse or promote derived products without permission. THIS SOFTWARE IS PROVIDED BY THE
//   AUTHOR "AS IS" AND ANY EXPRESS OR IMPLIED WARRANTIES ARE DISCLAIMED.
//
// All were made for RP ID "localhost" on origin "http://localhost:5000".
@Suite struct CapturedResponseTests {
    static let rpID = "localhost"
    static let origin = "http://localhost:5000"

    func bytes(_ text: String) throws -> [UInt8] { try Base64URL.decode(text) }

    @Test func noneAttestationRegistration() throws {
        let json = #"""
            {"id":"9y1xA8Tmg1FEmT-c7_fvWZ_uoTuoih3OvR45_oAK-cwHWhAbXrl2q62iLVTjiyEZ7O7n-CROOY494k7Q3xrs_w",
             "rawId":"9y1xA8Tmg1FEmT-c7_fvWZ_uoTuoih3OvR45_oAK-cwHWhAbXrl2q62iLVTjiyEZ7O7n-CROOY494k7Q3xrs_w",
             "response":{
               "attestationObject":"o2NmbXRkbm9uZWdhdHRTdG10oGhhdXRoRGF0YVjESZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2NFAAAAFwAAAAAAAAAAAAAAAAAAAAAAQPctcQPE5oNRRJk_nO_371mf7qE7qIodzr0eOf6ACvnMB1oQG165dqutoi1U44shGezu5_gkTjmOPeJO0N8a7P-lAQIDJiABIVggSFbUJF-42Ug3pdM8rDRFu_N5oiVEysPDB6n66r_7dZAiWCDUVnB39FlGypL-qAoIO9xWHtJygo2jfDmHl-_eKFRLDA",
               "clientDataJSON":"eyJ0eXBlIjoid2ViYXV0aG4uY3JlYXRlIiwiY2hhbGxlbmdlIjoiVHdON240V1R5R0tMYzRaWS1xR3NGcUtuSE00bmdscXN5VjBJQ0psTjJUTzlYaVJ5RnRya2FEd1V2c3FsLWdrTEpYUDZmbkYxTWxyWjUzTW00UjdDdnciLCJvcmlnaW4iOiJodHRwOi8vbG9jYWxob3N0OjUwMDAiLCJjcm9zc09yaWdpbiI6ZmFsc2V9",
               "transports":["nfc","usb"]},
             "type":"public-key","clientExtensionResults":{}}
            """#
        let response = try JSONDecoder().decode(RegistrationResponseJSON.self, from: Data(json.utf8))
        let challenge = try bytes("TwN7n4WTyGKLc4ZY-qGsFqKnHM4nglqsyV0ICJlN2TO9XiRyFtrkaDwUvsql-gkLJXP6fnF1MlrZ53Mm4R7Cvw")
        let result = try RegistrationVerifier(rpID: Self.rpID, allowedOrigins: [Self.origin])
            .verify(response, expectedChallenge: challenge, requireUserPresence: true, requireUserVerification: true)
        #expect(result.credentialID == (try bytes(response.rawId)))
        #expect(result.algorithm == .es256)
        #expect(result.signCount == 23)
        #expect(result.aaguid == [UInt8](repeating: 0, count: 16))
        #expect(result.attestationFormat == "none")
        #expect(result.attestationTrust == .none)
        #expect(result.transports == ["nfc", "usb"])
        #expect(!result.backupEligible && !result.backedUp)

        // The same response for another RP or challenge is refused.
        #expect(throws: WebAuthnError.rpIDHashMismatch) {
            try RegistrationVerifier(rpID: "example.com", allowedOrigins: [Self.origin])
                .verify(response, expectedChallenge: challenge, requireUserPresence: true, requireUserVerification: false)
        }
        #expect(throws: WebAuthnError.challengeMismatch) {
            try RegistrationVerifier(rpID: Self.rpID, allowedOrigins: [Self.origin])
                .verify(response, expectedChallenge: [1], requireUserPresence: true, requireUserVerification: false)
        }
    }

    struct Assertion: Sendable {
        var name: String
        var json: String
        var challenge: String
        var publicKey: String
        var storedSignCount: UInt32
        var newSignCount: UInt32
        var userVerified: Bool
    }

    static let assertions = [
        Assertion(
            name: "ES256",
            json: #"""
                {"id":"EDx9FfAbp4obx6oll2oC4-CZuDidRVV4gZhxC529ytlnqHyqCStDUwfNdm1SNHAe3X5KvueWQdAX3x9R1a2b9Q",
                 "rawId":"EDx9FfAbp4obx6oll2oC4-CZuDidRVV4gZhxC529ytlnqHyqCStDUwfNdm1SNHAe3X5KvueWQdAX3x9R1a2b9Q",
                 "response":{"authenticatorData":"SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MBAAAATg",
                   "clientDataJSON":"eyJjaGFsbGVuZ2UiOiJ4aTMwR1BHQUZZUnhWRHBZMXNNMTBEYUx6VlFHNjZudi1fN1JVYXpIMHZJMll2RzhMWWdERW52TjVmWlpOVnV2RUR1TWk5dGUzVkxxYjQyTjBma0xHQSIsImNsaWVudEV4dGVuc2lvbnMiOnt9LCJoYXNoQWxnb3JpdGhtIjoiU0hBLTI1NiIsIm9yaWdpbiI6Imh0dHA6Ly9sb2NhbGhvc3Q6NTAwMCIsInR5cGUiOiJ3ZWJhdXRobi5nZXQifQ",
                   "signature":"MEUCIGisVZOBapCWbnJJvjelIzwpixxIwkjCCb5aCHafQu68AiEA88v-2pJNNApPFwAKFiNuf82-2hBxYW5kGwVweeoxCwo"},
                 "type":"public-key","clientExtensionResults":{}}
                """#,
            challenge: "xi30GPGAFYRxVDpY1sM10DaLzVQG66nv-_7RUazH0vI2YvG8LYgDEnvN5fZZNVuvEDuMi9te3VLqb42N0fkLGA",
            publicKey: "pQECAyYgASFYIIeDTe-gN8A-zQclHoRnGFWN8ehM1b7yAsa8I8KIvmplIlgg4nFGT5px8o6gpPZZhO01wdy9crDSA_Ngtkx0vGpvPHI",
            storedSignCount: 77, newSignCount: 78, userVerified: false),
        Assertion(
            name: "RS256",
            json: #"""
                {"id":"ZoIKP1JQvKdrYj1bTUPJ2eTUsbLeFkv-X5xJQNr4k6s","rawId":"ZoIKP1JQvKdrYj1bTUPJ2eTUsbLeFkv-X5xJQNr4k6s",
                 "response":{"authenticatorData":"SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MFAAAAAQ",
                   "clientDataJSON":"eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiaVBtQWkxUHAxWEw2b0FncTNQV1p0WlBuWmExekZVRG9HYmFRMF9LdlZHMWxGMnMzUnRfM280dVN6Y2N5MHRtY1RJcFRUVDRCVTFULUk0bWFhdm5kalEiLCJvcmlnaW4iOiJodHRwOi8vbG9jYWxob3N0OjUwMDAiLCJjcm9zc09yaWdpbiI6ZmFsc2V9",
                   "signature":"iOHKX3erU5_OYP_r_9HLZ-CexCE4bQRrxM8WmuoKTDdhAnZSeTP0sjECjvjfeS8MJzN1ArmvV0H0C3yy_FdRFfcpUPZzdZ7bBcmPh1XPdxRwY747OrIzcTLTFQUPdn1U-izCZtP_78VGw9pCpdMsv4CUzZdJbEcRtQuRS03qUjqDaovoJhOqEBmxJn9Wu8tBi_Qx7A33RbYjlfyLm_EDqimzDZhyietyop6XUcpKarKqVH0M6mMrM5zTjp8xf3W7odFCadXEJg-ERZqFM0-9Uup6kJNLbr6C5J4NDYmSm3HCSA6lp2iEiMPKU8Ii7QZ61kybXLxsX4w4Dm3fOLjmDw",
                   "userHandle":"T1RWa1l6VXdPRFV0WW1NNVlTMDBOVEkxTFRnd056Z3RabVZpWVdZNFpEVm1ZMk5p"},
                 "type":"public-key","clientExtensionResults":{}}
                """#,
            challenge: "iPmAi1Pp1XL6oAgq3PWZtZPnZa1zFUDoGbaQ0_KvVG1lF2s3Rt_3o4uSzccy0tmcTIpTTT4BU1T-I4maavndjQ",
            publicKey: "pAEDAzkBACBZAQDfV20epzvQP-HtcdDpX-cGzdOxy73WQEvsU7Dnr9UWJophEfpngouvgnRLXaEUn_d8HGkp_HIx8rrpkx4BVs6X_B6ZjhLlezjIdJbLbVeb92BaEsmNn1HW2N9Xj2QM8cH-yx28_vCjf82ahQ9gyAr552Bn96G22n8jqFRQKdVpO-f-bvpvaP3IQ9F5LCX7CUaxptgbog1SFO6FI6ob5SlVVB00lVXsaYg8cIDZxCkkENkGiFPgwEaZ7995SCbiyCpUJbMqToLMgojPkAhWeyktu7TlK6UBWdJMHc3FPAIs0lH_2_2hKS-mGI1uZAFVAfW1X-mzKL0czUm2P1UlUox7IUMBAAE",
            storedSignCount: 0, newSignCount: 1, userVerified: true),
        Assertion(
            name: "EdDSA",
            json: #"""
                {"id":"fq9Nj0nS24B5y6Pkw_h3-9GEAEA3-0LBPxE2zvTdLjDqtSeCSNYFe9VMRueSpAZxT3YDc6L1lWXdQNwI-sVNYrefEcRR1Nsb_0jpHE955WEtFud2xxZg3MvoLMxHLet63i5tajd1fHtP7I-00D6cehM8ZWlLp2T3s9lfZgVIFcA",
                 "rawId":"fq9Nj0nS24B5y6Pkw_h3-9GEAEA3-0LBPxE2zvTdLjDqtSeCSNYFe9VMRueSpAZxT3YDc6L1lWXdQNwI-sVNYrefEcRR1Nsb_0jpHE955WEtFud2xxZg3MvoLMxHLet63i5tajd1fHtP7I-00D6cehM8ZWlLp2T3s9lfZgVIFcA",
                 "response":{"authenticatorData":"SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MBAAAABw",
                   "clientDataJSON":"eyJ0eXBlIjoid2ViYXV0aG4uZ2V0IiwiY2hhbGxlbmdlIjoiZVo0ZWVBM080ank1Rkl6cURhU0o2SkROR3UwYkJjNXpJMURqUV9rTHNvMVdOcWtHNms1bUNZZjFkdFFoVlVpQldaV2xaa3pSNU1GZWVXQ3BKUlVOWHciLCJvcmlnaW4iOiJodHRwOi8vbG9jYWxob3N0OjUwMDAiLCJjcm9zc09yaWdpbiI6ZmFsc2V9",
                   "signature":"RRWV8mYDRvK7YdQgdtZD4pJ2dh1D_IWZ_D6jsZo6FHJBoenbj0CVT5nA20vUzlRhN4R6dOEUHmUwP1F8eRBhBg"},
                 "type":"public-key","clientExtensionResults":{}}
                """#,
            challenge: "eZ4eeA3O4jy5FIzqDaSJ6JDNGu0bBc5zI1DjQ_kLso1WNqkG6k5mCYf1dtQhVUiBWZWlZkzR5MFeeWCpJRUNXw",
            publicKey: "pAEBAycgBiFYIMz6_SUFLiDid2Yhlq0YboyJ-CDrIrNpkPUGmJp4D3Dp",
            storedSignCount: 3, newSignCount: 7, userVerified: false),
    ]

    func run(_ assertion: Assertion, challenge: [UInt8]? = nil) throws -> VerifiedAuthentication {
        let response = try JSONDecoder().decode(AuthenticationResponseJSON.self, from: Data(assertion.json.utf8))
        let stored = StoredCredential(
            id: try bytes(response.rawId), publicKey: try bytes(assertion.publicKey),
            signCount: assertion.storedSignCount, backupEligible: false, backedUp: false,
            userHandle: try response.response.userHandle.map(bytes))
        return try AuthenticationVerifier(rpID: Self.rpID, allowedOrigins: ["https://foo.example", Self.origin])
            .verify(
                response, expectedChallenge: challenge ?? (try bytes(assertion.challenge)), credential: stored,
                requireUserVerification: assertion.userVerified)
    }

    @Test(arguments: assertions.map(\.name))
    func capturedAssertionVerifies(name: String) throws {
        let assertion = try #require(Self.assertions.first { $0.name == name })
        let result = try run(assertion)
        #expect(result.newSignCount == assertion.newSignCount)
        #expect(result.userVerified == assertion.userVerified)
        #expect(!result.possibleClone)
        #expect(throws: WebAuthnError.challengeMismatch) { try run(assertion, challenge: [0, 1, 2]) }
    }

    @Test func capturedAssertionWithAlteredDataFailsSignature() throws {
        var assertion = try #require(Self.assertions.first)
        // Same authenticator data with the sign count changed from 78 to 79.
        assertion.json = assertion.json.replacingOccurrences(
            of: "SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MBAAAATg", with: "SZYN5YgOjGh0NBcPZHZgW4_krrmihjLHmVzzuoMdl2MBAAAATw")
        #expect(throws: WebAuthnError.signatureInvalid) { try run(assertion) }
    }
}
