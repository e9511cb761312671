/// What `PublicKeyCredential.toJSON()` returns after `create()`.
///
/// Binary members stay base64url strings here; the ceremony decodes them
/// strictly and reports the field that was malformed.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#dictdef-registrationresponsejson
public struct RegistrationResponseJSON: Codable, Sendable, Equatable {
    public var id: String
    public var rawId: String
    public var type: String
    public var response: AuthenticatorAttestationResponseJSON
    public var clientExtensionResults: AuthenticationExtensionsClientOutputsJSON?
    public var authenticatorAttachment: String?

    public init(
        id: String, rawId: String, type: String = "public-key", response: AuthenticatorAttestationResponseJSON,
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

/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#dictdef-authenticatorattestationresponsejson
public struct AuthenticatorAttestationResponseJSON: Codable, Sendable, Equatable {
    public var clientDataJSON: String
    public var attestationObject: String
    public var transports: [String]?
    /// Convenience copies the browser adds; the ceremony reads the attestation object only.
    public var authenticatorData: String?
    public var publicKey: String?
    public var publicKeyAlgorithm: Int?

    public init(
        clientDataJSON: String, attestationObject: String, transports: [String]? = nil,
        authenticatorData: String? = nil, publicKey: String? = nil, publicKeyAlgorithm: Int? = nil
    ) {
        self.clientDataJSON = clientDataJSON
        self.attestationObject = attestationObject
        self.transports = transports
        self.authenticatorData = authenticatorData
        self.publicKey = publicKey
        self.publicKeyAlgorithm = publicKeyAlgorithm
    }
}

/// Client extension outputs; unknown members are ignored.
public struct AuthenticationExtensionsClientOutputsJSON: Codable, Sendable, Equatable {
    public var credProps: CredentialPropertiesOutput?

    public init(credProps: CredentialPropertiesOutput? = nil) { self.credProps = credProps }
}

/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#sctn-authenticator-credential-properties-extension
public struct CredentialPropertiesOutput: Codable, Sendable, Equatable {
    /// Whether the credential is discoverable; absent when the client does not know.
    public var rk: Bool?

    public init(rk: Bool? = nil) { self.rk = rk }
}
