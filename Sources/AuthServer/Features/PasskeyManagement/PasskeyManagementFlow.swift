import Foundation
import HTTPServer
import WebAuthnCore

/// Adding, listing, renaming and removing the passkeys of the signed-in account. Every method
/// is one API operation; failures are `APIError`s.
struct PasskeyManagementFlow {
    let services: AccountServices
    let store: any PasskeyManagementStore

    /// A registration ceremony begun: the challenge's id and the options for
    /// `navigator.credentials.create`.
    struct RegistrationStart {
        var challengeID: UUID
        var options: PublicKeyCredentialCreationOptionsJSON
    }

    /// A passkey removed: what the page passes to `signalAllAcceptedCredentials`.
    struct Removal {
        var userHandle: [UInt8]
        var remainingCredentialIDs: [[UInt8]]
    }

    static let lastCredential = APIError(
        status: .conflict, code: "last_credential",
        message: "This is your only way to sign in. Add another passkey or set a password first.")
    static let invalidName = APIError(
        status: .badRequest, code: "invalid_name", message: "Enter a name of 1 to 100 characters.")

    /// A modal registration from the account page. The options exclude the account's
    /// passkeys, so an authenticator that already holds one says so instead of making a second.
    func registrationStart(session: CurrentSession) throws -> RegistrationStart {
        // 1. The account.
        guard let account = try store.account(session.accountID) else { throw APIError.notSignedIn }
        // 2. A one-time challenge, bound to the account.
        let id = services.system.timeOrderedUUID()
        let challenge = services.system.randomBytes(32)
        try store.createRegistrationChallenge(
            id: id, challenge: challenge, accountID: account.id,
            lifetimeSeconds: services.configuration.webAuthn.challengeLifetimeSeconds)
        // 3. The options.
        let existing = try store.passkeys(accountID: account.id)
        let options = services.creationOptions(
            challenge: challenge, userHandle: account.userHandle, name: account.email,
            displayName: account.displayName, exclude: existing, conditional: false)
        return RegistrationStart(challengeID: id, options: options)
    }

    /// Completes a registration: a modal one from `registrationStart`, or the conditional
    /// upgrade a password sign-in offers (the only ceremony where UP=0 is accepted).
    func registrationFinish(
        session: CurrentSession, challengeID: UUID, credential: RegistrationResponseJSON, name: String?,
        request: HTTPRequest
    ) throws -> PasskeyRecord {
        let accountID = session.accountID
        // 1. Consume the challenge.
        guard
            let (challenge, conditional) = try store.consumeRegistrationChallenge(
                id: challengeID, accountID: accountID)
        else {
            services.log.warning(
                "failed", ["step": "registration.consumeChallenge", "reason": "challengeUnusable"])
            throw APIError.challengeInvalid
        }
        // 2. Recent sign-in. A conditional upgrade's challenge is issued only by a password
        //    sign-in and lives minutes: it is itself the recent authentication. A modal one
        //    needs it now.
        let recent = session.mayChangeCredentials(
            windowSeconds: services.configuration.sessions.reauthenticationSeconds, now: services.system.now()
        )
        guard recent || conditional else {
            services.log.info(
                "reauthentication",
                ["step": "registration.finish", "reason": "staleSignIn", "account": accountID.uuidString])
            throw APIError.reauthenticationRequired
        }
        // 3. Verify the credential. UP (and UV) may be absent only in the conditional upgrade
        //    that follows a password sign-in; every other registration requires both.
        let mediation = RegistrationMediation(conditional: conditional)
        let verified: VerifiedRegistration
        do {
            verified = try services.registrationVerifier.verify(
                credential, expectedChallenge: challenge, requireUserPresence: mediation.requiresUserPresence,
                requireUserVerification: mediation.requiresUserVerification)
        } catch {
            services.log.warning(
                "failed",
                [
                    "step": "registration.verifyCredential", "reason": webAuthnReason(error),
                    "conditional": String(conditional),
                ])
            throw APIError.verificationFailed
        }
        // 4. Store the passkey and its audit event together, under the account's lock and
        //    while the session is still live: a password change or sign-out everywhere that
        //    ended it meanwhile is waited for and refuses the passkey.
        let name =
            AccountServices.cleanName(name, maxLength: 100) ?? AccountServices.defaultPasskeyName(verified)
        let record: PasskeyRecord
        do {
            record = try store.transaction { store in
                try store.lockAccount(accountID)
                guard try store.holdSession(session) else { throw APIError.notSignedIn }
                let record = try store.insert(
                    verified, id: services.system.uuid(), accountID: accountID, name: name)
                try store.record(
                    AuditEvent(
                        kind: .passkeyAdded, actor: .user, accountID: accountID,
                        clientAddress: request.remoteAddress,
                        detail: ["ceremony": mediation.rawValue, "name": name]))
                return record
            }
        } catch PasskeyStore.InsertError.credentialExists {
            throw APIError.credentialExists
        }
        // 5. Count, log and tell the account holder.
        if conditional {
            services.metrics.increment("auth_passkey_upgrades_total", ["result": "succeeded"])
        }
        services.log.info(
            "passkey.registered", ["account": accountID.uuidString, "conditional": String(conditional)])
        services.notifications.send(.passkeyAdded(name: record.name), accountID: accountID, request: request)
        return record
    }

    func list(session: CurrentSession) throws -> [PasskeyRecord] {
        try store.passkeys(accountID: session.accountID)
    }

    func rename(session: CurrentSession, id: UUID, name: String) throws {
        guard let name = AccountServices.cleanName(name, maxLength: 100) else { throw Self.invalidName }
        guard try store.rename(id: id, accountID: session.accountID, name: name) else {
            throw APIError.notFound
        }
    }

    /// Removes a passkey unless it is the account's last way to sign in (`CredentialPolicy`);
    /// the count and the removal are one transaction, under the account's lock.
    func delete(session: CurrentSession, id: UUID, request: HTTPRequest) throws -> Removal {
        let accountID = session.accountID
        // 1. Count and remove, atomically.
        let removedName = try store.transaction { store -> String? in
            let held = try store.lockedCredentials(accountID: accountID)
            guard
                CredentialPolicy.removePasskey(
                    passkeys: held.passkeys, hasPassword: held.hasPassword,
                    identities: try store.upstreamIdentities(accountID: accountID)) == .allowed
            else {
                throw Self.lastCredential
            }
            let name = try store.passkeyName(id: id, accountID: accountID)
            guard try store.delete(id: id, accountID: accountID) else { return nil }
            try store.record(
                AuditEvent(
                    kind: .passkeyRemoved, actor: .user, accountID: accountID,
                    clientAddress: request.remoteAddress, detail: ["passkey": id.lowercased]))
            return name
        }
        guard let removedName else { throw APIError.notFound }
        // 2. Tell the account holder.
        services.notifications.send(
            .passkeyRemoved(name: removedName), accountID: accountID, request: request)
        // 3. What the browser keeps.
        guard let account = try store.account(accountID) else { throw APIError.notSignedIn }
        let remaining = try store.passkeys(accountID: accountID)
        return Removal(userHandle: account.userHandle, remainingCredentialIDs: remaining.map(\.credentialID))
    }
}
