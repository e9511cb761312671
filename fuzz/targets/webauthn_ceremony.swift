// fuzz-modules: Crypto WebAuthnCore
// Both ceremonies driven from raw bytes, so mutations land in the client data, the attestation
// object (CBOR, attestation statements, X.509 chains, TPM and Android structures) and the
// signed authenticator data directly instead of in their base64url text. The expected
// challenge is taken from the client data itself, so verification gets past the challenge
// check and into the attestation formats.
//
// Input: byte 0 selects the relying party (low 2 bits) and the ceremony (bit 7: authentication);
// bytes 1-2 are the big-endian length of the client data JSON that follows; for a registration
// the rest is the attestation object, for an authentication bytes 3-4 after the client data are
// the length of the authenticator data, followed by it and then the signature.
import Crypto
import Foundation
import WebAuthnCore

private struct Profile {
    var rpID: String
    var now: Date
}

private let profiles = [
    Profile(rpID: "localhost", now: Date(timeIntervalSince1970: 1_704_067_200)),  // 2024-01-01
    Profile(rpID: "dev2.dontneeda.pw", now: Date(timeIntervalSince1970: 1_630_540_800)),  // 2021-09-02
    Profile(rpID: "dev.dontneeda.pw", now: Date(timeIntervalSince1970: 1_704_067_200)),
    Profile(rpID: "webauthntest.azurewebsites.net", now: Date(timeIntervalSince1970: 1_622_505_600)),  // 2021-06-01
]
private let origins: Set<String> = [
    "http://localhost:5000", "https://dev2.dontneeda.pw:5000", "https://dev.dontneeda.pw",
    "https://webauthntest.azurewebsites.net",
]
/// The captured ES256, RS256 and EdDSA credentials of the seed corpus (COSE keys).
private let storedKeys = [
    "pQECAyYgASFYIIeDTe-gN8A-zQclHoRnGFWN8ehM1b7yAsa8I8KIvmplIlgg4nFGT5px8o6gpPZZhO01wdy9crDSA_Ngtkx0vGpvPHI",
    "pAEDAzkBACBZAQDfV20epzvQP-HtcdDpX-cGzdOxy73WQEvsU7Dnr9UWJophEfpngouvgnRLXaEUn_d8HGkp_HIx8rrpkx4BVs6X_B6ZjhLlezjIdJbLbVeb92BaEsmNn1HW2N9Xj2QM8cH-yx28_vCjf82ahQ9gyAr552Bn96G22n8jqFRQKdVpO-f-bvpvaP3IQ9F5LCX7CUaxptgbog1SFO6FI6ob5SlVVB00lVXsaYg8cIDZxCkkENkGiFPgwEaZ7995SCbiyCpUJbMqToLMgojPkAhWeyktu7TlK6UBWdJMHc3FPAIs0lH_2_2hKS-mGI1uZAFVAfW1X-mzKL0czUm2P1UlUox7IUMBAAE",
    "pAEBAycgBiFYIMz6_SUFLiDid2Yhlq0YboyJ-CDrIrNpkPUGmJp4D3Dp",
].map { (try? Base64URL.decode($0)) ?? [] }
private let credentialID: [UInt8] = Array(0..<32)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data, size >= 3 else { return 0 }
    var input = Array(UnsafeBufferPointer(start: data, count: size))[...]
    let selector = input.removeFirst()
    guard let clientData = take(lengthPrefixed: &input) else { return 0 }
    let profile = profiles[Int(selector & 0x03)]
    let challenge = (try? CollectedClientData(from: Array(clientData))).flatMap { try? Base64URL.decode($0.challenge) } ?? []
    let clientDataText = Base64URL.encode(Array(clientData))
    let id = Base64URL.encode(credentialID)

    if selector & 0x80 == 0 {
        let response = RegistrationResponseJSON(
            id: id, rawId: id,
            response: AuthenticatorAttestationResponseJSON(
                clientDataJSON: clientDataText, attestationObject: Base64URL.encode(Array(input))))
        let verifier = RegistrationVerifier(rpID: profile.rpID, allowedOrigins: origins, now: profile.now)
        _ = try? verifier.verify(
            response, expectedChallenge: challenge, requireUserPresence: selector & 0x40 == 0,
            requireUserVerification: selector & 0x20 != 0)
    } else {
        guard let authenticatorData = take(lengthPrefixed: &input) else { return 0 }
        let response = AuthenticationResponseJSON(
            id: id, rawId: id,
            response: AuthenticatorAssertionResponseJSON(
                clientDataJSON: clientDataText, authenticatorData: Base64URL.encode(Array(authenticatorData)),
                signature: Base64URL.encode(Array(input)), userHandle: selector & 0x10 != 0 ? "dXNlcg" : nil))
        let credential = StoredCredential(
            id: credentialID, publicKey: storedKeys[Int(selector >> 2 & 0x03) % storedKeys.count], signCount: 5,
            backupEligible: selector & 0x08 != 0, backedUp: false, userHandle: Array("user".utf8))
        _ = try? AuthenticationVerifier(rpID: profile.rpID, allowedOrigins: origins).verify(
            response, expectedChallenge: challenge, credential: credential,
            requireUserVerification: selector & 0x20 != 0, requireUserHandle: selector & 0x40 != 0)
    }
    return 0
}

private func take(lengthPrefixed input: inout ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
    guard input.count >= 2 else { return nil }
    let length = Int(input[input.startIndex]) << 8 | Int(input[input.startIndex + 1])
    input = input.dropFirst(2)
    guard input.count >= length else { return nil }
    defer { input = input.dropFirst(length) }
    return input.prefix(length)
}
