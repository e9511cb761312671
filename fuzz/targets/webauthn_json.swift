// fuzz-modules: Crypto WebAuthnCore
// The JSON bodies of the passkey endpoints: each input is decoded as a registration and as an
// authentication response and, when it decodes, verified against fixed expectations (the RP,
// origin, challenges and stored key of the captured responses in the seed corpus).
import Crypto
import Foundation
import WebAuthnCore

private let rpID = "localhost"
private let origin = "http://localhost:5000"
private let registrationChallenge = (try? Base64URL.decode(
    "TwN7n4WTyGKLc4ZY-qGsFqKnHM4nglqsyV0ICJlN2TO9XiRyFtrkaDwUvsql-gkLJXP6fnF1MlrZ53Mm4R7Cvw")) ?? []
private let authenticationChallenge = (try? Base64URL.decode(
    "xi30GPGAFYRxVDpY1sM10DaLzVQG66nv-_7RUazH0vI2YvG8LYgDEnvN5fZZNVuvEDuMi9te3VLqb42N0fkLGA")) ?? []
private let storedKey = (try? Base64URL.decode(
    "pQECAyYgASFYIIeDTe-gN8A-zQclHoRnGFWN8ehM1b7yAsa8I8KIvmplIlgg4nFGT5px8o6gpPZZhO01wdy9crDSA_Ngtkx0vGpvPHI")) ?? []
private let storedID = (try? Base64URL.decode(
    "EDx9FfAbp4obx6oll2oC4-CZuDidRVV4gZhxC529ytlnqHyqCStDUwfNdm1SNHAe3X5KvueWQdAX3x9R1a2b9Q")) ?? []

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let body = Data(bytes: data, count: size)
    let decoder = JSONDecoder()
    if let response = try? decoder.decode(RegistrationResponseJSON.self, from: body) {
        let verifier = RegistrationVerifier(rpID: rpID, allowedOrigins: [origin])
        for flags in [(true, false), (false, true)] {
            _ = try? verifier.verify(
                response, expectedChallenge: registrationChallenge, requireUserPresence: flags.0,
                requireUserVerification: flags.1)
        }
    }
    if let response = try? decoder.decode(AuthenticationResponseJSON.self, from: body) {
        let verifier = AuthenticationVerifier(rpID: rpID, allowedOrigins: [origin])
        let credential = StoredCredential(
            id: storedID, publicKey: storedKey, signCount: 1, backupEligible: false, backedUp: false,
            userHandle: nil)
        _ = try? verifier.verify(
            response, expectedChallenge: authenticationChallenge, credential: credential,
            requireUserVerification: false, requireUserHandle: false)
        _ = try? verifier.verify(
            response, expectedChallenge: authenticationChallenge, credential: credential,
            requireUserVerification: true, requireUserHandle: true)
    }
    return 0
}
