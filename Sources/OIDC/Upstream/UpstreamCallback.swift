import Crypto
import Foundation

/// Why an upstream provider's answer at the callback is refused.
public enum UpstreamCallbackError: Error, Equatable, Sendable {
    /// The provider answered with an error (RFC 6749 §4.1.2.1), e.g. the user cancelled.
    case upstreamError(String)
    /// No state, or not one this server makes.
    case malformedState
    /// Unknown, already used, or expired: each state is good for one answer.
    case unknownState
    /// The state was issued for another provider's callback.
    case wrongProvider
    /// The browser that returns is not the one that started (no binding cookie, or another's):
    /// an attacker cannot make a victim's browser finish the attacker's sign-in.
    case otherBrowser
    case missingCode
}

/// The checks of the answer at `/upstream/<provider>/callback`, in order, before the code
/// is exchanged.
public enum UpstreamCallback {
    /// What was stored when the request started (already consumed by the caller, once).
    public struct Stored: Sendable, Equatable {
        public var provider: String
        public var bindingDigest: [UInt8]
        public var expiresAt: Date

        public init(provider: String, bindingDigest: [UInt8], expiresAt: Date) {
            self.provider = provider
            self.bindingDigest = bindingDigest
            self.expiresAt = expiresAt
        }
    }

    /// Returns the authorization code to exchange.
    /// - SeeAlso: OpenID Connect Core §3.1.2.7, RFC 6749 §10.12 (state binds the answer to
    ///   the browser's session), RFC 9700 §4.7.
    public static func check(
        state: String?, code: String?, error: String?, bindingCookie: String?, stored: Stored?,
        provider: String, now: Date
    ) throws(UpstreamCallbackError) -> String {
        // Step 1. A state this server could have made.
        guard let state, UpstreamRequestSecrets.isWellFormed(state: state) else { throw .malformedState }
        // Step 2. Known, unused and unexpired (the caller consumed it in one statement).
        guard let stored, stored.expiresAt > now else { throw .unknownState }
        // Step 3. For this provider's callback.
        guard stored.provider == provider else { throw .wrongProvider }
        // Step 4. In the browser that started the request.
        guard let bindingCookie,
            constantTimeEquals(UpstreamRequestSecrets.digest(bindingCookie), stored.bindingDigest)
        else { throw .otherBrowser }
        // Step 5. The provider's own refusal, after the state proved the answer is ours.
        if let error { throw .upstreamError(error) }
        // Step 6. A code to exchange.
        guard let code, !code.isEmpty else { throw .missingCode }
        return code
    }
}

/// The `user` member Apple posts with the first authorization of a user for a client only:
/// `{"name":{"firstName":…,"lastName":…},"email":…}`. It is not signed, so only the name is
/// taken from it (the address comes from the verified ID token).
/// - SeeAlso: Sign in with Apple REST API, "Incorporating Sign in with Apple into other platforms".
public struct AppleUserInfo: Sendable, Equatable {
    public var firstName: String?
    public var lastName: String?

    public init(firstName: String?, lastName: String?) {
        self.firstName = firstName
        self.lastName = lastName
    }

    /// Nil for absent or malformed JSON: the name is a convenience, never a reason to refuse.
    public init?(json: String?) {
        guard let json, json.utf8.count <= 4096,
            case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(json.utf8)),
            case .object(let name)? = object["name"]
        else { return nil }
        func text(_ key: String) -> String? {
            guard case .string(let value)? = name[key] else { return nil }
            let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : String(trimmed.prefix(100))
        }
        self.init(firstName: text("firstName"), lastName: text("lastName"))
        if firstName == nil && lastName == nil { return nil }
    }

    /// The display name: given name first, as Apple's own forms show it.
    public var displayName: String {
        [firstName, lastName].compactMap { $0 }.joined(separator: " ")
    }
}
