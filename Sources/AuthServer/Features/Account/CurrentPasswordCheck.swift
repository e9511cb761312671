import Crypto
import Foundation
import HTTPServer
import Postgres
import WebAuthnCore

extension AccountServices {
    /// The current-password check of a password change: one guess on the same budget as a
    /// sign-in, counted before Argon2id runs. Throws 403 `wrong_password`, or 429 while the
    /// password is locked.
    func verifyCurrentPassword(_ given: String?, against hash: String, email: String, clientAddress: String)
        throws
    {
        guard let given else { throw APIError.wrongPassword }
        let key = EmailAddress.normalize(email)
        if let wait = try throttle.admit(accountKey: key, address: clientAddress) {
            log.warning(
                "password.change",
                ["step": "throttle", "reason": "tooManyFailures", "address": clientAddress])
            throw APIError.passwordThrottled(retryAfter: wait)
        }
        guard try hasher.verify(given, against: hash).isValid else { throw APIError.wrongPassword }
        try throttle.recordSuccess(accountKey: key, address: clientAddress)
    }
}
