import Crypto
import WebAuthnCore

/// Builds one assertion (authentication response) of a `SoftwareAuthenticator`.
struct AssertionBuilder: Sendable {
    var authenticator: SoftwareAuthenticator
    var clientData: ClientDataFixture
    var rpID: String
    var flags: AuthenticatorFlags = [.userPresent, .userVerified]
    var signCount: UInt32 = 1
    var userHandle: [UInt8]?? = .none
    var corruptSignature = false
    var credentialType = "public-key"
    var rawIDOverride: String?

    func flags(up: Bool = true, uv: Bool = true, be: Bool = false, bs: Bool = false) -> Self {
        var c = self; c.flags = authenticatorFlags(up: up, uv: uv, be: be, bs: bs); return c
    }
    func signCount(_ count: UInt32) -> Self { var c = self; c.signCount = count; return c }
    /// The user handle to return; `nil` omits it (non-discoverable credentials).
    func userHandle(_ handle: [UInt8]?) -> Self { var c = self; c.userHandle = .some(handle); return c }
    func clientDataType(_ type: String) -> Self { var c = self; c.clientData.type = type; return c }
    func corruptingSignature() -> Self { var c = self; c.corruptSignature = true; return c }
    func credentialType(_ type: String) -> Self { var c = self; c.credentialType = type; return c }
    func rawID(_ text: String) -> Self { var c = self; c.rawIDOverride = text; return c }

    func json() throws -> AuthenticationResponseJSON {
        let authData = AuthenticatorDataBuilder().rpIDHash(Array(SHA256.hash(data: Array(rpID.utf8))))
            .flags(flags).signCount(signCount).build()
        let clientDataJSON = clientData.json()
        var signature = try authenticator.sign(authData + Array(SHA256.hash(data: clientDataJSON)))
        if corruptSignature { signature[signature.count / 2] ^= 0x01 }
        let handle: [UInt8]? = userHandle ?? authenticator.userHandle
        let id = rawIDOverride ?? Base64URL.encode(authenticator.credentialID)
        return AuthenticationResponseJSON(
            id: id, rawId: id, type: credentialType,
            response: AuthenticatorAssertionResponseJSON(
                clientDataJSON: Base64URL.encode(clientDataJSON),
                authenticatorData: Base64URL.encode(authData),
                signature: Base64URL.encode(signature),
                userHandle: handle.map { Base64URL.encode($0) }))
    }
}
