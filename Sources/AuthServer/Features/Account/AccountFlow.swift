import Foundation
import HTTPServer

/// The signed-in account's profile, password and browser sessions. Every method is one API
/// operation; failures are `APIError`s.
struct AccountFlow {
    let services: AccountServices
    let store: any AccountFlowStore

    /// The account as its page shows it.
    struct Profile {
        var account: AccountSummary
        /// The password may go (`CredentialPolicy`): the page offers to remove it.
        var canRemovePassword: Bool
    }

    /// Which session an end request ended.
    enum SessionEnd: Equatable {
        case current
        case other
    }

    static let passkeyRequired = APIError(
        status: .conflict, code: "passkey_required",
        message: "Sign in with a passkey at least once before removing your password.")
    static let noPassword = APIError(
        status: .conflict, code: "no_password", message: "This account has no password.")

    func profile(session: CurrentSession) throws -> Profile {
        guard let account = try store.account(session.accountID) else { throw APIError.notSignedIn }
        let usedPasskey = try store.hasUsedPasskey(accountID: account.id)
        return Profile(
            account: account,
            canRemovePassword: CredentialPolicy.mayRemovePassword(
                hasPassword: account.hasPassword, hasUsedPasskey: usedPasskey,
                identities: try store.upstreamIdentities(accountID: account.id)))
    }

    /// Changes the display name and the profile fields the request names, all or none: every
    /// value is checked first (`ProfileFields`), then one statement writes them under the
    /// account's lock, so two saves never mix. Throws 400 naming the first bad field.
    func updateProfile(session: CurrentSession, change: ProfileChange) throws -> Profile {
        // 1. Every value against its rule, before anything is written.
        let checked: ProfileChange
        do {
            checked = try change.validated()
        } catch .displayName {
            throw APIError.invalidDisplayName
        } catch .field(let field) {
            throw APIError.invalidProfileField(field)
        }
        // 2. The change on the stored profile, in one transaction under the account's lock.
        try store.transaction { store in
            try store.lockAccount(session.accountID)
            guard let account = try store.account(session.accountID) else { throw APIError.notSignedIn }
            try store.updateProfile(
                accountID: account.id, displayName: checked.displayName ?? account.displayName,
                profile: checked.applied(to: account.profile))
        }
        return try profile(session: session)
    }

    /// Sets the password, or changes it after checking the current one; every other session
    /// of the account and every token it holds end with the change.
    func changePassword(session: CurrentSession, current: String?, new: String, request: HTTPRequest) throws {
        // 1. The account, and the new password against the policy.
        guard let account = try store.account(session.accountID) else { throw APIError.notSignedIn }
        if let problem = PasswordPolicy.check(new, email: account.email) {
            throw APIError.weakPassword(problem)
        }
        // 2. The current password, when there is one.
        let checked = try store.passwordHash(accountID: account.id)
        if let checked {
            try checkCurrentPassword(current, against: checked, of: account.id, email: account.email, request: request)
        }
        // 3. The change, the end of every other session and of every token commit together,
        //    with the password row locked, then the session held (the order a change that
        //    ends this session takes them in): a change, removal or recovery that committed
        //    meanwhile, and ended this session, is not undone.
        let hash = try services.hasher.hash(new)
        let ended = try store.transaction { store in
            let stored = try store.lockPassword(accountID: account.id)
            guard try store.holdSession(session) else { throw APIError.notSignedIn }
            guard stored == checked else { throw APIError.wrongPassword }
            try store.setPassword(accountID: account.id, hash: hash)
            let ended = try store.signOutEverywhere(
                accountID: account.id, keep: session.id, reason: .passwordChanged)
            try store.record(
                AuditEvent(
                    kind: .passwordChanged, actor: .user, accountID: account.id,
                    clientAddress: request.remoteAddress, detail: ["sessions_revoked": String(ended)]))
            return ended
        }
        // 4. Log and tell the account holder.
        services.log.info(
            "password.changed", ["account": account.id.uuidString, "sessionsRevoked": String(ended)])
        services.notifications.send(.passwordChanged, accountID: account.id, request: request)
    }

    /// Removes the password once a passkey has proven it signs in (`CredentialPolicy`).
    func removePassword(session: CurrentSession, request: HTTPRequest) throws {
        let accountID = session.accountID
        let removed = try store.transaction { store in
            // 1. The account's lock, which a passkey deletion holds too: the two never pass
            //    their checks on each other's stale view and leave no way to sign in.
            try store.lockAccount(accountID)
            // 1b. The password's row, then the session held live (the order a password change
            //     takes them in): a change that ended this session meanwhile refuses the removal
            //     instead of having its new password removed.
            _ = try store.lockPassword(accountID: accountID)
            guard try store.holdSession(session) else { throw APIError.notSignedIn }
            // 2. A passkey that has signed in.
            let usedPasskey = try store.hasUsedPasskey(accountID: accountID)
            let identities = try store.upstreamIdentities(accountID: accountID)
            guard
                CredentialPolicy.removePassword(hasUsedPasskey: usedPasskey, identities: identities)
                    == .allowed
            else {
                throw Self.passkeyRequired
            }
            // 3. The removal, the end of every other session and of every token commit together.
            guard try store.deletePassword(accountID: accountID) else { return false }
            let ended = try store.signOutEverywhere(
                accountID: accountID, keep: session.id, reason: .passwordRemoved)
            try store.record(
                AuditEvent(
                    kind: .passwordRemoved, actor: .user, accountID: accountID,
                    clientAddress: request.remoteAddress, detail: ["sessions_revoked": String(ended)]))
            return true
        }
        guard removed else { throw Self.noPassword }
        // 4. Log and tell the account holder.
        services.log.info("password.removed", ["account": accountID.uuidString])
        services.notifications.send(.passwordRemoved, accountID: accountID, request: request)
    }

    func sessions(session: CurrentSession) throws -> [SessionSummary] {
        try store.sessions(accountID: session.accountID)
    }

    func endSession(session: CurrentSession, id: UUID) throws -> SessionEnd {
        guard try store.endSession(id: id, accountID: session.accountID) else { throw APIError.notFound }
        return id == session.id ? .current : .other
    }

    // MARK: - Steps

    /// The current-password check of a password change: one guess on the same budget as a
    /// sign-in, counted before Argon2id runs. Throws 403 `wrong_password`, or 429 while the
    /// password is locked.
    private func checkCurrentPassword(
        _ given: String?, against hash: String, of accountID: UUID, email: String, request: HTTPRequest
    )
        throws
    {
        guard let given else { throw APIError.wrongPassword }
        let key = EmailAddress.normalize(email)
        let address = request.remoteAddress
        if let wait = try services.throttle.admit(accountKey: key, address: address) {
            services.log.warning(
                "password.change", ["step": "throttle", "reason": "tooManyFailures", "address": address])
            throw APIError.passwordThrottled(retryAfter: wait)
        }
        guard try services.hasher.verify(given, against: hash).isValid else { throw APIError.wrongPassword }
        try services.throttle.recordSuccess(accountKey: key, address: address, signedInAs: accountID)
    }
}

extension APIError {
    /// 400 `invalid_<field>` (`invalid_given_name`, `invalid_locale` …): the code and the
    /// message both name the field, so an app can point at it and a person can read why.
    static func invalidProfileField(_ field: ProfileFields.Field) -> APIError {
        APIError(
            status: .badRequest, code: "invalid_\(field.rawValue)",
            message: "\(field.rawValue): enter \(field.rule), or leave it empty to remove it.")
    }
}
