import Crypto
import Foundation

/// The client secret Sign in with Apple expects at its token and revocation endpoints: not a
/// shared string but an ES256 JWT signed with the team's developer key (the `.p8` file), so
/// no long-lived secret ever travels. Apple accepts one for at most 15777000 seconds (six
/// months); this server makes short-lived ones and makes a new one well before expiry.
/// - SeeAlso: Apple, "Creating a client secret" (Sign in with Apple REST API).
public struct AppleClientSecret: Sendable, Equatable {
    /// The `aud` Apple requires.
    public static let audience = "https://appleid.apple.com"
    /// The longest lifetime Apple accepts (`exp` − `iat`, seconds).
    public static let maximumLifetime: TimeInterval = 15_777_000
    /// The lifetime used unless told otherwise: short, so a leaked secret is soon worthless.
    public static let defaultLifetime: TimeInterval = 3600

    /// The compact JWS to send as `client_secret`.
    public let value: String
    public let clientID: String
    public let issuedAt: Date
    public let expiresAt: Date

    /// The secret for `clientID`: the services id for the web flow, the app's bundle id for
    /// codes an app received. Header `alg` ES256 and `kid` the key id; claims `iss` the team
    /// id, `iat`, `exp`, `aud` Apple, `sub` the client id.
    public init(
        teamID: String, keyID: String, clientID: String, privateKey: P256.Signing.PrivateKey, issuedAt: Date,
        lifetime: TimeInterval = defaultLifetime
    ) throws(JOSEError) {
        guard lifetime > 0, lifetime <= Self.maximumLifetime else { throw .malformed }
        let iat = Int(issuedAt.timeIntervalSince1970)
        let exp = iat + Int(lifetime)
        let claims = Claims(iss: teamID, iat: iat, exp: exp, aud: Self.audience, sub: clientID)
        let signer = try JWSSigner(privateKey: .p256(privateKey), algorithm: .ES256, keyID: keyID)
        self.value = try signer.sign(claims: claims, type: nil)
        self.clientID = clientID
        self.issuedAt = Date(timeIntervalSince1970: TimeInterval(iat))
        self.expiresAt = Date(timeIntervalSince1970: TimeInterval(exp))
    }

    /// Whether the secret may still be sent at `now`: more than `margin` seconds before it
    /// expires, so a request in flight never arrives with an expired secret.
    public func isUsable(at now: Date, margin: TimeInterval = 300) -> Bool {
        now.addingTimeInterval(margin) < expiresAt && now >= issuedAt.addingTimeInterval(-60)
    }

    private struct Claims: Encodable {
        var iss: String
        var iat: Int
        var exp: Int
        var aud: String
        var sub: String
    }
}
