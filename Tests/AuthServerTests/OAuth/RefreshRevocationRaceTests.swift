import Foundation
import Postgres
import Testing

@testable import AuthServer

/// A refresh under way while its family is revoked (signed out everywhere, password changed,
/// account disabled, consent withdrawn, session ended). Each revocation marks the families,
/// then, in a statement of its own, their access tokens: whatever the refresh issues must be
/// seen by that second statement, or the refresh must see the revocation. Otherwise the new
/// access token outlives the revocation until it expires.
@Suite("OAuth: a refresh racing a revocation")
struct RefreshRevocationRaceTests {
    /// A refresh on a thread of its own.
    static func refresh(_ app: TestApplication, _ token: String) -> InBackground {
        let client = app.client
        let headers = [OAuthFixtures.basic()]
        return InBackground {
            TestAgent.Reply(
                response: try client.post(
                    "/token", form: [("grant_type", "refresh_token"), ("refresh_token", token)], headers: headers))
        }
    }

    /// Whether the refresh's rotation waits for a lock within `seconds`.
    static func rotationWaits(_ app: TestApplication, seconds: Double) throws -> Bool {
        try AccountDeletionTests.waitForLock(app, statement: "WITH proof", seconds: seconds)
    }

    /// The refresh either is refused or answers an access token that the revocation ended.
    static func expectNothingOutlives(_ refresh: InBackground, _ app: TestApplication) throws {
        let reply = try refresh.reply()
        if reply.status == 200 {
            let accessToken = try #require(reply.json["access_token"] as? String)
            #expect(try app.userinfo(accessToken).status == 401, "the new access token outlived the revocation")
        } else {
            #expect(reply.status == 400 && reply.error == "invalid_grant", "\(reply.text)")
        }
    }

    /// The attacker holds a refresh token; the user signs out everywhere while the attacker's
    /// refresh is in flight. The revocation began first, so the refresh waits for it and sees it.
    @Test func aRefreshDuringARevocationSeesIt() throws {
        let app = try OAuthFixtures.app()
        let (_, tokens) = try app.signedInFlow(AuthorizationAttempt(scope: "openid offline_access"))
        let refreshToken = try #require(tokens.refreshToken)
        let account: UUID = try #require(
            try app.sql("SELECT account_id FROM refresh_token_families").first?.decode("account_id"))

        let revocation = try PostgresConnection(url: try #require(app.configuration.databaseURL))
        defer { revocation.close() }
        try revocation.query("BEGIN")
        _ = try SignOutEverywhere.run(accountID: account, keep: nil, reason: .signedOutEverywhere, on: revocation)
        let refresh = Self.refresh(app, refreshToken)
        #expect(try Self.rotationWaits(app, seconds: 2), "the refresh went ahead of the revocation")
        try revocation.query("COMMIT")
        try Self.expectNothingOutlives(refresh, app)
    }

    /// The session ends (sign-out) while a session-bound refresh is in flight and the session's
    /// row is already locked by the sign-out: the refresh does not wait for the session (it
    /// would wait on the sign-out while the sign-out waits on its family: a deadlock), and
    /// the sign-out's trigger then revokes what the refresh issued.
    @Test func aRefreshDuringASessionsEndNeitherDeadlocksNorOutlivesIt() throws {
        let app = try SessionEndTests.optedInApp()
        let (_, tokens) = try app.signedInFlow(AuthorizationAttempt(scope: "openid profile"))
        let refreshToken = try #require(tokens.refreshToken)
        // Last seen long enough ago that the refresh moves the idle deadline.
        try app.sql("UPDATE authentication_sessions SET last_seen_at = now() - interval '1 hour'")
        let session: UUID = try #require(
            try app.sql("SELECT session_id FROM refresh_token_families").first?.decode("session_id"))

        let signOut = try PostgresConnection(url: try #require(app.configuration.databaseURL))
        defer { signOut.close() }
        try signOut.query("BEGIN")
        try signOut.query("SELECT 1 FROM authentication_sessions WHERE id = \(session) FOR UPDATE")
        let refresh = Self.refresh(app, refreshToken)
        _ = try Self.rotationWaits(app, seconds: 2)
        try signOut.query("UPDATE authentication_sessions SET revoked_at = now() WHERE id = \(session)")
        try signOut.query("COMMIT")
        try Self.expectNothingOutlives(refresh, app)
    }
}
