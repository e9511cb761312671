import Foundation
import OIDC

/// A signed-in browser session, as found from its cookie.
///
/// This is what other endpoints (such as `/authorize`) build on: who is signed in, when they
/// last proved it (`authTime`, for `max_age` and `prompt=login`), and how (`amr`, RFC 8176).
struct CurrentSession: Sendable, Equatable {
    /// The session's id: safe to show and to put in tokens as `sid`; unlike the cookie's
    /// token it grants nothing.
    var id: UUID
    var accountID: UUID
    /// When the user last authenticated (OpenID Connect `auth_time`).
    var authTime: Date
    /// Authentication methods: `pwd` for a password; `hwk` (device-bound) or `swk` (synced)
    /// for a passkey, plus `user` and `mfa` when the authenticator verified the user; `email`
    /// for a sign-in completed through account recovery.
    var amr: [String]
    var expiresAt: Date
    /// Opened by completing an account recovery: that sign-in was the recovery's one step and
    /// never counts as recent for another credential change.
    var fromRecovery = false

    /// True when the user authenticated at most `maxAge` seconds before `now`: what
    /// `max_age` asks for. A `max_age` of 0 is satisfied only by a sign-in within the second.
    func isFresh(maxAge: Int, now: Date) -> Bool {
        now.timeIntervalSince(authTime) <= Double(maxAge)
    }

    /// True when the session may add or remove a passkey or set, change or remove the password:
    /// its user authenticated (signed in or re-authenticated) at most `windowSeconds` ago, and
    /// not only by completing a recovery.
    func mayChangeCredentials(windowSeconds: Int, now: Date) -> Bool {
        !fromRecovery && isFresh(maxAge: windowSeconds, now: now)
    }

    /// The methods after a re-authentication by `added`: the earlier ones, then the new ones.
    func amr(adding added: [String]) -> [String] {
        AuthenticationMethods.combining(amr, with: added)
    }
}

/// The `amr` rule of every sign-in is decided in OIDC; this name lets each file of the
/// application use it without importing OIDC.
typealias AuthenticationMethods = OIDC.AuthenticationMethods
