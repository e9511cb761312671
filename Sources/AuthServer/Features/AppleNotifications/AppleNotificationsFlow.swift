import Foundation
import OIDC

/// Acts on Sign in with Apple's server-to-server notifications: verify (Apple's keys, `iss`,
/// `aud` one of the configured Services ID and bundle ids, a recent `iat`), act once per `jti`,
/// and record what was done.
///
/// - `consent-revoked`: the user stopped using Sign in with Apple with this team's apps: the
///   link is removed. Sessions and tokens stay: nothing records which of them came through
///   Apple, and the account may have other ways to sign in.
/// - `account-delete`: the Apple Account is gone: the link is removed, and every session and
///   token of the account ends (whoever holds them signed in as someone who no longer exists
///   at Apple).
/// - `email-disabled` / `email-enabled`: mail to the private relay address stops or resumes
///   arriving; the link's `email_deliverable` follows, and the mailer skips an undeliverable
///   relay address.
/// - SeeAlso: Apple, "Processing changes for Sign in with Apple accounts".
struct AppleNotificationsFlow {
    let oauth: OAuthServices

    enum Outcome: String {
        /// The event was acted on.
        case processed
        /// No account is linked to the Apple user, or the event type is unknown.
        case ignored
        /// The `jti` was seen before: nothing done again.
        case replayed
    }

    func receive(_ payload: String) throws -> Outcome {
        // 1. Sign in with Apple is configured; the audiences are its client ids.
        guard let provider = oauth.configuration.appleProvider, let apple = provider.apple else {
            throw OAuthError(.invalidRequest, hint: "Sign in with Apple is not configured on this server.")
        }
        let audiences = (apple.servicesID.map { [$0] } ?? []) + apple.bundleIDs
        // 2. Apple's keys (fetched again for an unknown `kid`, at most every few seconds).
        let keys: JWKS
        do {
            keys = try ClientKeyFetcher.shared.keys(
                at: apple.endpoints.keys, keyID: AppleNotificationVerifier.keyID(of: payload),
                fetch: provider.fetch)
        } catch {
            oauth.log.warning(
                "apple.notification", ["step": "keys", "event": "failed", "reason": "\(error)"])
            throw OAuthError(.temporarilyUnavailable, hint: "Apple's keys could not be fetched.")
        }
        // 3. The signature and claims.
        let verifier = AppleNotificationVerifier(audiences: audiences, keys: keys)
        let notification: AppleNotification
        do {
            notification = try verifier.verify(payload, now: oauth.system.now())
        } catch {
            oauth.log.warning(
                "apple.notification", ["step": "verify", "event": "refused", "reason": error.reason])
            oauth.metrics.increment(
                "auth_apple_notifications_total", ["type": "unverified", "action": "refused"])
            throw OAuthError(.invalidRequest, hint: "The notification does not verify (\(error.reason)).")
        }
        // 4. Once per `jti`, then the event, with its audit record, in one transaction.
        let expiresAt = notification.issuedAt.addingTimeInterval(verifier.maximumAge + verifier.leeway)
        let (outcome, action) = try oauth.pool.transaction { connection -> (Outcome, String) in
            guard
                try AppleNotificationsStore.recordJWTID(
                    notification.jwtID, expiresAt: expiresAt, on: connection)
            else { return (.replayed, "none") }
            let identity = try UpstreamIdentityStore.find(
                issuer: UpstreamProvider.appleIssuer, subject: notification.subject, on: connection)
            var detail = ["type": notification.typeName]
            let action: String
            switch (notification.type, identity) {
            case (_, nil):
                action = "no_link"
            case (nil, _):
                action = "unknown_type"
            case (.consentRevoked?, let identity?):
                // Apple: return to a signed-out state (TN3194). What came through a provider
                // ends; a password's or passkey's sessions do not depend on Apple.
                try AppleNotificationsStore.unlink(identity, on: connection)
                let sessions = try AppleNotificationsStore.signOutFederated(
                    accountID: identity.accountID, reason: "apple_consent_revoked", on: connection)
                detail["sessions_revoked"] = String(sessions)
                action = "unlinked_signed_out"
            case (.accountDelete?, let identity?):
                try AppleNotificationsStore.unlink(identity, on: connection)
                let sessions = try SessionStore.revokeAll(
                    accountID: identity.accountID, except: nil, on: connection)
                try OAuthStore.revokeAllTokens(
                    accountID: identity.accountID, reason: "apple_account_deleted", on: connection)
                detail["sessions_revoked"] = String(sessions)
                action = "unlinked_signed_out"
            case (.emailDisabled?, let identity?):
                try UpstreamIdentityStore.setEmailDeliverable(id: identity.id, false, on: connection)
                action = "email_undeliverable"
            case (.emailEnabled?, let identity?):
                try UpstreamIdentityStore.setEmailDeliverable(id: identity.id, true, on: connection)
                action = "email_deliverable"
            }
            detail["action"] = action
            try AuditLog.record(
                AuditEvent(
                    kind: .appleNotification, actor: .system, accountID: identity?.accountID,
                    clientID: notification.audience, detail: detail),
                on: connection)
            return (identity == nil || notification.type == nil ? .ignored : .processed, action)
        }
        oauth.metrics.increment(
            "auth_apple_notifications_total",
            ["type": notification.type?.rawValue ?? "unknown", "action": action])
        oauth.log.info(
            "apple.notification",
            ["event": outcome.rawValue, "type": notification.typeName, "action": action])
        return outcome
    }
}
