import WebAuthnCore

/// Builds authenticator data bytes field by field, so each test states only
/// what differs from a well-formed value.
struct AuthenticatorDataBuilder {
    var rpIDHash: [UInt8] = Array(repeating: 0xAB, count: 32)
    var flags: AuthenticatorFlags = [.userPresent]
    var signCount: UInt32 = 0
    var aaguid: [UInt8] = Array(repeating: 0, count: 16)
    var credentialID: [UInt8]?
    /// Encoded COSE key (or any bytes, to test malformed keys).
    var credentialPublicKey: [UInt8] = []
    /// Encoded extensions (or any bytes).
    var extensions: [UInt8]?
    var trailing: [UInt8] = []

    func rpIDHash(_ hash: [UInt8]) -> Self { var c = self; c.rpIDHash = hash; return c }
    func flags(_ flags: AuthenticatorFlags) -> Self { var c = self; c.flags = flags; return c }
    func signCount(_ count: UInt32) -> Self { var c = self; c.signCount = count; return c }
    func aaguid(_ aaguid: [UInt8]) -> Self { var c = self; c.aaguid = aaguid; return c }
    /// Adds attested credential data and sets AT.
    func attestedCredential(id: [UInt8], publicKey: [UInt8]) -> Self {
        var c = self
        c.credentialID = id
        c.credentialPublicKey = publicKey
        c.flags.insert(.attestedCredentialData)
        return c
    }
    /// Adds an extensions map and sets ED.
    func extensions(_ bytes: [UInt8]) -> Self {
        var c = self
        c.extensions = bytes
        c.flags.insert(.extensionData)
        return c
    }
    func trailing(_ bytes: [UInt8]) -> Self { var c = self; c.trailing = bytes; return c }

    func build() -> [UInt8] {
        var out = rpIDHash
        out.append(flags.rawValue)
        out += [UInt8(signCount >> 24), UInt8(truncatingIfNeeded: signCount >> 16),
                UInt8(truncatingIfNeeded: signCount >> 8), UInt8(truncatingIfNeeded: signCount)]
        if let credentialID {
            out += aaguid
            out += [UInt8(truncatingIfNeeded: credentialID.count >> 8), UInt8(truncatingIfNeeded: credentialID.count)]
            out += credentialID
            out += credentialPublicKey
        }
        if let extensions { out += extensions }
        return out + trailing
    }
}

/// A syntactically valid P-256 COSE key (coordinates are not on the curve; parsing does not care).
let sampleEC2Key: [UInt8] = CBOREncoder.encode(
    COSEKey.ec2P256(x: Array(repeating: 1, count: 32), y: Array(repeating: 2, count: 32)).cbor)
