import Foundation
import Postgres

/// What a verified upstream ID token says about the user.
struct UpstreamClaims: Sendable, Equatable {
    var provider: String
    var issuer: String
    var subject: String
    var email: String?
    /// The provider vouches that the address reaches the user (Apple's relay addresses too).
    var emailVerified: Bool
    var isPrivateEmail: Bool
    /// The name to give a new account (Apple sends it only on the first authorization).
    var name: String?
}

/// Which account an upstream sign-in belongs to. The rule, safe by default:
/// - a linked identity signs in to its account, whatever the address says now;
/// - otherwise, when the provider vouches for the address and an account of ours has verified
///   the same address, the user must first prove control of that account (sign in to it) —
///   a provider's word alone never takes over an existing account;
/// - otherwise a new account. An unverified address (on either side) never links anything.
enum UpstreamAccounts {
    enum Decision: Equatable, Sendable {
        case signIn(accountID: UUID, identityID: UUID)
        case proveControl(accountID: UUID)
        case create
    }

    /// Decides in the caller's transaction. For a linked identity the account's row is
    /// share-locked and then the link's row locked, until the transaction ends (in the order an
    /// account deletion takes them): a disable, a deletion or an unlink either waits for what
    /// the sign-in issues and ends it too, or committed first and is seen here.
    static func decide(_ claims: UpstreamClaims, on db: some SQLExecutor) throws -> Decision {
        if let accountID = try UpstreamIdentityStore.shareLinkedAccount(
            issuer: claims.issuer, subject: claims.subject, on: db)
        {
            if let linked = try UpstreamIdentityStore.lockLinked(
                issuer: claims.issuer, subject: claims.subject, on: db), linked.accountID == accountID
            {
                return .signIn(accountID: linked.accountID, identityID: linked.id)
            }
            // Unlinked meanwhile: decided as an identity that was never linked.
        }
        guard claims.emailVerified, let email = claims.email.flatMap(EmailAddress.init) else {
            return .create
        }
        let holder: UUID? = try db.query(
            """
            SELECT account_id FROM account_emails
            WHERE normalized_email = \(email.normalized) AND verified_at IS NOT NULL
            """
        ).first?.decode("account_id")
        return holder.map { .proveControl(accountID: $0) } ?? .create
    }

    enum CreateError: Error, Equatable {
        /// Another account verified the address meanwhile, or the identity was linked meanwhile:
        /// decide again.
        case conflict
    }

    /// Creates an account for the identity (`userHandle`: 32 random bytes), in the caller's transaction: the account, the
    /// provider's address (verified when the provider vouches for it; accounts that held it
    /// unverified lose it, as when an address is verified by mail), and the link. A new
    /// account without an address (the provider gave none) signs in only through the link.
    static func createAccount(
        _ claims: UpstreamClaims, userHandle: [UInt8], at time: Date, on db: some SQLExecutor
    ) throws -> (accountID: UUID, identityID: UUID) {
        let accountID = UUID.random()
        let email = claims.email.flatMap(EmailAddress.init)
        let displayName = Self.displayName(claims, email: email)
        if let email {
            try AccountStore.insertAccount(
                id: accountID, displayName: displayName, email: email, userHandle: userHandle, on: db)
            if claims.emailVerified {
                try db.query("SAVEPOINT upstream_address")
                do {
                    try db.query(
                        """
                        UPDATE account_emails SET verified_at = \(time)
                        WHERE account_id = \(accountID) AND normalized_email = \(email.normalized)
                        """)
                    try db.query("RELEASE SAVEPOINT upstream_address")
                } catch let error as PostgresError where error.kind == .uniqueViolation {
                    try db.query("ROLLBACK TO SAVEPOINT upstream_address")
                    throw CreateError.conflict
                }
                try db.query(
                    """
                    DELETE FROM account_emails
                    WHERE normalized_email = \(email.normalized) AND account_id <> \(accountID)
                    """)
            }
        } else {
            try db.query(
                """
                INSERT INTO accounts (id, display_name, webauthn_user_handle)
                VALUES (\(accountID), \(displayName), \(userHandle))
                """)
        }
        do {
            let identityID = try link(claims, accountID: accountID, at: time, on: db)
            return (accountID, identityID)
        } catch UpstreamIdentityStore.InsertError.alreadyLinked {
            throw CreateError.conflict
        }
    }

    /// Links the identity to the account (whose owner has just proven control of it), under
    /// `id` when the identity's id was chosen earlier (a token sealed for it).
    /// `UpstreamIdentityStore.InsertError.alreadyLinked` when the identity belongs to an account.
    @discardableResult
    static func link(
        _ claims: UpstreamClaims, accountID: UUID, id: UUID? = nil, at time: Date, on db: some SQLExecutor
    ) throws -> UUID {
        let identity = UpstreamIdentity(
            id: id ?? UUID.random(), accountID: accountID, provider: claims.provider, issuer: claims.issuer,
            subject: claims.subject, email: claims.email, emailVerified: claims.emailVerified,
            isPrivateEmail: claims.isPrivateEmail, createdAt: time, lastUsedAt: time)
        try UpstreamIdentityStore.insert(identity, on: db)
        return identity.id
    }

    /// The provider's name for the user, else the address's local part, else the provider.
    static func displayName(_ claims: UpstreamClaims, email: EmailAddress?) -> String {
        let name = claims.name?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        if !name.isEmpty { return String(name.prefix(AccountStore.displayNameMaxLength)) }
        if let local = email?.address.split(separator: "@").first, !local.isEmpty {
            return String(local.prefix(AccountStore.displayNameMaxLength))
        }
        return String(claims.provider.prefix(AccountStore.displayNameMaxLength))
    }
}
