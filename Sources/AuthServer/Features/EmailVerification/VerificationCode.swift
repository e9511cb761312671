import Crypto

/// The six-digit one-time code and the link token, and how they are kept: only digests are stored.
enum VerificationCode {
    static let length = 6

    /// Uniform over 000000…999999 (rejection sampling: no modulo bias).
    static func generate(_ system: TimeAndRandomness) -> String {
        while true {
            let bytes = system.randomBytes(4)
            let value = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            // 4_294_000_000 is the largest multiple of 1_000_000 below 2^32.
            guard value < 4_294_000_000 else { continue }
            let text = String(value % 1_000_000)
            return String(repeating: "0", count: length - text.count) + text
        }
    }

    static func newSalt(_ system: TimeAndRandomness) -> [UInt8] { system.randomBytes(16) }

    /// The secret of a verification link: 128 random bits, base64url. Unlike the code it
    /// cannot be guessed, so the link needs no guess budget.
    static func newLinkToken(_ system: TimeAndRandomness) -> String {
        Base64URL.encode(system.randomBytes(16))
    }

    /// What is stored of a link token.
    static func linkDigest(_ token: String) -> [UInt8] { SHA256.hash(data: Array(token.utf8)).bytes }

    static func digest(salt: [UInt8], code: String) -> [UInt8] {
        SHA256.hash(data: salt + Array(code.utf8)).bytes
    }

    /// Whether `candidate` (as typed: spaces and dashes allowed between digits) matches the
    /// stored digest; compared in constant time.
    static func matches(_ candidate: String, salt: [UInt8], digest: [UInt8]) -> Bool {
        guard let code = normalize(candidate) else { return false }
        return constantTimeEquals(self.digest(salt: salt, code: code), digest)
    }

    /// Six ASCII digits, ignoring spaces and dashes a person may type or paste; nil otherwise.
    static func normalize(_ text: String) -> String? {
        let digits = text.unicodeScalars.filter { $0 != " " && $0 != "-" && $0 != "\u{A0}" }
        guard digits.count == length, digits.allSatisfy({ $0.value >= 0x30 && $0.value <= 0x39 }) else {
            return nil
        }
        return String(String.UnicodeScalarView(digits))
    }
}
