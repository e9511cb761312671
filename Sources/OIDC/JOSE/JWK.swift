import Crypto
import Foundation

/// A JSON Web Key (RFC 7517) for RSA, EC P-256 or OKP Ed25519. Private members are only
/// filled when a private JWK is exported on purpose (`init(privateKey:)`); published key
/// sets use `publicJWK`.
public struct JWK: Codable, Sendable, Equatable {
    public var kty: String
    public var use: String?
    public var alg: String?
    public var kid: String?
    public var crv: String?
    public var x: String?
    public var y: String?
    public var n: String?
    public var e: String?
    public var d: String?
    public var p: String?
    public var q: String?
    public var dp: String?
    public var dq: String?
    public var qi: String?

    public init(
        kty: String, use: String? = nil, alg: String? = nil, kid: String? = nil, crv: String? = nil,
        x: String? = nil, y: String? = nil, n: String? = nil, e: String? = nil, d: String? = nil,
        p: String? = nil, q: String? = nil, dp: String? = nil, dq: String? = nil, qi: String? = nil
    ) {
        self.kty = kty; self.use = use; self.alg = alg; self.kid = kid; self.crv = crv
        self.x = x; self.y = y; self.n = n; self.e = e; self.d = d
        self.p = p; self.q = q; self.dp = dp; self.dq = dq; self.qi = qi
    }

    /// The public JWK of a key, with `use: "sig"`.
    public init(publicKey: SigningPublicKey, keyID: String? = nil, algorithm: JWSAlgorithm? = nil) throws(JOSEError) {
        do {
            switch publicKey {
            case .rsa(let key):
                self.init(kty: "RSA", n: Base64URL.encode(try key.modulus), e: Base64URL.encode(try key.exponent))
            case .p256(let key):
                let (x, y) = try key.rawCoordinates
                self.init(kty: "EC", crv: "P-256", x: Base64URL.encode(x), y: Base64URL.encode(y))
            case .ed25519(let key):
                self.init(kty: "OKP", crv: "Ed25519", x: Base64URL.encode(try key.rawRepresentation))
            }
        } catch {
            throw .invalidKey
        }
        self.use = "sig"
        self.kid = keyID
        self.alg = algorithm?.rawValue
    }

    /// The private JWK of a key (for storing or moving keys, never for publishing).
    public init(privateKey: SigningPrivateKey, keyID: String? = nil, algorithm: JWSAlgorithm? = nil) throws(JOSEError) {
        try self.init(publicKey: privateKey.publicKey, keyID: keyID, algorithm: algorithm)
        do {
            switch privateKey {
            case .rsa(let key):
                let c = try key.components
                d = Base64URL.encode(c.d); p = Base64URL.encode(c.p); q = Base64URL.encode(c.q)
                dp = Base64URL.encode(c.dp); dq = Base64URL.encode(c.dq); qi = Base64URL.encode(c.qi)
            case .p256(let key):
                d = Base64URL.encode(try key.rawRepresentation)
            case .ed25519(let key):
                d = Base64URL.encode(try key.rawRepresentation)
            }
        } catch {
            throw .invalidKey
        }
    }

    /// Whether private members are present.
    public var isPrivate: Bool { d != nil || p != nil || q != nil || dp != nil || dq != nil || qi != nil }

    /// This key without its private members.
    public var publicJWK: JWK {
        var copy = self
        copy.d = nil; copy.p = nil; copy.q = nil; copy.dp = nil; copy.dq = nil; copy.qi = nil
        return copy
    }

