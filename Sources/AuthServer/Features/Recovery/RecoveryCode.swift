import Crypto

/// The eight-digit code mailed for a recovery, and its salted digest.
///
/// Eight digits can be typed from a phone's lock screen; their small space is made safe by
/// the short lifetime, the per-code attempt limit and the per-address throttle, not by length.
enum RecoveryCode {
    static let digits = 8
    static let saltLength = 16

    /// A uniformly random code: four random bytes, rejected above the largest multiple of 10^8
    /// below 2^32 so that every code is equally likely.
    static func generate(_ system: TimeAndRandomness) -> String {
        let space: UInt32 = 100_000_000
        let limit = UInt32.max - UInt32.max % space
        while true {
            let bytes = system.randomBytes(4)
            let value = bytes.reduce(UInt32(0)) { ($0 << 8) | UInt32($1) }
            if value < limit {
                let text = String(value % space)
                return String(repeating: "0", count: digits - text.count) + text
            }
        }
    }

    static func newSalt(_ system: TimeAndRandomness) -> [UInt8] { system.randomBytes(saltLength) }

    /// SHA-256(salt || code).
    static func digest(_ code: String, salt: [UInt8]) -> [UInt8] {
        SHA256.hash(data: salt + Array(code.utf8)).bytes
    }

    /// The code as typed with spaces and dashes removed; nil unless it is eight digits.
    static func normalize(_ text: String) -> String? {
        let kept = text.unicodeScalars.filter { $0 != " " && $0 != "-" }
        guard kept.count == digits, kept.allSatisfy({ $0.value >= 0x30 && $0.value <= 0x39 }) else {
            return nil
        }
        return String(String.UnicodeScalarView(kept))
    }
}
