/// Options for `navigator.credentials.get()`, in the JSON form that
/// `PublicKeyCredential.parseRequestOptionsFromJSON()` accepts.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#dictdef-publickeycredentialrequestoptionsjson
public struct PublicKeyCredentialRequestOptionsJSON: Codable, Sendable, Equatable {
    /// The challenge, base64url.
    public var challenge: String
    /// Milliseconds.
    public var timeout: UInt32?
    public var rpId: String?
    /// Empty or absent for discoverable-credential (passkey autofill) sign-in.
    public var allowCredentials: [PublicKeyCredentialDescriptorJSON]?
    public var userVerification: UserVerificationRequirement?
    public var hints: [PublicKeyCredentialHint]?
    public var extensions: AuthenticationExtensionsClientInputsJSON?

    public init(
        challenge: String, timeout: UInt32? = nil, rpId: String? = nil,
        allowCredentials: [PublicKeyCredentialDescriptorJSON]? = nil,
        userVerification: UserVerificationRequirement? = nil, hints: [PublicKeyCredentialHint]? = nil,
        extensions: AuthenticationExtensionsClientInputsJSON? = nil
    ) {
        self.challenge = challenge
        self.timeout = timeout
        self.rpId = rpId
        self.allowCredentials = allowCredentials
        self.userVerification = userVerification
        self.hints = hints
        self.extensions = extensions
    }
}
