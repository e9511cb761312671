import Crypto
import WebAuthnCore

/// Builds one registration response of a `SoftwareAuthenticator`.
struct RegistrationBuilder: Sendable {
    enum Attestation: Sendable {
        case none, packedSelf
        /// packed with x5c: signed by `key`, whose certificate leads `chain` (DER, leaf first).
        case packedCertificate(key: P256.Signing.PrivateKey, chain: [[UInt8]])
    }

    var authenticator: SoftwareAuthenticator
    var clientData: ClientDataFixture
    var rpID: String
    var flags: AuthenticatorFlags = [.userPresent, .userVerified]
    var signCount: UInt32 = 0
    var attestation: Attestation = .none
    var credentialType = "public-key"
    /// Replaces the COSE key placed in the authenticator data.
    var coseKeyOverride: [UInt8]?
    /// Replaces the whole attestation statement (packed self signature is then not computed).
    var statementOverride: CBORValue?
    var formatOverride: String?
    var packedAlgOverride: COSEAlgorithmIdentifier?
    var corruptSignature = false
    var rawIDOverride: String?
    var transports: [String] = ["internal", "hybrid"]
    var aaguidOverride: [UInt8]?

    func flags(up: Bool = true, uv: Bool = true, be: Bool = false, bs: Bool = false) -> Self {
        var c = self; c.flags = authenticatorFlags(up: up, uv: uv, be: be, bs: bs); return c
    }
    func signCount(_ count: UInt32) -> Self { var c = self; c.signCount = count; return c }
    func attestation(_ attestation: Attestation) -> Self { var c = self; c.attestation = attestation; return c }
    func clientDataType(_ type: String) -> Self { var c = self; c.clientData.type = type; return c }
    func challengeText(_ text: String) -> Self { var c = self; c.clientData.challengeText = text; return c }
    func crossOrigin(_ value: Bool?) -> Self { var c = self; c.clientData.crossOrigin = value; return c }
    func topOrigin(_ value: String?) -> Self { var c = self; c.clientData.topOrigin = value; return c }
    func credentialType(_ type: String) -> Self { var c = self; c.credentialType = type; return c }
    func coseKey(_ bytes: [UInt8]) -> Self { var c = self; c.coseKeyOverride = bytes; return c }
    func statement(_ statement: CBORValue) -> Self { var c = self; c.statementOverride = statement; return c }
    func format(_ format: String) -> Self { var c = self; c.formatOverride = format; return c }
    func packedAlg(_ alg: COSEAlgorithmIdentifier) -> Self { var c = self; c.packedAlgOverride = alg; return c }
    func corruptingSignature() -> Self { var c = self; c.corruptSignature = true; return c }
    func rawID(_ text: String) -> Self { var c = self; c.rawIDOverride = text; return c }
    func aaguid(_ aaguid: [UInt8]) -> Self { var c = self; c.aaguidOverride = aaguid; return c }

    func authenticatorData() throws -> [UInt8] {
        let key = try coseKeyOverride ?? CBOREncoder.encode(authenticator.cosePublicKey.cbor)
        return AuthenticatorDataBuilder().rpIDHash(Array(SHA256.hash(data: Array(rpID.utf8))))
            .flags(flags).signCount(signCount).aaguid(aaguidOverride ?? authenticator.aaguid)
            .attestedCredential(id: authenticator.credentialID, publicKey: key).build()
    }

    func attestationObject() throws -> [UInt8] {
        let authData = try authenticatorData()
        let clientDataJSON = clientData.json()
        let statement: CBORValue
        let format: String
        switch attestation {
        case .none:
            format = "none"
            statement = .map([])
        case .packedSelf:
            format = "packed"
            var signature = try authenticator.sign(authData + Array(SHA256.hash(data: clientDataJSON)))
            if corruptSignature { signature[signature.count / 2] ^= 0x01 }
            statement = .map([
                CBORMapEntry(.textString("alg"), .int((packedAlgOverride ?? authenticator.algorithm).rawValue)),
                CBORMapEntry(.textString("sig"), .byteString(signature)),
            ])
        case .packedCertificate(let key, let chain):
            format = "packed"
            var signature = try key.signature(for: authData + Array(SHA256.hash(data: clientDataJSON))).derRepresentation
            if corruptSignature { signature[signature.count / 2] ^= 0x01 }
            statement = .map([
                CBORMapEntry(.textString("alg"), .int(-7)),
                CBORMapEntry(.textString("sig"), .byteString(signature)),
                CBORMapEntry(.textString("x5c"), .array(chain.map { .byteString($0) })),
            ])
        }
        return CBOREncoder.encode(.map([
            CBORMapEntry(.textString("fmt"), .textString(formatOverride ?? format)),
            CBORMapEntry(.textString("attStmt"), statementOverride ?? statement),
            CBORMapEntry(.textString("authData"), .byteString(authData)),
        ]))
    }

    func json() throws -> RegistrationResponseJSON {
        let id = rawIDOverride ?? Base64URL.encode(authenticator.credentialID)
        return RegistrationResponseJSON(
            id: id, rawId: id, type: credentialType,
            response: AuthenticatorAttestationResponseJSON(
                clientDataJSON: Base64URL.encode(clientData.json()),
                attestationObject: Base64URL.encode(try attestationObject()),
                transports: transports),
            authenticatorAttachment: "platform")
    }
}
