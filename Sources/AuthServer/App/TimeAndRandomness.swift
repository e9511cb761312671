import Crypto
import Foundation
import OIDC
import Postgres

/// The clock and the random source, the two inputs a flow must never take from the system
/// directly: flows read `system.now()` and draw `system.randomBytes(n)`, so tests can move
/// the clock and the application can be built with a fixed source.
struct TimeAndRandomness: Sendable {
    var now: @Sendable () -> Date
    var randomBytes: @Sendable (Int) -> [UInt8]

    /// The real clock and the operating system's CSPRNG.
    static let live = TimeAndRandomness(now: { Date() }, randomBytes: { SecureRandom.bytes(count: $0) })

    /// Random tokens (opaque access tokens, pushed-request references, browser bindings) drawn
    /// from this source; what is stored by the million is made by `timeOrderedToken` instead.
    var tokens: TokenGenerator { TokenGenerator(randomBytes: randomBytes) }

    /// An access token's `jti`, a refresh token, an authorization code, a session's token: the
    /// current time in milliseconds as 12 hex digits, then a 256-bit random token. Stored in an
    /// index, values made one after another land next to each other at its right edge, where
    /// fully random ones each dirty another page of a large index (at a million accounts, a third
    /// of PostgreSQL's CPU per client_credentials grant: bench/NOTES.md). The time it shows is
    /// the token's issue (an access token's `iat`, a session's start, a refresh token's
    /// introspected `iat`). A secret one is stored under `TimeOrderedToken.key`.
    func timeOrderedToken() -> String {
        let milliseconds = UInt64(max(0, now().timeIntervalSince1970 * 1000))
        let hex = String(milliseconds, radix: 16)
        return String(repeating: "0", count: max(0, 12 - hex.count)) + hex + tokens.next()
    }

    /// A random (version 4) UUID drawn from this source: the id of what lives for years and is
    /// shown to others (an account's id is its `sub`), so it tells nothing, not even its age.
    func uuid() -> UUID {
        var bytes = randomBytes(16)
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return Self.uuid(bytes)
    }

    /// A version 7 UUID (RFC 9562 §5.7): the current time in milliseconds (48 bits), then 74
    /// random bits. The id of records written by the thousand (sessions, challenges, codes,
    /// refresh-token families), for the reason of `timeOrderedToken`: they land at the right
    /// edge of their primary key and of every index that leads with them. Their time is no
    /// secret (a session's `auth_time`, a code's issue), and none of them is a bearer secret.
    func timeOrderedUUID() -> UUID {
        var bytes = randomBytes(16)
        let milliseconds = UInt64(max(0, now().timeIntervalSince1970 * 1000)) & 0xFFFF_FFFF_FFFF
        for index in 0..<6 {
            bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> (40 - 8 * UInt64(index)))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x70
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return Self.uuid(bytes)
    }

    private static func uuid(_ bytes: [UInt8]) -> UUID {
        UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8],
                bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}

/// The row key of a bearer secret made by `TimeAndRandomness.timeOrderedToken` (a refresh
/// token, an authorization code, a session's token): 32 bytes, the token's time in 6 bytes, then
/// the first 26 bytes (208 bits) of the whole token's SHA-256. New rows land at the right edge of
/// keys that grow to millions of entries instead of on a random page of them; the row is still
/// found only with the whole token, and the key does not give the token back. Any other text (a
/// token issued before these carried their time, or one that is not a token at all) is keyed by
/// its whole SHA-256, so older tokens keep working until they expire.
enum TimeOrderedToken {
    static func key(_ token: String) -> [UInt8] {
        let digest = SHA256.hash(data: Array(token.utf8)).bytes
        // The time as `timeOrderedToken` writes it: 12 lower-case hex digits, no other spelling.
        let time = String(decoding: token.utf8.prefix(12), as: UTF8.self)
        guard token.utf8.count == 55, let bytes = Hex.decode(time), Hex.encode(bytes) == time else {
            return digest
        }
        return bytes + digest.prefix(26)
    }
}

extension UUID {
    /// The lowercase text form used on the wire and in logs and audit details.
    var lowercased: String { lowercasedText }
}

extension Duration {
    /// The duration in seconds, for APIs that take a `TimeInterval`.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}
