import Crypto
import Foundation
import HTTPServer
import WebAuthnCore

extension AccountServices {
    /// Applies `passkeys.on_counter_regression` to a verified assertion whose signature counter
    /// did not grow (a possible clone): logs it, counts it and records
    /// `passkey.counter_regression` either way; false when the policy refuses the assertion.
    /// Every ceremony that accepts an assertion (sign-in, re-authentication) asks here.
    func admitSignCount(_ verified: VerifiedAuthentication, of passkey: PasskeyRecord, clientAddress: String)
        -> Bool
    {
        guard verified.possibleClone else { return true }
        let allowed = configuration.passkeys.onCounterRegression.allowsSignIn(afterCounterRegression: true)
        let action = allowed ? "warned" : "refused"
        log.warning(
            "passkey.signCount",
            [
                "step": "authentication.signCount", "reason": "possibleClone",
                "passkey": passkey.id.uuidString,
                "action": action,
            ])
        metrics.increment("auth_passkey_counter_regressions_total", ["action": action])
        record(
            AuditEvent(
                kind: .passkeyCounterRegression, actor: .system, accountID: passkey.accountID,
                clientAddress: clientAddress,
                detail: [
                    "passkey": passkey.id.lowercased, "stored": String(passkey.signCount),
                    "received": String(verified.newSignCount), "action": action,
                ]))
        return allowed
    }
}
