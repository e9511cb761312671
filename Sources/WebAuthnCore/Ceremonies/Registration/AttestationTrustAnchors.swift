import Crypto

/// The certificates a relying party trusts as roots of attestation chains, by statement
/// format and by authenticator model (AAGUID). The relying party supplies them (from the
/// FIDO Metadata Service, vendor pages, its own policy); this library ships none.
///
/// A chain is verified against the union of the anchors for its AAGUID and for its
/// format. When that union is empty, the chain is reported as `.unverified`.
public struct AttestationTrustAnchors: Sendable {
    public var byFormat: [AttestationFormat: [Certificate]]
    /// Keyed by the 16 AAGUID bytes.
    public var byAAGUID: [[UInt8]: [Certificate]]

    public init(byFormat: [AttestationFormat: [Certificate]] = [:], byAAGUID: [[UInt8]: [Certificate]] = [:]) {
        self.byFormat = byFormat
        self.byAAGUID = byAAGUID
    }

    /// No anchors: every certificate chain is reported as `.unverified`.
    public static let none = AttestationTrustAnchors()

    /// The anchors that apply to one attestation.
    public func anchors(format: AttestationFormat, aaguid: [UInt8]) -> [Certificate] {
        (byAAGUID[aaguid] ?? []) + (byFormat[format] ?? [])
    }
}
