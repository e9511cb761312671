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
    /// Where mail goes; the development mailbox unless the configuration names an SMTP server.
    var mailTransport: any MailTransport = DevelopmentMailbox()

    func makeRouter() -> Router {
        let router = Router()
        router.use(SecurityHeaders(formActionSources: FormActionSources.sources(for: configuration)))
        HealthRoutes(pool: pool, metrics: metrics).register(on: router)
        JWKSEndpoint(keys: signingKeys).register(on: router)
        let accounts = AccountServices(
            configuration: configuration, pool: pool, log: log, hasher: passwordHasher,
            mailTransport: mailTransport)
        PageRoutes(services: accounts).register(on: router)
        AuthenticationAPI(services: accounts).register(on: router)
        AccountAPI(services: accounts).register(on: router)
        EmailVerificationRoutes(services: accounts).register(on: router)
        let oauth = OAuthServices(
            configuration: configuration, pool: pool, signingKeys: signingKeys, accounts: accounts, log: log)
        WellKnownRoutes(configuration: configuration, signingKeys: signingKeys).register(on: router)
        AuthorizationEndpoint(oauth: oauth).register(on: router)
        TokenEndpoint(oauth: oauth).register(on: router)
        ResourceEndpoints(oauth: oauth).register(on: router)
        LogoutEndpoint(oauth: oauth).register(on: router)
        ConnectedAppsRoutes(oauth: oauth).register(on: router)
        let files = StaticFiles(directory: URL(fileURLWithPath: configuration.publicDirectory))
        router.get("/static/*path") { request, context in
            files.response(for: context.pathParameters["path"] ?? "", request: request)
        }
        return router
    }

    /// Sessions, CSRF, throttling and password checks, shared by the account endpoints and by
    /// any endpoint that needs the signed-in user (`accountServices().sessions.current(request)`).
    func accountServices() -> AccountServices {
        AccountServices(configuration: configuration, pool: pool, log: log, hasher: passwordHasher,
            mailTransport: mailTransport)
    }

    /// The back-channel logout delivery worker (started by `serve`, stopped at shutdown).
    func makeBackchannelLogoutWorker() -> BackchannelLogoutWorker {
        BackchannelLogoutWorker(
            oauth: OAuthServices(
                configuration: configuration, pool: pool, signingKeys: signingKeys,
                accounts: accountServices(), log: log))
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

    func handle(
        _ request: HTTPRequest, context: inout RequestContext,
        next: (HTTPRequest, inout RequestContext) throws -> HTTPResponse
    ) throws -> HTTPResponse {
        var response = try next(request, &context)
        response.headers.set("X-Content-Type-Options", "nosniff")
        response.headers.set("X-Frame-Options", "DENY")
        response.headers.set("Referrer-Policy", "no-referrer")
        if response.headers["Content-Security-Policy"] == nil {
            response.headers.set(
                "Content-Security-Policy",
                "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action \(formActionSources)"
            )
        }
        return response
    }
}
