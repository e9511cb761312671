import Foundation

/// A parsed password hash in PHC string format
/// (https://github.com/P-H-C/phc-string-format), for the schemes this server verifies.
struct PHCString {
    enum Scheme: Equatable {
        case argon2(
            Argon2.Variant, version: UInt32, memoryKiB: UInt32, iterations: UInt32, parallelism: UInt32)
        /// `ln` is log2(N).
        case scrypt(ln: UInt32, r: UInt32, p: UInt32)
        case pbkdf2(digest: String, iterations: UInt32)
    }

    let scheme: Scheme
    let salt: [UInt8]
    let hash: [UInt8]

    init(parsing text: String) throws(CryptoError) {
        let fields = text.split(separator: "$", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 5, fields[0].isEmpty else { throw .invalidPasswordHash }
        let id = fields[1]
        switch id {
        case "argon2id", "argon2i", "argon2d":
            guard let variant = Argon2.Variant(rawValue: id) else { throw .invalidPasswordHash }
            var rest = Array(fields[2...])
            var version: UInt32 = 0x10
            if rest.first?.hasPrefix("v=") == true {
                let values = try Self.parameters(rest[0])
                guard values.count == 1, let v = values["v"], v == 0x10 || v == 0x13 || v == 16 || v == 19
                else {
                    throw .invalidPasswordHash
                }
                version = v == 16 ? 0x10 : (v == 19 ? 0x13 : v)
                rest.removeFirst()
            }
            guard rest.count == 3 else { throw .invalidPasswordHash }
            let values = try Self.parameters(rest[0])
            guard let m = values["m"], let t = values["t"], let p = values["p"],
                Set(values.keys).isSubset(of: ["m", "t", "p"])
            else { throw .invalidPasswordHash }
            scheme = .argon2(variant, version: version, memoryKiB: m, iterations: t, parallelism: p)
            salt = try Self.decode(rest[1])
            hash = try Self.decode(rest[2])
        case "scrypt":
            guard fields.count == 5 else { throw .invalidPasswordHash }
            let values = try Self.parameters(fields[2])
            guard let ln = values["ln"], let r = values["r"], let p = values["p"], values.count == 3, ln < 32
            else {
                throw .invalidPasswordHash
            }
            scheme = .scrypt(ln: ln, r: r, p: p)
            salt = try Self.decode(fields[3])
            hash = try Self.decode(fields[4])
        case "pbkdf2-sha256", "pbkdf2-sha512":
            guard fields.count == 5 else { throw .invalidPasswordHash }
            // Both the PHC form `i=N` and the passlib form `N` (with `.` for `+`) occur.
            let rounds = fields[2].hasPrefix("i=") ? try Self.parameters(fields[2])["i"] : UInt32(fields[2])
            guard let rounds else { throw .invalidPasswordHash }
            scheme = .pbkdf2(digest: id == "pbkdf2-sha256" ? "SHA256" : "SHA512", iterations: rounds)
            salt = try Self.decode(fields[3])
            hash = try Self.decode(fields[4])
        default:
            throw .invalidPasswordHash
        }
        guard !salt.isEmpty, (4...1024).contains(hash.count) else { throw .invalidPasswordHash }
    }

    /// Recomputes the hash for `password` with the stored scheme, salt and length.
    /// Parameters outside the supported bounds are `invalidPasswordHash`. `memory`: a block
    /// for Argon2 (see `Argon2.hash(memory:)`).
    func compute(password: [UInt8], memory: UnsafeMutableRawBufferPointer? = nil) throws(CryptoError)
        -> [UInt8]
    {
        do {
            switch scheme {
            case let .argon2(variant, version, m, t, p):
                return try Argon2.hash(
                    password: password, salt: salt, variant: variant, iterations: t, memoryKiB: m,
                    parallelism: p, length: hash.count, version: version, memory: memory)
            case let .scrypt(ln, r, p):
                return try KDF.scrypt(
                    password: password, salt: salt, n: UInt64(1) << UInt64(ln), r: r, p: p, length: hash.count
                )
            case let .pbkdf2(digest, iterations):
                return try KDF.pbkdf2(
                    password: password, salt: salt, iterations: iterations, digest: digest, length: hash.count
                )
            }
        } catch .invalidParameter {
            throw .invalidPasswordHash
        }
    }

    /// Whether a hash should be replaced by one made under `policy`.
    func isWeaker(than policy: PasswordHasher.Parameters) -> Bool {
        guard case let .argon2(variant, version, m, t, p) = scheme else { return true }
        return variant != .argon2id || version != Argon2.currentVersion || m < policy.memoryKiB
            || t < policy.iterations || p < policy.parallelism || hash.count < PasswordHasher.hashByteCount
            || salt.count < PasswordHasher.saltByteCount
    }

    /// `a=1,b=2` → ["a": 1, "b": 2]; duplicates, empty or non-numeric values are refused.
    private static func parameters(_ field: String) throws(CryptoError) -> [String: UInt32] {
        var result: [String: UInt32] = [:]
        for pair in field.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, parts[1].allSatisfy(\.isASCII),
                let value = UInt32(parts[1]), result[String(parts[0])] == nil
            else { throw .invalidPasswordHash }
            result[String(parts[0])] = value
        }
        return result
    }

    /// PHC base64: standard alphabet without padding. Padding and the `.` of passlib's
    /// adapted base64 are tolerated, since imported hashes use both.
    private static func decode(_ field: String) throws(CryptoError) -> [UInt8] {
        var text = field.replacingOccurrences(of: ".", with: "+")
        while text.hasSuffix("=") { text.removeLast() }
        guard !text.isEmpty, let bytes = Base64Codec.standard.decode(text) else { throw .invalidPasswordHash }
        return bytes
    }
}