    /// The verification key these members describe.
    public func publicKey() throws(JOSEError) -> SigningPublicKey {
        do {
            switch (kty, crv) {
            case ("RSA", _):
                return .rsa(try RSA.Signing.PublicKey(n: try Self.member(n), e: try Self.member(e)))
            case ("EC", "P-256"):
                return .p256(try P256.Signing.PublicKey(rawCoordinates: try Self.member(x), y: try Self.member(y)))
            case ("OKP", "Ed25519"):
                return .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: try Self.member(x)))
            case ("EC", _), ("OKP", _):
                throw JOSEError.unsupportedKeyType("\(kty)/\(crv ?? "none")")
            default:
                throw JOSEError.unsupportedKeyType(kty)
            }
        } catch {
            throw Self.mapped(error)
        }
    }

    /// The signing key these members describe; the public members must match the private ones.
    public func privateKey() throws(JOSEError) -> SigningPrivateKey {
        do {
            switch (kty, crv) {
            case ("RSA", _):
                let components = RSA.Signing.PrivateComponents(
                    n: try Self.member(n), e: try Self.member(e), d: try Self.member(d), p: try Self.member(p),
                    q: try Self.member(q), dp: try Self.member(dp), dq: try Self.member(dq), qi: try Self.member(qi))
                return .rsa(try RSA.Signing.PrivateKey(components: components))
            case ("EC", "P-256"):
                return .p256(try P256.Signing.PrivateKey(rawRepresentation: try Self.member(d), x: try Self.member(x), y: try Self.member(y)))
            case ("OKP", "Ed25519"):
                let key = try Curve25519.Signing.PrivateKey(rawRepresentation: try Self.member(d))
                guard try key.publicKey.rawRepresentation == Self.member(x) else { throw JOSEError.invalidKey }
                return .ed25519(key)
            case ("EC", _), ("OKP", _):
                throw JOSEError.unsupportedKeyType("\(kty)/\(crv ?? "none")")
            default:
                throw JOSEError.unsupportedKeyType(kty)
            }
        } catch {
            throw Self.mapped(error)
        }
    }

    /// The RFC 7638 thumbprint: base64url(SHA-256) of the required members, in
    /// lexicographic order, without whitespace. Used as a stable `kid`.
    public func thumbprint() throws(JOSEError) -> String {
        let members: [(String, String?)]
        switch kty {
        case "RSA": members = [("e", e), ("kty", kty), ("n", n)]
        case "EC": members = [("crv", crv), ("kty", kty), ("x", x), ("y", y)]
        case "OKP": members = [("crv", crv), ("kty", kty), ("x", x)]
        default: throw .unsupportedKeyType(kty)
        }
        var parts: [String] = []
        for (name, value) in members {
            // The values are base64url or fixed names, so they need no JSON escaping;
            // anything else is not a valid key anyway.
            guard let value, !value.isEmpty, value.utf8.allSatisfy({ Self.plainCharacters.contains($0) }) else {
                throw .invalidKey
            }
            parts.append("\"\(name)\":\"\(value)\"")
        }
        let json = "{" + parts.joined(separator: ",") + "}"
        return Base64URL.encode(SHA256.hash(data: Array(json.utf8)).bytes)
    }

    private static let plainCharacters = Set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static func member(_ value: String?) throws(JOSEError) -> [UInt8] {
        guard let value, let bytes = try? Base64URL.decode(value), !bytes.isEmpty else { throw .invalidKey }
        return bytes
    }

    private static func mapped(_ error: any Error) -> JOSEError {
        switch error {
        case let error as JOSEError: return error
        case CryptoError.keyTooSmall: return .keyTooSmall
        case CryptoError.wrongCurve: return .unsupportedKeyType("EC")
        default: return .invalidKey
        }
    }
}

extension JWK {
    /// The members that are present, for `JSONBody`: the same text `JSONEncoder` writes for
    /// this key with `.sortedKeys` (base64url values hold no slash to escape).
    public var json: [String: JSONValue] {
        let members: [(String, String?)] = [
            ("kty", kty), ("use", use), ("alg", alg), ("kid", kid), ("crv", crv), ("x", x), ("y", y),
            ("n", n), ("e", e), ("d", d), ("p", p), ("q", q), ("dp", dp), ("dq", dq), ("qi", qi),
        ]
        var object: [String: JSONValue] = [:]
        for case (let name, let value?) in members { object[name] = .string(value) }
        return object
    }
}
