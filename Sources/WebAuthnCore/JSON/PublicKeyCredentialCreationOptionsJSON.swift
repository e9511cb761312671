/// Options for `navigator.credentials.create()`, in the JSON form that
/// `PublicKeyCredential.parseCreationOptionsFromJSON()` accepts.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#dictdef-publickeycredentialcreationoptionsjson
public struct PublicKeyCredentialCreationOptionsJSON: Codable, Sendable, Equatable {
    public var rp: RelyingPartyEntity
    public var user: UserEntityJSON
    /// The challenge, base64url.
    public var challenge: String
    public var pubKeyCredParams: [PublicKeyCredentialParameters]
    /// Milliseconds.
    public var timeout: UInt32?
    public var excludeCredentials: [PublicKeyCredentialDescriptorJSON]?
    public var authenticatorSelection: AuthenticatorSelectionCriteria?
    public var hints: [PublicKeyCredentialHint]?
    public var attestation: AttestationConveyancePreference?
    public var extensions: AuthenticationExtensionsClientInputsJSON?

    public init(
        rp: RelyingPartyEntity, user: UserEntityJSON, challenge: String,
        pubKeyCredParams: [PublicKeyCredentialParameters], timeout: UInt32? = nil,
        excludeCredentials: [PublicKeyCredentialDescriptorJSON]? = nil,
        authenticatorSelection: AuthenticatorSelectionCriteria? = nil,
        hints: [PublicKeyCredentialHint]? = nil, attestation: AttestationConveyancePreference? = nil,
        extensions: AuthenticationExtensionsClientInputsJSON? = nil
    ) {
        self.rp = rp
        self.user = user
        self.challenge = challenge
        self.pubKeyCredParams = pubKeyCredParams
        self.timeout = timeout
        self.excludeCredentials = excludeCredentials
        self.authenticatorSelection = authenticatorSelection
        self.hints = hints
        self.attestation = attestation
        self.extensions = extensions
    }
}

/// The relying party as shown to the user.
public struct RelyingPartyEntity: Codable, Sendable, Equatable {
    /// The RP ID (a registrable domain suffix of the origin); the browser uses the
    /// origin's effective domain when absent.
    public var id: String?
    public var name: String

    public init(id: String?, name: String) {
        self.id = id
        self.name = name
    }
}

/// The account the credential is created for.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#dictdef-publickeycredentialuserentityjson
public struct UserEntityJSON: Codable, Sendable, Equatable {
    /// The user handle, base64url: an opaque id of at most 64 bytes, never an email.
    public var id: String
    public var name: String
    public var displayName: String

    public init(id: String, name: String, displayName: String) {
        self.id = id
        self.name = name
        self.displayName = displayName
    }
}

/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#dictdef-authenticatorselectioncriteria
public struct AuthenticatorSelectionCriteria: Codable, Sendable, Equatable {
    public var authenticatorAttachment: AuthenticatorAttachment?
    public var residentKey: ResidentKeyRequirement?
    /// Level 1 spelling of `residentKey == .required`, still read by older browsers.
    public var requireResidentKey: Bool?
    public var userVerification: UserVerificationRequirement?

    public init(
        authenticatorAttachment: AuthenticatorAttachment? = nil, residentKey: ResidentKeyRequirement? = nil,
        requireResidentKey: Bool? = nil, userVerification: UserVerificationRequirement? = nil
    ) {
        self.authenticatorAttachment = authenticatorAttachment
        self.residentKey = residentKey
        self.requireResidentKey = requireResidentKey
        self.userVerification = userVerification
    }
}

/// The client extensions this relying party requests.
public struct AuthenticationExtensionsClientInputsJSON: Codable, Sendable, Equatable {
    /// Asks the client to report whether the credential is discoverable.
    public var credProps: Bool?

    public init(credProps: Bool? = nil) { self.credProps = credProps }
}
