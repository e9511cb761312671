import Crypto
import Foundation

/// The claims of an upstream provider's ID token after `UpstreamIDTokenVerifier` accepted it.
public struct UpstreamIDToken: Sendable, Equatable {
    public var issuer: String
    public var subject: String
    public var audience: [String]
    public var email: String?
    /// Apple sends `"true"` as a string, others a boolean: both count.
    public var emailVerified: Bool
    /// An address of Apple's private email relay.
    public var isPrivateEmail: Bool
    public var nonce: String?
    public var issuedAt: Date?
    public var expiresAt: Date?
    public var authTime: Date?
    /// `name`, or `given_name` and `family_name` joined, when the provider sends them.
    public var name: String?
}

/// Why an upstream ID token was refused; the case goes to the log and the audit event.
public enum UpstreamIDTokenError: Error, Equatable, Sendable {
    case malformed
    /// No key with the token's `kid` (the caller may fetch the keys again once).
    case unknownKey
    /// The signature, the algorithm or the key does not verify.
    case signature
    case issuer
    case audience
    case expired
    case issuedInFuture
    /// No `sub`, or one longer than 255 characters (OpenID Connect Core §2).
    case subject
    /// The `nonce` is missing or not the one this server sent (OpenID Connect Core §3.1.3.7 step 11).
    case nonce
}

/// Validates an ID token of an upstream provider as OpenID Connect Core §3.1.3.7 requires of a
/// client: signature by one of the provider's keys with an asymmetric algorithm, `iss` exactly
/// the provider's, `aud` containing one of our client ids (and `azp`, when there are several
/// audiences, one of them too), `exp` in the future, `iat` not in the future, and the `nonce`
/// this server sent when it sent one.
public struct UpstreamIDTokenVerifier: Sendable {
    public var issuer: String
    /// Our client ids at the provider (Apple: the Services ID and the apps' bundle ids).
    public var audiences: Set<String>
    public var keys: JWKS
    public var algorithms: Set<JWSAlgorithm>
    public var leeway: TimeInterval

    public init(
        issuer: String, audiences: Set<String>, keys: JWKS,
        algorithms: Set<JWSAlgorithm> = [.RS256, .ES256, .PS256, .EdDSA], leeway: TimeInterval = 60
    ) {
        self.issuer = issuer
        self.audiences = audiences
        self.keys = keys
        self.algorithms = algorithms
        self.leeway = leeway
    }

    /// The key id of a token before its keys are known: which JWK Set to fetch.
    public static func keyID(of token: String) -> String? {
        guard let header = token.split(separator: ".", omittingEmptySubsequences: false).first,
            let bytes = try? Base64URL.decode(String(header)),
            let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        else { return nil }
        return object["kid"] as? String
    }

    /// `nonce`: the value the token must carry; nil when none was sent.
    public func verify(_ token: String, nonce: String?, now: Date) throws(UpstreamIDTokenError)
        -> UpstreamIDToken
    {
        let verified: VerifiedJWS
        do {
            verified = try JWSVerifier(keys: keys, allowedAlgorithms: algorithms).verify(token)
        } catch .malformed {
            throw .malformed
        } catch .unknownKeyID {
            throw .unknownKey
        } catch {
            throw .signature
        }
        let registered: JWTRegisteredClaims
        do {
            registered = try JWTClaimsValidator(issuer: issuer, audience: nil, leeway: leeway).validate(
                verified.payload, now: now)
        } catch .expired, .missingClaim("exp") {
            throw .expired
        } catch .issuedInFuture, .notYetValid {
            throw .issuedInFuture
        } catch .issuerMismatch, .missingClaim("iss") {
            throw .issuer
        } catch {
            throw .malformed
        }
        guard let fields = try? JSONSerialization.jsonObject(with: Data(verified.payload)) as? [String: Any]
        else {
            throw .malformed
        }
        guard registered.audience.contains(where: audiences.contains) else { throw .audience }
        if registered.audience.count > 1 {
            guard let azp = fields["azp"] as? String, audiences.contains(azp) else { throw .audience }
        }
        guard let subject = registered.subject, !subject.isEmpty, subject.utf8.count <= 255 else {
            throw .subject
        }
        let tokenNonce = fields["nonce"] as? String
        if let nonce {
            guard let tokenNonce, constantTimeEquals(Array(tokenNonce.utf8), Array(nonce.utf8)) else {
                throw .nonce
            }
        }
        var name = (fields["name"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        if name == nil {
            let parts = [fields["given_name"] as? String, fields["family_name"] as? String].compactMap { $0 }
                .filter { !$0.isEmpty }
            if !parts.isEmpty { name = parts.joined(separator: " ") }
        }
        return UpstreamIDToken(
            issuer: issuer, subject: subject, audience: registered.audience,
            email: fields["email"] as? String,
            emailVerified: Self.flag(fields["email_verified"]),
            isPrivateEmail: Self.flag(fields["is_private_email"]),
            nonce: tokenNonce, issuedAt: registered.issuedAt, expiresAt: registered.expiresAt,
            authTime: (fields["auth_time"] as? NSNumber).map { Date(timeIntervalSince1970: $0.doubleValue) },
            name: name)
    }

    /// `true` or `"true"`; anything else is false.
    static func flag(_ value: Any?) -> Bool {
        if let text = value as? String { return text == "true" }
        if let number = value as? NSNumber, String(cString: number.objCType) == "c" {
            return number.boolValue
        }
        return false
    }
}
