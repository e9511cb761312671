// fuzz-modules: Crypto OIDC
// OAuth parameter decoding and the request checks that consume it, with one fixed web client
// and one fixed native client. Input layout: line 1 an Authorization header value, the rest a
// form-encoded body, which is also used as the authorization and logout query.
import Crypto
import Foundation
import OIDC

private let issuer = "https://id.example.com"
private let webClient = OAuthClient(
    clientID: "web-app", applicationType: .web,
    redirectURIs: ["https://app.example.com/callback", "https://app.example.com/cb?x=1"],
    postLogoutRedirectURIs: ["https://app.example.com/bye"], tokenEndpointAuthMethod: .clientSecretBasic,
    grantTypes: [.authorizationCode, .refreshToken, .clientCredentials], requirePKCE: false)
private let nativeClient = OAuthClient(
    clientID: "native-app", applicationType: .native,
    redirectURIs: ["http://127.0.0.1/callback", "com.example.app:/oauth"], tokenEndpointAuthMethod: .none)
private let verifier = JWSVerifier(
    keys: JWKS(keys: [
        JWK(
            kty: "EC", kid: "ec", crv: "P-256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0")
    ]), allowedAlgorithms: [.ES256])

private func lookUp(_ id: String) -> OAuthClient? {
    id == webClient.clientID ? webClient : id == nativeClient.clientID ? nativeClient : nil
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let data else { return 0 }
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let lines = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false)
    let header = lines.count > 1 ? String(decoding: lines[0], as: UTF8.self) : nil
    let formBytes = lines.count > 1 ? lines[1] : lines.first ?? bytes[...]
    let form = String(decoding: formBytes, as: UTF8.self)

    _ = FormEncoding.decode(form)
    guard let parameters = try? Parameters(formEncoded: form) else { return 0 }
    // Decoded parameters re-encode to something that decodes to the same parameters.
    guard (try? Parameters(formEncoded: FormEncoding.encode(parameters.items))) == parameters else {
        fatalError("form encoding round trip failed")
    }

    let client = (try? AuthorizationRequest.clientID(in: parameters)).flatMap(lookUp)
    switch Result(catching: { () throws(AuthorizationFailure) in
        try AuthorizationRequest.validate(parameters, client: client, issuer: issuer, verifier: verifier)
    }) {
    case .success(let request): _ = request.redirect.success(code: "code")
    case .failure(let failure): _ = failure.response
    }

    if let request = try? TokenRequest.parse(parameters) {
        for client in [webClient, nativeClient] { _ = try? request.checkAllowed(for: client) }
    }
    _ = try? ClientAuthentication.extract(authorization: header, parameters: parameters)
    _ = try? RevocationRequest.parse(parameters)
    _ = try? IntrospectionRequest.parse(parameters)
    _ = try? BearerToken.extract(
        authorization: header, method: "POST", contentType: "application/x-www-form-urlencoded",
        body: parameters, query: nil)
    _ = try? LogoutRequest.validate(parameters, verifier: verifier, issuer: issuer, session: nil, client: lookUp)
    return 0
}
