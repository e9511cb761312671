import Foundation

/// What a password change, a password removal, a recovery and "sign out everywhere else" end:
/// the account's other browser sessions, every refresh-token family and access token of the
/// account (an app signed in by a thief included), and a pending email change (its link needs
/// no session, so a thief who asked for it could still confirm it). Runs inside the caller's
/// transaction, so the change and the revocation commit together.
enum SignOutEverywhere {
    /// Why the families were revoked (`refresh_token_families.revoked_reason`).
    enum Reason: String {
        case passwordChanged = "password_changed"
        case passwordRemoved = "password_removed"
        case recovered = "account_recovered"
        case signedOutEverywhere = "signed_out_everywhere"
        /// The old address's link undid an email change (someone else may hold the account).
        case emailChangeUndone = "email_change_undone"
    }

    /// Ends every session of the account but `keep` (every one when nil) and revokes all of
    /// its tokens; returns how many sessions ended.
    static func run(accountID: UUID, keep: UUID?, reason: Reason, on db: some SQLExecutor) throws -> Int {
        let sessions = try SessionStore.revokeAll(accountID: accountID, except: keep, on: db)
        try OAuthStore.revokeAllTokens(accountID: accountID, reason: reason.rawValue, on: db)
        try db.query("DELETE FROM email_changes WHERE account_id = \(accountID)")
        return sessions
    }
}
