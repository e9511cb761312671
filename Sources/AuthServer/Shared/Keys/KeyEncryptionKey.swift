import Crypto
import Foundation

/// The 256-bit key that seals signing keys at rest (AES-256-GCM).
///
/// Looked up in this order: `AUTH_SERVER_KEY_ENCRYPTION_KEY` (base64url), the file named by
/// `key_encryption_key_file`, and, only with the embedded database, `data_dir/key-encryption-key`,
/// generated on first run. A server with an external database and no key refuses to start:
/// generating one silently would make the keys already in the database unreadable.
enum KeyEncryptionKey {
    static let embeddedFileName = "key-encryption-key"

    static func load(_ configuration: Configuration, environment: [String: String]) throws -> SymmetricKey {
        if let text = environment[ConfigurationLoader.keyEncryptionKeyVariable] {
            return try parse(text, source: "$\(ConfigurationLoader.keyEncryptionKeyVariable)")
        }
        if let path = configuration.keyEncryptionKeyFile {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw StartupError("cannot read key_encryption_key_file \(path)")
            }
            return try parse(String(decoding: data, as: UTF8.self), source: path)
        }
        guard configuration.databaseURL == nil else {
            throw StartupError(
                "no key-encryption key: set key_encryption_key_file or \(ConfigurationLoader.keyEncryptionKeyVariable) "
                    + "(32 random bytes, base64url; signing keys are stored encrypted with it)")
        }
        let url = URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent(embeddedFileName)
        if let data = FileManager.default.contents(atPath: url.path) {
            return try parse(String(decoding: data, as: UTF8.self), source: url.path)
        }
        let key = SymmetricKey(size: .bits256)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        guard
            FileManager.default.createFile(
                atPath: url.path, contents: Data((Base64URL.encode(key.bytes) + "\n").utf8),
                attributes: [.posixPermissions: 0o600])
        else { throw StartupError("cannot write \(url.path)") }
        return key
    }

    static func parse(_ text: String, source: String) throws -> SymmetricKey {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = try? Base64URL.decode(trimmed), bytes.count == 32 else {
            throw StartupError("the key-encryption key in \(source) must be 32 bytes in base64url (43 characters)")
        }
        return SymmetricKey(bytes: bytes)
    }
}
