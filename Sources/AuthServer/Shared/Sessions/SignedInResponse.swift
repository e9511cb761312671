import Foundation

/// The JSON answer of every sign-in and sign-up (password, passkey, recovery): who signed
/// in, the new session, and where the page continues.
struct SignedInResponse: Encodable {
    var accountID: String
    var sessionID: String
    var redirectTo: String
    var passkeyUpgrade: PasskeyUpgradeOffer?

    enum CodingKeys: String, CodingKey {
        case accountID = "account_id"
        case sessionID = "session_id"
        case redirectTo = "redirect_to"
        case passkeyUpgrade = "passkey_upgrade"
    }

    init(accountID: String, sessionID: String, redirectTo: String, passkeyUpgrade: PasskeyUpgradeOffer?) {
        self.accountID = accountID
        self.sessionID = sessionID
        self.redirectTo = redirectTo
        self.passkeyUpgrade = passkeyUpgrade
    }

    init(
        accountID: UUID, session: CurrentSession, redirectTo: String,
        passkeyUpgrade: PasskeyUpgradeOffer? = nil
    ) {
        self.init(
            accountID: accountID.lowercased, sessionID: session.id.lowercased, redirectTo: redirectTo,
            passkeyUpgrade: passkeyUpgrade)
    }
}
