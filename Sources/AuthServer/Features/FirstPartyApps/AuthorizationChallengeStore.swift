import Foundation
import Postgres

/// One sign-in of a first-party app at the authorization challenge endpoint, as stored
/// (`authorization_challenge_sessions`): what the code will be issued for and the WebAuthn
/// ceremony in progress.
struct ChallengeSession: Sendable {
    var id: UUID
    var clientID: String
    var codeChallenge: String
    var scopes: [String]
    var resources: [String]
    var acrValues: [String]
    var redirectURI: String?
    /// RFC 9449 §7.8 JWK thumbprint the app bound the sign-in to (`dpop_jkt`).
    var dpopJKT: String?
    /// The passkey authentication challenge (`passkey_authentication_challenges`) the app's
    /// next assertion must sign.
    var passkeyChallengeID: UUID?
    /// The passkey sign-up in progress (`passkey_account_registrations`), with its entries.
    var registrationID: UUID?
    var signUpEmail: String?
    var signUpDisplayName: String?
}

/// What `AuthorizationChallengeFlow` reads and writes besides what the sign-in and sign-up
/// flows it reuses store themselves.
protocol AuthorizationChallengeStore {
    /// Stores a new sign-in under the digest of its first `auth_session` value.
    func insert(_ session: ChallengeSession, sessionDigest: [UInt8], lifetimeSeconds: Int) throws
    /// Takes one step: replaces the digest `presented` by `next` in one statement and returns
    /// the sign-in; nil when the value is unknown, already used for a step, expired or
    /// completed, or belongs to another client, or is bound to a DPoP key other than
    /// `dpopKey` (a sign-in it then leaves alone). A racing request with the same value finds
    /// it replaced.
    func advance(presented: [UInt8], next: [UInt8], clientID: String, dpopKey: String?) throws
        -> ChallengeSession?
    /// The ceremony the next step continues.
    func setPasskeyChallenge(sessionID: UUID, challengeID: UUID) throws
    func setRegistration(sessionID: UUID, registrationID: UUID, email: String, displayName: String) throws
    /// Ends the sign-in once its code is issued: no value of it works any more.
    func complete(sessionID: UUID) throws
    /// Runs `body` in one transaction; the store it passes uses only that transaction's connection.
    func transaction<T>(_ body: (any AuthorizationChallengeStore, PostgresConnection) throws -> T) throws -> T
}

struct PostgresAuthorizationChallengeStore: AuthorizationChallengeStore {
    let db: any SQLExecutor

    func insert(_ session: ChallengeSession, sessionDigest: [UInt8], lifetimeSeconds: Int) throws {
        try db.query(
            """
            INSERT INTO authorization_challenge_sessions
                (id, session_digest, client_id, code_challenge, scopes, resources, acr_values, redirect_uri,
                 dpop_jkt, passkey_challenge_id, expires_at)
            VALUES (\(session.id), \(sessionDigest), \(session.clientID), \(session.codeChallenge),
                    \(session.scopes), \(session.resources), \(session.acrValues), \(session.redirectURI),
                    \(session.dpopJKT), \(session.passkeyChallengeID),
                    now() + make_interval(secs => \(lifetimeSeconds)::float8))
            """)
    }

    func advance(presented: [UInt8], next: [UInt8], clientID: String, dpopKey: String?) throws
        -> ChallengeSession?
    {
        guard
            let row = try db.query(
                """
                UPDATE authorization_challenge_sessions SET session_digest = \(next)
                WHERE session_digest = \(presented) AND client_id = \(clientID)
                  AND (dpop_jkt IS NULL OR dpop_jkt = \(dpopKey))
                  AND completed_at IS NULL AND expires_at > now()
                RETURNING id, client_id, code_challenge, scopes, resources, acr_values, redirect_uri, dpop_jkt,
                          passkey_challenge_id, registration_id, sign_up_email, sign_up_display_name
                """
            ).first
        else { return nil }
        return ChallengeSession(
            id: try row.decode("id"), clientID: try row.decode("client_id"),
            codeChallenge: try row.decode("code_challenge"), scopes: try row.decode("scopes"),
            resources: try row.decode("resources"), acrValues: try row.decode("acr_values"),
            redirectURI: try row.decode("redirect_uri"), dpopJKT: try row.decode("dpop_jkt"),
            passkeyChallengeID: try row.decode("passkey_challenge_id"),
            registrationID: try row.decode("registration_id"), signUpEmail: try row.decode("sign_up_email"),
            signUpDisplayName: try row.decode("sign_up_display_name"))
    }

    func setPasskeyChallenge(sessionID: UUID, challengeID: UUID) throws {
        try db.query(
            """
            UPDATE authorization_challenge_sessions SET passkey_challenge_id = \(challengeID)
            WHERE id = \(sessionID)
            """)
    }

    func setRegistration(sessionID: UUID, registrationID: UUID, email: String, displayName: String) throws {
        try db.query(
            """
            UPDATE authorization_challenge_sessions
            SET registration_id = \(registrationID), sign_up_email = \(email), sign_up_display_name = \(displayName)
            WHERE id = \(sessionID)
            """)
    }

    func complete(sessionID: UUID) throws {
        try db.query(
            """
            UPDATE authorization_challenge_sessions SET completed_at = now()
            WHERE id = \(sessionID) AND completed_at IS NULL
            """)
    }

    func transaction<T>(_ body: (any AuthorizationChallengeStore, PostgresConnection) throws -> T) throws -> T
    {
        try db.transaction { connection in
            try body(PostgresAuthorizationChallengeStore(db: connection), connection)
        }
    }
}
