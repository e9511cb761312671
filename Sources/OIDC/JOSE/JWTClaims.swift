import Foundation

/// The registered claims of a JWT (RFC 7519 §4.1) after validation.
public struct JWTRegisteredClaims: Sendable, Equatable {
    public var issuer: String?
    public var subject: String?
    /// `aud`, whether it was a string or an array.
    public var audience: [String]
    public var expiresAt: Date?
    public var notBefore: Date?
    public var issuedAt: Date?
    public var jwtID: String?
}

/// Checks the time and identity claims of a verified JWT payload against an injected
/// clock, so tests and replays are deterministic.
public struct JWTClaimsValidator: Sendable {
    /// The exact `iss` required, if any.
    public var issuer: String?
    /// A value `aud` must contain, if any.
    public var audience: String?
    /// Allowed clock skew, in seconds, for `exp`, `nbf` and `iat`.
    public var leeway: TimeInterval
    /// Whether `exp` must be present (it must for ID tokens and access tokens).
    public var requireExpiration: Bool

    public init(issuer: String?, audience: String?, leeway: TimeInterval = 60, requireExpiration: Bool = true) {
        self.issuer = issuer
        self.audience = audience
        self.leeway = leeway
        self.requireExpiration = requireExpiration
    }

    /// Validates `payload` (JSON) at time `now`.
    public func validate(_ payload: [UInt8], now: Date) throws(JOSEError) -> JWTRegisteredClaims {
        let claims = try Self.parse(payload)
        let time = now.timeIntervalSince1970

        if let exp = claims.expiresAt?.timeIntervalSince1970 {
            guard time < exp + leeway else { throw .expired }
        } else if requireExpiration {
            throw .missingClaim("exp")
        }
        if let nbf = claims.notBefore?.timeIntervalSince1970, time + leeway < nbf { throw .notYetValid }
        if let iat = claims.issuedAt?.timeIntervalSince1970, iat > time + leeway { throw .issuedInFuture }
        if let issuer {
            guard let iss = claims.issuer else { throw .missingClaim("iss") }
            guard iss == issuer else { throw .issuerMismatch }
        }
        if let audience {
            guard !claims.audience.isEmpty else { throw .missingClaim("aud") }
            guard claims.audience.contains(audience) else { throw .audienceMismatch }
        }
        return claims
    }

    static func parse(_ payload: [UInt8]) throws(JOSEError) -> JWTRegisteredClaims {
        guard let object = try? JSONSerialization.jsonObject(with: Data(payload)),
            let fields = object as? [String: Any]
        else { throw .malformed }

        func string(_ name: String) throws(JOSEError) -> String? {
            guard let value = fields[name] else { return nil }
            guard let text = value as? String else { throw .invalidClaim(name) }
            return text
        }
        func date(_ name: String) throws(JOSEError) -> Date? {
            guard let value = fields[name] else { return nil }
            guard let number = value as? NSNumber, !Self.isBoolean(number), number.doubleValue.isFinite else {
                throw .invalidClaim(name)
            }
            return Date(timeIntervalSince1970: number.doubleValue)
        }
        var audience: [String] = []
        if let aud = fields["aud"] {
            if let single = aud as? String {
                audience = [single]
            } else if let list = aud as? [Any], let strings = list as? [String], strings.count == list.count {
                audience = strings
            } else {
                throw .invalidClaim("aud")
            }
        }
        return JWTRegisteredClaims(
            issuer: try string("iss"), subject: try string("sub"), audience: audience,
            expiresAt: try date("exp"), notBefore: try date("nbf"), issuedAt: try date("iat"), jwtID: try string("jti"))
    }

    /// JSON `true`/`false` arrive as NSNumber too (type code "c"); they are not NumericDates.
    private static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }
}
