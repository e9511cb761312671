/// What `PublicKeyCredential.toJSON()` returns after `get()`.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#dictdef-authenticationresponsejson
public struct AuthenticationResponseJSON: Codable, Sendable, Equatable {
    public var id: String
    public var rawId: String
    public var type: String
    public var response: AuthenticatorAssertionResponseJSON
    public var clientExtensionResults: AuthenticationExtensionsClientOutputsJSON?
    public var authenticatorAttachment: String?

    public init(
        id: String, rawId: String, type: String = "public-key", response: AuthenticatorAssertionResponseJSON,
        clientExtensionResults: AuthenticationExtensionsClientOutputsJSON? = .init(),
        authenticatorAttachment: String? = nil
    ) {
        self.id = id
        self.rawId = rawId
        self.type = type
        self.response = response
        self.clientExtensionResults = clientExtensionResults
        self.authenticatorAttachment = authenticatorAttachment
    }
}

/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#dictdef-authenticatorassertionresponsejson
public struct AuthenticatorAssertionResponseJSON: Codable, Sendable, Equatable {
    public var clientDataJSON: String
    public var authenticatorData: String
    public var signature: String
    /// The user handle, base64url; present for discoverable credentials.
    public var userHandle: String?

    public init(clientDataJSON: String, authenticatorData: String, signature: String, userHandle: String? = nil) {
        self.clientDataJSON = clientDataJSON
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
    }
}
