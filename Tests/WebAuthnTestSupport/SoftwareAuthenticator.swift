import Crypto
import Foundation
import WebAuthnCore

/// A software authenticator that produces real, signed WebAuthn responses in the
/// browser's JSON shapes, so ceremonies are tested end to end with real keys.
///
/// Every builder method returns a modified copy:
/// `SoftwareAuthenticator(algorithm: .es256).makeRegistration(challenge: c).flags(up: false).json()`.
struct SoftwareAuthenticator: Sendable {
    enum PrivateKey: Sendable {
        case es256(P256.Signing.PrivateKey)
        case rsa(RSA.Signing.PrivateKey, COSEAlgorithmIdentifier)
        case eddsa(Curve25519.Signing.PrivateKey)
    }

    let key: PrivateKey
    let credentialID: [UInt8]
    let userHandle: [UInt8]
    let aaguid: [UInt8]

    init(algorithm: COSEAlgorithmIdentifier = .es256, credentialID: [UInt8]? = nil) throws {
        switch algorithm {
        case .es256: key = .es256(try P256.Signing.PrivateKey())
        case .rs256, .ps256: key = .rsa(try RSA.Signing.PrivateKey(keySize: 2048), algorithm)
        case .eddsa: key = .eddsa(try Curve25519.Signing.PrivateKey())
        default: throw TestFixtureError.unsupportedAlgorithm
        }
        self.credentialID = credentialID ?? Array(SHA256.hash(data: Array(UUID().uuidString.utf8)))
        userHandle = Array(SHA256.hash(data: Array("user-\(UUID().uuidString)".utf8)).prefix(16))
        aaguid = Array(repeating: 0xAA, count: 16)
    }

    var algorithm: COSEAlgorithmIdentifier {
        switch key {
        case .es256: .es256
        case .rsa(_, let algorithm): algorithm
        case .eddsa: .eddsa
        }
    }

    var cosePublicKey: COSEKey {
        get throws {
            switch key {
            case .es256(let privateKey):
                let (x, y) = try privateKey.publicKey.rawCoordinates
                return .ec2P256(x: x, y: y)
            case .rsa(let privateKey, let algorithm):
                let components = try privateKey.components
                return .rsa(n: components.n, e: components.e, algorithm: algorithm)
            case .eddsa(let privateKey):
                return .okpEd25519(x: try privateKey.publicKey.rawRepresentation)
            }
        }
    }

    func sign(_ data: [UInt8]) throws -> [UInt8] {
        switch key {
        case .es256(let privateKey):
            return try privateKey.signature(for: data).derRepresentation
        case .rsa(let privateKey, let algorithm):
            let padding: RSA.Signing.Padding = algorithm == .ps256 ? .pss : .pkcs1v1_5
            return try privateKey.signature(for: data, padding: padding, digest: .sha256).rawRepresentation
        case .eddsa(let privateKey):
            return try privateKey.signature(for: data)
        }
    }

    func makeRegistration(
        challenge: [UInt8], origin: String = TestRP.origin, rpID: String = TestRP.id
    ) -> RegistrationBuilder {
        RegistrationBuilder(authenticator: self, clientData: .init(type: "webauthn.create", challenge: challenge, origin: origin), rpID: rpID)
    }

    func makeAssertion(
        challenge: [UInt8], origin: String = TestRP.origin, rpID: String = TestRP.id
    ) -> AssertionBuilder {
        AssertionBuilder(authenticator: self, clientData: .init(type: "webauthn.get", challenge: challenge, origin: origin), rpID: rpID)
    }

    /// The record a relying party would have stored after registering this authenticator.
    func storedCredential(
        signCount: UInt32 = 0, backupEligible: Bool = false, backedUp: Bool = false, userHandle: [UInt8]? = nil
    ) throws -> StoredCredential {
        StoredCredential(
            id: credentialID, publicKey: CBOREncoder.encode(try cosePublicKey.cbor), signCount: signCount,
            backupEligible: backupEligible, backedUp: backedUp, userHandle: userHandle ?? self.userHandle)
    }
}

enum TestFixtureError: Error { case unsupportedAlgorithm }

enum TestRP {
    static let id = "example.com"
    static let origin = "https://login.example.com"
    static let origins: Set<String> = [origin, "android:apk-key-hash:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8"]
}

/// The members of `CollectedClientData`, encoded the way browsers do.
struct ClientDataFixture: Sendable {
    var type: String
    var challenge: [UInt8]
    var origin: String
    var crossOrigin: Bool? = false
    var topOrigin: String?
    /// Replaces the encoded challenge (e.g. with invalid base64url).
    var challengeText: String?

    func json() -> [UInt8] {
        var object: [String: Any] = [
            "type": type, "challenge": challengeText ?? Base64URL.encode(challenge), "origin": origin,
        ]
        if let crossOrigin { object["crossOrigin"] = crossOrigin }
        if let topOrigin { object["topOrigin"] = topOrigin }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        return Array(data)
    }
}

/// Flags as a builder parameter list.
func authenticatorFlags(up: Bool, uv: Bool, be: Bool, bs: Bool) -> AuthenticatorFlags {
    var flags: AuthenticatorFlags = []
    if up { flags.insert(.userPresent) }
    if uv { flags.insert(.userVerified) }
    if be { flags.insert(.backupEligible) }
    if bs { flags.insert(.backedUp) }
    return flags
}
