import Foundation
import OIDC
import Postgres
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Delivers queued back-channel logout tokens (OpenID Connect Back-Channel Logout 1.0 §2.5)
/// from a background thread. Any instance may run it: a due delivery is claimed with
/// `FOR UPDATE SKIP LOCKED` and leased for a minute, so two instances never post the same
/// one at the same time. A failed delivery is retried with exponential backoff until
/// `backchannel_max_attempts`; the logout token is signed fresh for every attempt.
final class BackchannelLogoutWorker: Sendable {
    private let oauth: OAuthServices
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let session: URLSession

    init(oauth: OAuthServices) {
        self.oauth = oauth
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        configuration.timeoutIntervalForResource = 15
        session = URLSession(configuration: configuration)
    }

    func start() {
        let thread = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                let worked = (try? runOnce()) ?? 0
                if worked == 0 {
                    Thread.sleep(forTimeInterval: Double(oauth.settings.backchannelPollMilliseconds) / 1000)
                }
            }
            finished.signal()
        }
        thread.name = "backchannel-logout"
        thread.start()
    }

    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
    }

    struct Delivery: Sendable {
        var id: UUID
        var clientID: String
        var uri: String
        var accountID: UUID
        var sessionID: UUID
        var attempts: Int
    }

    /// Claims and attempts the due deliveries; returns how many were attempted.
    @discardableResult
    func runOnce() throws -> Int {
        let rows = try oauth.pool.query(
            """
            UPDATE backchannel_logout_deliveries SET attempts = attempts + 1, next_attempt_at = now() + interval '60 seconds'
            WHERE id IN (
                SELECT id FROM backchannel_logout_deliveries
                WHERE delivered_at IS NULL AND abandoned_at IS NULL AND next_attempt_at <= now()
                ORDER BY next_attempt_at LIMIT 10 FOR UPDATE SKIP LOCKED)
            RETURNING id, client_id, uri, account_id, session_id, attempts
            """)
        let deliveries = try rows.map {
            Delivery(
                id: try $0.decode("id"), clientID: try $0.decode("client_id"), uri: try $0.decode("uri"),
                accountID: try $0.decode("account_id"), sessionID: try $0.decode("session_id"),
                attempts: try $0.decode("attempts"))
        }
        for delivery in deliveries { try attempt(delivery) }
        return deliveries.count
    }

    private func attempt(_ delivery: Delivery) throws {
        let status = (try? post(delivery)) ?? 0
        if (200..<300).contains(status) {
            try oauth.pool.query(
                "UPDATE backchannel_logout_deliveries SET delivered_at = now(), last_status = \(status) WHERE id = \(delivery.id)"
            )
            oauth.log.info(
                "logout.backchannel",
                ["client_id": delivery.clientID, "event": "delivered", "attempt": String(delivery.attempts)])
            return
        }
        if delivery.attempts >= oauth.settings.backchannelMaxAttempts {
            try oauth.pool.query(
                "UPDATE backchannel_logout_deliveries SET abandoned_at = now(), last_status = \(status) WHERE id = \(delivery.id)"
            )
            oauth.log.warning(
                "logout.backchannel",
                ["client_id": delivery.clientID, "event": "abandoned", "status": String(status)])
            return
        }
        let delay = oauth.settings.backchannelRetryBaseSeconds << min(delivery.attempts - 1, 16)
        try oauth.pool.query(
            """
            UPDATE backchannel_logout_deliveries
            SET next_attempt_at = now() + make_interval(secs => \(min(delay, 3_600))::float8), last_status = \(status)
            WHERE id = \(delivery.id)
            """)
        oauth.log.warning(
            "logout.backchannel",
            [
                "client_id": delivery.clientID, "event": "retry", "status": String(status),
                "attempt": String(delivery.attempts),
            ])
    }

    /// POSTs `logout_token` and returns the HTTP status (0 when the request failed).
    private func post(_ delivery: Delivery) throws -> Int {
        guard let client = oauth.clients.client(delivery.clientID), let url = URL(string: delivery.uri) else {
            return 0
        }
        let now = Date()
        let token = try LogoutToken(
            issuer: oauth.issuer, audience: client.clientID, issuedAt: now,
            expiresAt: now.addingTimeInterval(120),
            jwtID: oauth.tokens.next(), subject: delivery.accountID.uuidString.lowercased(),
            sessionID: delivery.sessionID.uuidString.lowercased()
        ).sign(with: try oauth.idTokenSigner(for: client))
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(FormEncoding.encode([(name: "logout_token", value: token)]).utf8)
        let status = Mutex(0)
        let done = DispatchSemaphore(value: 0)
        session.dataTask(with: request) { _, response, _ in
            status.withLock { $0 = (response as? HTTPURLResponse)?.statusCode ?? 0 }
            done.signal()
        }.resume()
        done.wait()
        return status.withLock { $0 }
    }
}
