import Crypto
import Foundation
import HTTPServer
import Postgres

/// The running application: configuration, database pool and the routes that use them.
/// Handlers stay thin: decode, call pure logic, store, respond.
struct Application: Sendable {
    let configuration: Configuration
    let pool: PostgresPool
    let signingKeys: SigningKeyRing
    let metrics: Metrics
    let log: Log
    var passwordHasher = PasswordHasher()
    /// The clock and random source every flow reads; tests may substitute their own.
    var system = TimeAndRandomness.live
    /// Where mail goes; the development mailbox unless the configuration names an SMTP server.
    var mailTransport: any MailTransport = DevelopmentMailbox()
    /// The clients, shared by every endpoint; `serve` replaces them on SIGHUP. Nil: the
    /// configuration's clients, fixed.
    var clients: ReloadableClients? = nil

    private var clientDirectory: ReloadableClients { clients ?? ReloadableClients(configuration) }

    func makeRouter() -> Router {
        let router = Router()
        router.use(
            ForwardedFor(trustedProxies: configuration.http.trustedProxies.compactMap(AddressRange.init)))
        let clients = clientDirectory
        router.use(
            SecurityHeaders(
                formActionSources: FormActionSources.sources(for: configuration), clients: clients,
                strictTransportSecurity: configuration.issuer.hasPrefix("https://")))
        router.use(DatabaseUnavailable())
        router.use(RelatedOriginCORS(origins: Set(configuration.webAuthn.relatedOrigins)))
        router.use(StrictQuery())
        HealthRoutes(
            store: PostgresHealthStore(pool: pool), metrics: metrics,
            metricsReaders: configuration.metrics.allowedAddresses.compactMap(AddressRange.init)
        ).register(on: router)
        let accounts = accountServices()
        AccountPageRoutes(services: accounts).register(on: router)
        PasswordSignInRoutes(services: accounts).register(on: router)
        PasskeySignInRoutes(services: accounts).register(on: router)
        SignUpRoutes(services: accounts).register(on: router)
        SignOutRoutes(services: accounts).register(on: router)
        AccountChooserRoutes(services: accounts).register(on: router)
        PasskeyManagementRoutes(services: accounts).register(on: router)
        AccountRoutes(services: accounts).register(on: router)
        AccountDeletionRoutes(services: accounts).register(on: router)
        DataExportRoutes(services: accounts).register(on: router)
        EmailChangeRoutes(services: accounts).register(on: router)
        ReauthenticationRoutes(services: accounts).register(on: router)
        RecoveryRoutes(services: accounts).register(on: router)
        EmailVerificationRoutes(services: accounts).register(on: router)
        let oauth = OAuthServices(
            configuration: configuration, pool: pool, signingKeys: signingKeys, accounts: accounts, log: log,
            clients: clients, metrics: metrics)
        WellKnownRoutes(
            configuration: configuration, signingKeys: signingKeys, clients: clients, system: system
        )
        .register(on: router)
        AuthorizeRoutes(oauth: oauth).register(on: router)
        PushedAuthorizationRoutes(oauth: oauth).register(on: router)
        TokenRoutes(oauth: oauth).register(on: router)
        AuthorizationChallengeRoutes(oauth: oauth).register(on: router)
        UserInfoRoutes(oauth: oauth).register(on: router)
        RevocationRoutes(oauth: oauth).register(on: router)
        IntrospectionRoutes(oauth: oauth).register(on: router)
        LogoutRoutes(oauth: oauth).register(on: router)
        ConnectedAppsRoutes(oauth: oauth).register(on: router)
        UpstreamSignInRoutes(oauth: oauth).register(on: router)
        AccountIdentitiesRoutes(oauth: oauth).register(on: router)
        AppleNotificationsRoutes(oauth: oauth).register(on: router)
        let files = StaticFiles(directory: URL(fileURLWithPath: configuration.publicDirectory))
        router.get("/static/*path") { request, context in
            files.response(for: context.pathParameters["path"] ?? "", request: request)
        }
        return router
    }

    /// Sessions, CSRF, throttling and password checks, shared by the account endpoints and by
    /// any endpoint that needs the signed-in user (`accountServices().sessions.current(request)`).
    func accountServices() -> AccountServices {
        AccountServices(
            configuration: configuration, pool: pool, log: log, hasher: passwordHasher,
            mailTransport: mailTransport, metrics: metrics, clients: clientDirectory, system: system)
    }

    /// The back-channel logout delivery worker (started by `serve`, stopped at shutdown).
    func makeBackchannelLogoutWorker() -> BackchannelLogoutWorker {
        BackchannelLogoutWorker(
            oauth: OAuthServices(
                configuration: configuration, pool: pool, signingKeys: signingKeys,
                accounts: accountServices(), log: log, clients: clientDirectory, metrics: metrics))
    }

    /// The worker that revokes queued Apple refresh tokens at Apple (started by `serve`).
    func makeUpstreamRevocationWorker() -> UpstreamRevocationWorker {
        UpstreamRevocationWorker(
            pool: pool, configuration: configuration, keys: signingKeys, log: log, now: system.now)
    }

    /// Feeds the metrics from every response the HTTP server writes.
    func observe(
        _ request: HTTPRequest, _ context: RequestContext, _ status: HTTPStatus, _ duration: Duration
    ) {
        metrics.observeRequest(
            method: request.method.rawValue, route: context.route ?? "unmatched", status: status.code,
            duration: duration)
    }
}

/// Headers every response carries: no MIME sniffing, no framing, no referrer leaks, and a
/// strict Content Security Policy (pages load scripts and styles from /static only).
struct SecurityHeaders: HTTPMiddleware {
    /// `form-action`: this origin, plus the clients' redirect and post-logout origins, because
    /// browsers apply the directive to the redirects that follow a form submission (sign-in →
    /// /authorize → the client's callback, consent, logout confirmation).
    var formActionSources = "'self'"
    /// When set, the sources follow the current (reloadable) clients instead.
    var clients: ReloadableClients? = nil
    /// HSTS for an https issuer (whether TLS ends here or at a proxy in front): browsers then
    /// never try the plain-http origin, where a network attacker could strip TLS.
    var strictTransportSecurity = false

    func handle(
        _ request: HTTPRequest, context: inout RequestContext,
        next: (HTTPRequest, inout RequestContext) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        var response = try next(request, &context)
        response.headers.set("X-Content-Type-Options", "nosniff")
        response.headers.set("X-Frame-Options", "DENY")
        response.headers.set("Referrer-Policy", "no-referrer")
        if strictTransportSecurity {
            response.headers.set("Strict-Transport-Security", "max-age=63072000")
        }
        if response.headers["Content-Security-Policy"] == nil {
            response.headers.set(
                "Content-Security-Policy",
                "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action \(clients?.current.formActionSources ?? formActionSources)"
            )
        }
        return response
    }
}
