import Foundation

/// The client data the browser collected and the authenticator's signature covers
/// (through its hash).
/// - SeeAlso: https://www.w3.org/TR/webauthn-3/#dictionary-client-data
public struct CollectedClientData: Sendable, Equatable, Decodable {
    /// `webauthn.create` or `webauthn.get`.
    public var type: String
    /// The challenge as base64url text, compared after strict decoding.
    public var challenge: String
    /// The calling origin (`https://…`, or `android:apk-key-hash:…` for Android apps).
    public var origin: String
    /// True when the ceremony ran in a cross-origin iframe.
    public var crossOrigin: Bool?
    /// The top-level origin when the ceremony ran in an iframe.
    public var topOrigin: String?

    /// The two ceremony types.
    public enum CeremonyType: String, Sendable {
        case create = "webauthn.create"
        case get = "webauthn.get"
    }

    public init(type: String, challenge: String, origin: String, crossOrigin: Bool? = nil, topOrigin: String? = nil) {
        self.type = type
        self.challenge = challenge
        self.origin = origin
        self.crossOrigin = crossOrigin
        self.topOrigin = topOrigin
    }

    /// Parses `clientDataJSON` bytes; members beyond these are ignored, as the
    /// specification requires for forward compatibility.
    public init(from bytes: [UInt8]) throws(WebAuthnError) {
        // UTF-8 decode strips a leading byte order mark.
        let json = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes[...]
        do {
            self = try JSONDecoder().decode(CollectedClientData.self, from: Data(json))
        } catch {
            throw .malformedClientData
        }
    }
}
