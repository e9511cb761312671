import Foundation
import OIDC

/// The file `auth-server users import` reads: a JSON array of `{"email", "name",
/// "password_hash"}` objects. Checked whole before anything is written.
enum AccountImport {
    struct Entry: Sendable, Equatable {
        var email: EmailAddress
        var name: String
        var passwordHash: String
    }

    /// Parses and validates an import file; every problem names the entry's index.
    static func parse(_ data: Data) -> (entries: [Entry], problems: [String]) {
        guard case .array(let array)? = try? JSONValue.parse(data) else {
            return ([], ["the file must be a JSON array of user objects"])
        }
        var entries: [Entry] = []
        var problems: [String] = []
        var seen: [String: Int] = [:]
        for (index, item) in array.enumerated() {
            guard case .object(let object) = item else {
                problems.append("[\(index)]: must be an object")
                continue
            }
            var entryProblems: [String] = []
            let email = object["email"]?.stringValue.flatMap(EmailAddress.init)
            if email == nil { entryProblems.append("[\(index)].email: missing or not a valid email address") }
            let name = object["name"]?.stringValue.flatMap(AccountStore.validDisplayName)
            if name == nil { entryProblems.append("[\(index)].name: missing or not 1 to 200 characters") }
            let hash = object["password_hash"]?.stringValue
            if hash == nil || !isSupportedPHC(hash ?? "") {
                entryProblems.append(
                    "[\(index)].password_hash: missing or not a PHC string ($argon2id$, $scrypt$, $pbkdf2-sha256$)"
                )
            }
            for key in object.keys where !["email", "name", "password_hash"].contains(key) {
                entryProblems.append("[\(index)].\(key): unknown member")
            }
            if let email {
                if let first = seen[email.normalized] {
                    entryProblems.append("[\(index)].email: duplicates entry [\(first)]")
                } else {
                    seen[email.normalized] = index
                }
            }
            if entryProblems.isEmpty, let email, let name, let hash {
                entries.append(Entry(email: email, name: name, passwordHash: hash))
            }
            problems += entryProblems
        }
        return (entries, problems)
    }

    /// A structural check of a PHC string of a scheme the hasher verifies; the full parse
    /// happens at sign-in.
    static func isSupportedPHC(_ text: String) -> Bool {
        let fields = text.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count >= 5, fields[0].isEmpty else { return false }
        let schemes = ["argon2id", "argon2i", "argon2d", "scrypt", "pbkdf2-sha256", "pbkdf2-sha512"]
        guard schemes.contains(String(fields[1])) else { return false }
        let base64 = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/.=")
        return fields.suffix(2).allSatisfy { !$0.isEmpty && $0.allSatisfy(base64.contains) }
    }
}
