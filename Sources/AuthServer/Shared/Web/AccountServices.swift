import Crypto
import Foundation
import HTTPServer
import LoginPages
import Postgres
import WebAuthnCore

/// What the sign-in, sign-up, passkey and account endpoints share.
struct AccountServices: Sendable {
    let configuration: Configuration
    let pool: PostgresPool
    let log: Log
    let hasher: PasswordHasher
    let sessions: SessionStore
    let csrf: CSRFProtection
    let throttle: SignInThrottle
    let mailer: Mailer
    let metrics: Metrics
    /// The reloadable clients, whose Android apps add passkey origins; nil: the startup ones.
    let clients: ReloadableClients?
    /// The clock and random source of every flow.
    let system: TimeAndRandomness

    init(
        configuration: Configuration, pool: PostgresPool, log: Log, hasher: PasswordHasher,
        mailTransport: any MailTransport = DevelopmentMailbox(), metrics: Metrics = Metrics(),
        clients: ReloadableClients? = nil, system: TimeAndRandomness = .live
    ) {
        self.system = system
        self.configuration = configuration
        self.clients = clients
        self.metrics = metrics
        self.mailer = Mailer(
            transport: mailTransport, log: log,
            isUndeliverable: { address in (try? AppleRelayMail.isUndeliverable(address, on: pool)) ?? false })
        self.pool = pool
        self.log = log
        self.hasher = hasher
        let cookies = SessionCookies(configuration: configuration)
        sessions = SessionStore(
            pool: pool, settings: configuration.sessions, cookies: cookies, system: system)
        csrf = CSRFProtection(cookies: cookies, allowedOrigin: configuration.issuerOrigin, system: system)
        throttle = SignInThrottle(pool: pool, settings: configuration.signInThrottle)
    }

    var cookies: SessionCookies { sessions.cookies }
    var rpID: String { configuration.relyingPartyID }

    /// The issuer's origin, the configured extra and related origins, and the
    /// `android:apk-key-hash:` origins of the current clients' Android apps.
    var webAuthnOrigins: Set<String> {
        clients?.current.webAuthnOrigins ?? configuration.allowedWebAuthnOrigins
    }

    var registrationVerifier: RegistrationVerifier {
        // Only the algorithms the creation options offer (WebAuthn §7.1 step 20).
        RegistrationVerifier(
            rpID: rpID, allowedOrigins: webAuthnOrigins, allowedAlgorithms: Self.algorithms,
            acceptUnverifiedAttestation: true)
    }

    var authenticationVerifier: AuthenticationVerifier {
        AuthenticationVerifier(rpID: rpID, allowedOrigins: webAuthnOrigins)
    }

    /// Records an event that stands alone (a sign-in, a failure) on the pool. A failure to
    /// write it is logged and does not fail the request it describes.
    func record(_ event: AuditEvent) {
        do {
            try AuditLog.record(event, on: pool)
        } catch {
            log.error(
                "audit.record", ["event": event.kind.rawValue, "reason": String(describing: type(of: error))])
        }
    }

    // MARK: - Helpers for handlers

    /// Runs `body`, turning an unavailable database into 503 and other database and unexpected
    /// errors into a logged 500 with a generic body.
    func guarded<T>(_ step: String, _ body: () throws -> T) throws(APIError) -> T {
        do {
            return try body()
        } catch let error as APIError {
            throw error
        } catch let error as HTTPError {
            throw APIError(
                status: error.status,
                code: error.status == .unsupportedMediaType ? "unsupported_media_type" : "invalid_request",
                message: error.message)
        } catch CryptoError.overloaded {
            throw APIError.busy
        } catch let error as PostgresError where error.isUnavailable {
            log.warning("request.failed", ["step": step, "reason": "\(error.kind)"])
            throw APIError.busy
        } catch {
            let postgres = error as? PostgresError
            let detail = postgres.map { "\($0.kind)" } ?? String(describing: type(of: error))
            log.error(
                "request.failed", ["step": step, "reason": detail, "sqlstate": postgres?.sqlState ?? "-"])
            throw APIError(
                status: .internalServerError, code: "server_error", message: "Something went wrong.")
        }
    }

    func requireSession(_ request: HTTPRequest) throws(APIError) -> CurrentSession {
        let session = try guarded("session.lookup") { try sessions.current(request) }
        guard let session else { throw APIError.notSignedIn }
        return session
    }

    /// The session, when its user authenticated within `sessions.reauthentication_seconds`
    /// (and not only through a recovery): what adding or removing a passkey and setting,
    /// changing or removing the password need. Otherwise `reauthentication_required`.
    func requireRecentSession(_ request: HTTPRequest) throws(APIError) -> CurrentSession {
        let session = try requireSession(request)
        guard
            session.mayChangeCredentials(
                windowSeconds: configuration.sessions.reauthenticationSeconds, now: system.now())
        else {
            log.info(
                "reauthentication",
                ["step": "checkRecency", "reason": "staleSignIn", "account": session.accountID.uuidString])
            throw APIError.reauthenticationRequired
        }
        return session
    }

    /// Starts a session and returns the cookie to set. The session the browser held before
    /// (its session cookie, live or not) ends in the same transaction: signing in again, as
    /// someone else or for `prompt=login`, never leaves the old session usable on the server.
    /// `fromRecovery` marks the session a completed recovery opens (see `CurrentSession`).
    func startSession(
        accountID: UUID, amr: [String], request: HTTPRequest, fromRecovery: Bool = false,
        on db: (any SQLExecutor)? = nil
    )
        throws
        -> (Cookie, CurrentSession)
    {
        let agent = request.headers["User-Agent"] ?? ""
        let previous = request.cookies[cookies.sessionName]
        let created =
            if let db {
                try sessions.create(
                    accountID: accountID, amr: amr, userAgent: agent, clientAddress: request.remoteAddress,
                    fromRecovery: fromRecovery, replacing: previous, on: db)
            } else {
                try sessions.create(
                    accountID: accountID, amr: amr, userAgent: agent, clientAddress: request.remoteAddress,
                    replacing: previous)
            }
        return (cookies.session(created.token), created.session)
    }

    func pageContext(_ request: HTTPRequest, csrfToken: String) -> PageContext {
        let language = PageLanguage.negotiate(
            uiLocales: request.queryValue("ui_locales"), acceptLanguage: request.headers["Accept-Language"])
        let kept = request.queryItems.filter { $0.name != "ui_locales" }
        var components = URLComponents()
        components.path = request.path
        if !kept.isEmpty { components.queryItems = kept.map { URLQueryItem(name: $0.name, value: $0.value) } }
        return PageContext(
            language: language, siteName: configuration.relyingPartyName, csrfToken: csrfToken,
            path: components.string ?? request.path)
    }
}

/// `return_to`: only a same-origin relative path (`/x…`), never `//host`, `/\host`, a scheme
/// or control characters, so the sign-in pages cannot be used as an open redirect.
enum ReturnTo {
    static let fallback = "/account"

    static func sanitize(_ value: String?) -> String? {
        guard let value, !value.isEmpty, value.utf8.count <= 4_096, value.hasPrefix("/") else { return nil }
        if value.hasPrefix("//") || value.contains("\\") { return nil }
        if value.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) { return nil }
        return value
    }
}
