import Crypto
import Foundation

/// Signed request objects (RFC 9101, JAR): the authorization request as a JWT the client
/// signed with one of its keys, sent in `request` at /authorize or in a pushed body.
///
/// Parse, then verify: `header(of:)` only reads the unverified header (to choose the keys, and
/// to leave an unsigned object to the plain refusal of `request_not_supported`); `verify`
/// checks the signature with the client's keys, then the claims, in the order below, and
/// returns the parameters that replace the outer ones (RFC 9101 §6.3).
public enum RequestObject {
    /// RFC 9101 §10.8: the media type that keeps another JWT from passing as a request object.
    public static let type = "oauth-authz-req+jwt"
    /// The longest an object may live (`exp` from now, and `exp` after `nbf`): FAPI 2.0 Message
    /// Signing §5.3.1 asks for at most 60 minutes.
    public static let maxLifetime: TimeInterval = 3_600
    /// Clock skew allowed for `exp`, `nbf` and `iat`.
    public static let leeway: TimeInterval = 30
    /// The registered claims of the JWT itself; every other member is a request parameter.
    static let jwtClaims: Set<String> = ["iss", "aud", "exp", "nbf", "iat", "jti", "sub"]

    /// The unverified header: `alg` and `kid`. Nil when it is not a compact JWS at all.
    public static func header(of object: String) -> (algorithm: String, keyID: String?)? {
        let parts = object.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].utf8.count <= 4_096,
            let bytes = try? Base64URL.decode(String(parts[0])),
            let header = try? JSONValue.parse(Data(bytes)).objectValue,
            let algorithm = header["alg"]?.stringValue
        else { return nil }
        return (algorithm, header["kid"]?.stringValue)
    }

    /// Whether this object is signed: its `alg` is anything but `none`. An unsigned object is
    /// refused as before (`request_not_supported`), never read.
    public static func isSigned(_ object: String) -> Bool {
        guard let header = header(of: object) else { return true }  // malformed: `verify` refuses it
        return header.algorithm.lowercased() != "none"
    }

    /// A verified request object.
    public struct Verified: Sendable, Equatable {
        /// The request's parameters: the object's members (`client_id` included).
        public var parameters: Parameters
        /// `jti`, to be accepted once until `expiresAt`.
        public var jwtID: String?
        public var expiresAt: Date
    }

    /// Verifies `object` for `client` (whose `client_id` the outer request named) with its
    /// `keys` at `now`.
    /// 1. The signature, by one of the client's keys, in an allowed algorithm (never `none`).
    /// 2. `typ`: `oauth-authz-req+jwt` when present; required of a FAPI 2.0 client.
    /// 3. `iss` is the client, `aud` this issuer (RFC 9101 §4, §6.3).
    /// 4. `exp` present, not past, at most `maxLifetime` ahead; `nbf` not in the future and at
    ///    most `maxLifetime` old (required of a FAPI 2.0 client); `iat` not in the future.
    /// 5. `client_id` inside, when present, is the outer one (§5); no nested `request` or
    ///    `request_uri`.
    /// - Throws: `invalid_request_object` naming the failed rule.
    public static func verify(_ object: String, client: OAuthClient, keys: JWKS, issuer: String, now: Date)
        throws(OAuthError) -> Verified
    {
        func invalid(_ hint: String, _ debug: String? = nil) -> OAuthError {
            OAuthError(.invalidRequestObject, hint: hint, debug: debug)
        }
        // Step 1.
        let verified: VerifiedJWS
        do {
            verified = try JWSVerifier(keys: keys, allowedAlgorithms: client.signingAlgorithms).verify(
                object)
        } catch .unsupportedAlgorithm {
            throw invalid("The request object's signing algorithm is not allowed.")
        } catch {
            throw invalid(
                "The request object's signature does not verify with the client's keys.", "\(error)")
        }
        // Step 2.
        if let type = verified.header.type {
            guard normalisedType(type) == type_ else {
                throw invalid("The request object's 'typ' is not \(Self.type).")
            }
        } else if client.profile == .fapi2 {
            throw invalid("The request object's 'typ' must be \(Self.type).")
        }
        // Steps 3 and 4.
        let claims: JWTRegisteredClaims
        do {
            claims = try JWTClaimsValidator(
                issuer: client.clientID, audience: issuer, leeway: leeway, requireExpiration: true
            ).validate(verified.payload, now: now)
        } catch .missingClaim(let name) {
            throw invalid("The request object has no '\(name)' claim.")
        } catch .expired {
            throw invalid("The request object has expired.")
        } catch .notYetValid {
            throw invalid("The request object is not valid yet ('nbf').")
        } catch .issuerMismatch {
            throw invalid("The request object's 'iss' is not the client.")
        } catch .audienceMismatch {
            throw invalid("The request object's 'aud' is not this server.")
        } catch {
            throw invalid("The request object's claims are invalid.", "\(error)")
        }
        guard let expiresAt = claims.expiresAt else {
            throw invalid("The request object has no 'exp' claim.")
        }
        guard expiresAt.timeIntervalSince(now) <= maxLifetime + leeway else {
            throw invalid("The request object's 'exp' is too far in the future.")
        }
        if let notBefore = claims.notBefore {
            guard now.timeIntervalSince(notBefore) <= maxLifetime + leeway,
                expiresAt.timeIntervalSince(notBefore) <= maxLifetime + leeway
            else { throw invalid("The request object's 'nbf' is too old.") }
        } else if client.profile == .fapi2 {
            throw invalid("The request object has no 'nbf' claim.")
        }
        // Step 5.
        guard let members = try? JSONValue.parse(Data(verified.payload)).objectValue else {
            throw invalid("The request object is malformed.")
        }
        var items: [(name: String, value: String)] = []
        for name in members.keys.sorted() where !jwtClaims.contains(name) {
            guard let value = members[name] else { continue }
            switch value {
            case .string(let text): items.append((name, text))
            case .int(let number): items.append((name, String(number)))
            case .array(let list) where name == "resource":
                for entry in list {
                    guard let text = entry.stringValue else {
                        throw invalid("A 'resource' value is not a string.")
                    }
                    items.append((name, text))
                }
            case .object: items.append((name, String(decoding: JSONBody.encode(value), as: UTF8.self)))
            default: throw invalid("The request object's '\(name.prefix(32))' member is not a string.")
            }
        }
        if members["request"] != nil || members["request_uri"] != nil {
            throw invalid("A request object cannot contain 'request' or 'request_uri'.")
        }
        let inner = items.filter { $0.name == "client_id" }.map(\.value)
        if inner.isEmpty {
            items.insert((name: "client_id", value: client.clientID), at: 0)
        } else if inner != [client.clientID] {
            throw invalid("The request object's 'client_id' is not the client's.")
        }
        return Verified(parameters: Parameters(items), jwtID: claims.jwtID, expiresAt: expiresAt)
    }

    private static let type_ = normalisedType(type)

    private static func normalisedType(_ value: String) -> String {
        let lower = value.lowercased()
        return lower.hasPrefix("application/") ? String(lower.dropFirst("application/".count)) : lower
    }
}
