// fuzz-modules: Crypto OIDC
// Compact JWS parsing and verification against a fixed key set (the RFC 7515 A.2 RSA key with
// kid "rsa", the A.3 P-256 key with kid "ec", the RFC 8037 Ed25519 key without kid), every
// algorithm allowed; whatever verifies has its payload decoded and its claims validated.
import Crypto
import Foundation
import OIDC

private let keys = JWKS(keys: [
    JWK(
        kty: "RSA", kid: "rsa",
        n: "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ",
        e: "AQAB"),
    JWK(
        kty: "EC", kid: "ec", crv: "P-256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
        y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"),
    JWK(kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"),
    // Malformed keys must only fail the tokens that select them.
    JWK(kty: "EC", kid: "bad-ec", crv: "P-256", x: "AAAA", y: "AAAA"),
    JWK(kty: "RSA", kid: "bad-rsa", n: "AQAB", e: ""),
])
private let verifier = JWSVerifier(keys: keys, allowedAlgorithms: Set(JWSAlgorithm.allCases))
private let claimsValidator = JWTClaimsValidator(issuer: "joe", audience: nil, requireExpiration: false)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for expectedType in [nil, "JWT"] as [String?] {
        guard let verified = try? verifier.verify(text, expectedType: expectedType) else { continue }
        _ = try? verified.decodePayload(as: [String: String].self)
        _ = try? claimsValidator.validate(verified.payload, now: Date(timeIntervalSince1970: 1_300_819_000))
    }
    // A JWK set arriving as JSON (client registration, `jwks` of a client) is parsed the same way.
    if let set = try? JSONDecoder().decode(JWKS.self, from: Data(text.utf8)) {
        for key in set.keys.prefix(8) {
            _ = try? key.publicKey()
            _ = try? key.thumbprint()
        }
    }
    return 0
}
