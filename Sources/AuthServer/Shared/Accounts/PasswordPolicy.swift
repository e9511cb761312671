/// What a new password must satisfy (NIST SP 800-63B §5.1.1.2): length, not a trivially
/// guessable value; no composition rules, which only make passwords harder to remember.
enum PasswordPolicy {
    static let minimumLength = 8
    static let maximumLength = 1_024

    enum Problem: Error, Equatable, Sendable {
        case empty, tooShort, tooLong, sameAsEmail, repetitive

        var message: String {
            switch self {
            case .empty: "Enter a password."
            case .tooShort: "Use at least \(PasswordPolicy.minimumLength) characters."
            case .tooLong: "Use at most \(PasswordPolicy.maximumLength) characters."
            case .sameAsEmail: "Do not use your email address as your password."
            case .repetitive: "Choose a password that is not one repeated character."
            }
        }
    }

    static func check(_ password: String, email: String?) -> Problem? {
        if password.isEmpty { return .empty }
        if password.count < minimumLength { return .tooShort }
        if password.utf8.count > maximumLength { return .tooLong }
        if let email, password.lowercased() == email.lowercased() { return .sameAsEmail }
        if Set(password).count == 1 { return .repetitive }
        return nil
    }
}
