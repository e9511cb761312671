import Foundation
import Postgres

/// What the passwordless policy decides around a password sign-in or sign-up.
enum PasswordlessPolicyEnforcement {
    static let passwordSignUpDisabled = APIError(
        status: .forbidden, code: "password_sign_up_disabled",
        message: "New accounts are created with a passkey. Sign up with a passkey.")
    static let passkeyRequired = APIError(
        status: .forbidden, code: "passkey_required",
        message: "This account has a passkey. Sign in with your passkey.")

    /// Whether a verified password may sign this account in: false only when the policy
    /// refuses passwords to accounts that have a passkey and this one has one. Asked only
    /// after the password was found correct, so it never tells a guesser anything.
    static func passwordMaySignIn(
        _ policy: Configuration.PasswordlessPolicy, accountID: UUID, on db: some SQLExecutor
    )
        throws -> Bool
    {
        if policy.passwordSignInForPasskeyAccounts { return true }
        let rows = try db.query(
            "SELECT EXISTS (SELECT 1 FROM passkey_credentials WHERE account_id = \(accountID)) AS has_passkey"
        )
        return !(try rows.first?.decode("has_passkey", as: Bool.self) ?? false)
    }

    /// Counts a password sign-in and answers whether the sign-in flow should now ask the
    /// account to create a passkey: every `passkeyPromptAfterPasswordSignIns`-th password
    /// sign-in of an account that has none.
    static func countPasswordSignIn(
        _ policy: Configuration.PasswordlessPolicy, accountID: UUID, on db: some SQLExecutor
    ) throws -> Bool {
        let rows = try db.query(
            """
            UPDATE accounts SET password_sign_ins = password_sign_ins + 1 WHERE id = \(accountID)
            RETURNING password_sign_ins,
                      EXISTS (SELECT 1 FROM passkey_credentials WHERE account_id = \(accountID)) AS has_passkey
            """)
        guard let row = rows.first else { return false }
        let count: Int = try row.decode("password_sign_ins")
        let hasPasskey: Bool = try row.decode("has_passkey")
        let every = policy.passkeyPromptAfterPasswordSignIns
        return every > 0 && !hasPasskey && count % every == 0
    }

    /// Where a password sign-in continues: the prompt page (which then continues to
    /// `returnTo`), or `returnTo` itself.
    static func destination(prompt: Bool, returnTo: String) -> String {
        guard prompt else { return returnTo }
        let unreserved = CharacterSet(
            charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        return "/passkey-prompt?return_to="
            + (returnTo.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "")
    }
}
