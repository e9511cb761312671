import Crypto
import Foundation
import HTTPServer
import WebAuthnCore

/// Signing in with a passkey (WebAuthn authentication, discoverable credentials): `start`
/// issues a one-time challenge, `finish` verifies the assertion made over it and starts the
/// session.
struct PasskeySignInFlow {
    let services: AccountServices
    let store: any PasskeySignInStore

    init(services: AccountServices, store: (any PasskeySignInStore)? = nil) {
        self.services = services
        self.store = store ?? PostgresPasskeySignInStore(db: services.pool, sessions: services.sessions)
    }

    struct Started {
        var challengeID: UUID
        var options: PublicKeyCredentialRequestOptionsJSON
    }

    struct SignedIn {
        var accountID: UUID
        var session: CurrentSession
        var cookie: Cookie
        /// What the page passes to the WebAuthn Signal API for the account just signed in.
        var signals: SignalDetails
    }

    /// The account as its passkey provider should now know it (WebAuthn Level 3 §5.1.10):
    /// its user handle, every credential id it holds (so a provider drops passkeys deleted
    /// elsewhere), its email as `name` and its display name as `displayName`.
    struct SignalDetails: Equatable {
        var userHandle: [UInt8]
        var credentialIDs: [[UInt8]]
        var name: String
        var displayName: String
    }

    /// A challenge for any of this site's passkeys (no allow list: the authenticator offers
    /// the user's discoverable credentials).
    func start() throws(APIError) -> Started {
        try services.guarded("authentication.start") {
            let id = services.system.timeOrderedUUID()
            let challenge = services.system.randomBytes(32)
            try store.insertChallenge(
                id: id, challenge: challenge,
                lifetimeSeconds: services.configuration.webAuthn.challengeLifetimeSeconds)
            return Started(challengeID: id, options: services.requestOptions(challenge: challenge))
        }
    }

    /// Verifies `credential` against the challenge `challengeID` and signs its account in.
    /// Every refusal is logged, counted and recorded as `sign_in.failed`.
    func finish(challengeID: UUID, credential: AuthenticationResponseJSON, request: HTTPRequest)
        throws(APIError)
        -> SignedIn
    {
        let services = services
        func failed(_ reason: String, account: UUID?) {
            services.metrics.increment("auth_sign_ins_total", ["method": "passkey", "result": "failure"])
            services.record(
                AuditEvent(
                    kind: .signInFailed, actor: .user, accountID: account,
                    clientAddress: request.remoteAddress,
                    detail: ["method": "passkey", "reason": reason]))
        }
        return try services.guarded("authentication.finish") {
            // Challenge: consumed once, whatever else fails; nothing else counts without it.
            // The passkey the assertion names is looked up in the same statement, with the
            // account's details the page signals to the passkey provider.
            let rawID = (try? Base64URL.decode(credential.rawId)).flatMap { $0.isEmpty ? nil : $0 }
            let (consumed, found, now) = try store.consumeChallenge(id: challengeID, findingPasskey: rawID)
            guard let challenge = consumed else {
                services.log.warning(
                    "failed", ["step": "authentication.consumeChallenge", "reason": "challengeUnusable"])
                failed("challenge_unusable", account: nil)
                throw APIError.challengeInvalid
            }
            // Credential: the passkey named by the assertion.
            guard let found else {
                services.log.warning(
                    "failed", ["step": "authentication.findCredential", "reason": "unknownCredential"])
                failed("unknown_credential", account: nil)
                throw APIError.unknownCredential(rpID: services.rpID, credentialID: credential.rawId)
            }
            let record = found.record
            // Assertion: signature, origin, RP id, flags (user verification required), user handle.
            let verified: VerifiedAuthentication
            do {
                verified = try services.authenticationVerifier.verify(
                    credential, expectedChallenge: challenge,
                    credential: record.stored(userHandle: found.userHandle),
                    requireUserVerification: true, requireUserHandle: true)
            } catch {
                services.log.warning(
                    "failed", ["step": "authentication.verifyAssertion", "reason": webAuthnReason(error)])
                failed("verification_failed", account: record.accountID)
                throw APIError.verificationFailed
            }
            // Account state: a disabled account gets the answer of a failed verification, so
            // nothing tells the caller that the account exists.
            if found.accountDisabled {
                services.log.warning(
                    "failed", ["step": "authentication.accountState", "reason": "accountDisabled"])
                failed("account_disabled", account: record.accountID)
                throw APIError.verificationFailed
            }
            // Counter: a counter that did not grow may refuse the sign-in (by policy).
            guard services.admitSignCount(verified, of: record, clientAddress: request.remoteAddress) else {
                failed("counter_regression", account: record.accountID)
                throw APIError.verificationFailed
            }
            // Use, session and audit event commit together, in one round trip when the browser
            // holds no other session: none of them is read back (the session starts at the
            // challenge's consumption).
            let amr = AuthenticationMethods.passkey(
                backupEligible: record.backupEligible, userVerified: verified.userVerified)
            let (token, session) = try store.transaction { store in
                try store.recordUse(
                    of: record.id, signCount: verified.newSignCount, backedUp: verified.backedUp)
                let started = try store.startSession(
                    SessionStart(
                        adding: request, accountID: record.accountID, amr: amr, cookies: services.cookies),
                    authTime: now)
                try store.record(
                    AuditEvent(
                        kind: .signInSucceeded, actor: .user, accountID: record.accountID,
                        clientAddress: request.remoteAddress, detail: ["method": "passkey"]))
                return (started.token, started.session)
            }
            services.metrics.increment("auth_sign_ins_total", ["method": "passkey", "result": "success"])
            services.log.info("signin.passkey", ["step": "signedIn", "account": record.accountID.uuidString])
            return SignedIn(
                accountID: record.accountID, session: session, cookie: services.cookies.session(token),
                signals: SignalDetails(
                    userHandle: found.userHandle, credentialIDs: found.credentialIDs, name: found.email,
                    displayName: found.displayName))
        }
    }
}

extension APIError {
    /// A passkey this site does not know (deleted, or registered elsewhere): the page passes
    /// the signal on so the authenticator can forget it.
    static func unknownCredential(rpID: String, credentialID: String) -> APIError {
        var error = APIError(
            status: .unauthorized, code: "unknown_credential",
            message: "This passkey is not registered here. Use another passkey or your password.")
        error.unknownCredential = .init(rpId: rpID, credentialId: credentialID)
        return error
    }
}
