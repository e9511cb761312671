/// Names a credential in `excludeCredentials` / `allowCredentials`.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#dictdef-publickeycredentialdescriptorjson
public struct PublicKeyCredentialDescriptorJSON: Codable, Sendable, Equatable {
    /// Always `"public-key"`.
    public var type: String
    /// The credential id, base64url.
    public var id: String
    /// Transport hints recorded at registration (`internal`, `hybrid`, `usb`, `nfc`, `ble`).
    public var transports: [String]?

    public init(id: String, transports: [String]? = nil, type: String = "public-key") {
        self.type = type
        self.id = id
        self.transports = transports
    }
}

/// One acceptable credential algorithm, in order of preference.
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#dictdef-publickeycredentialparameters
public struct PublicKeyCredentialParameters: Codable, Sendable, Equatable {
    public var type: String
    public var alg: COSEAlgorithmIdentifier

    public init(alg: COSEAlgorithmIdentifier, type: String = "public-key") {
        self.type = type
        self.alg = alg
    }
}
