import Foundation
import OIDC
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
    private let store: any BackchannelLogoutStore
    private let thread = PollingThread()
    private let session: URLSession

    init(oauth: OAuthServices, store: (any BackchannelLogoutStore)? = nil) {
        self.oauth = oauth
        self.store = store ?? PostgresBackchannelLogoutStore(db: oauth.pool)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        configuration.timeoutIntervalForResource = 15
        session = URLSession(configuration: configuration, delegate: RefuseRedirects(), delegateQueue: nil)
    }

    /// The logout token goes to the registered URI only: a redirect (a 307 or 308 repeats the
    /// POST) would let the client's host send this server's request anywhere, its own network
    /// included. The redirect's status is the delivery's answer, and is retried.
    private final class RefuseRedirects: NSObject, URLSessionTaskDelegate, Sendable {
        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            completionHandler(nil)
        }
    }

    func start() {
        thread.start(
            name: "backchannel-logout",
            idleSeconds: { [oauth] in Double(oauth.settings.backchannelPollMilliseconds) / 1000 },
            pass: { [self] in (try? runOnce()) ?? 0 })
    }

    func stop() { thread.stop() }

    /// Claims and attempts the due deliveries; returns how many were attempted.
    @discardableResult
    func runOnce() throws -> Int {
        let deliveries = try store.claimDue()
        for delivery in deliveries { try attempt(delivery) }
        return deliveries.count
    }

    private func attempt(_ delivery: BackchannelLogoutDelivery) throws {
        let status = (try? post(delivery)) ?? 0
        if (200..<300).contains(status) {
            try store.markDelivered(delivery.id, status: status)
            oauth.log.info(
                "logout.backchannel",
                ["client_id": delivery.clientID, "event": "delivered", "attempt": String(delivery.attempts)])
            return
        }
        if delivery.attempts >= oauth.settings.backchannelMaxAttempts {
            try store.abandon(delivery.id, status: status)
            oauth.log.warning(
                "logout.backchannel",
                ["client_id": delivery.clientID, "event": "abandoned", "status": String(status)])
            return
        }
        let delay = oauth.settings.backchannelRetryBaseSeconds << min(delivery.attempts - 1, 16)
        try store.retry(delivery.id, status: status, delaySeconds: min(delay, 3_600))
        oauth.log.warning(
            "logout.backchannel",
            [
                "client_id": delivery.clientID, "event": "retry", "status": String(status),
                "attempt": String(delivery.attempts),
            ])
    }

    /// POSTs `logout_token` and returns the HTTP status (0 when the request failed).
    private func post(_ delivery: BackchannelLogoutDelivery) throws -> Int {
        guard let client = oauth.clients.client(delivery.clientID), let url = URL(string: delivery.uri) else {
            return 0
        }
        let now = oauth.system.now()
        let token = try LogoutToken(
            issuer: oauth.issuer, audience: client.clientID, issuedAt: now,
            expiresAt: now.addingTimeInterval(120),
            jwtID: oauth.tokens.next(), subject: delivery.accountID.lowercased,
            sessionID: delivery.sessionID?.lowercased
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
