import Crypto
import Foundation
import HTTPServer
import LoginPages
import OIDC
import Postgres

/// What the OAuth endpoints share: configuration, clients, keys, database and the browser
/// session services of the login pages.
struct OAuthServices: Sendable {
    let configuration: Configuration
    let pool: PostgresPool
    /// The clients, replaced as a whole when `serve` reloads its configuration.
    let clientDirectory: ReloadableClients
    let signingKeys: SigningKeyRing
    let accounts: AccountServices
    let log: Log
    let metrics: Metrics
    /// The clock and random source (the accounts' one).
    var system: TimeAndRandomness { accounts.system }
    var tokens: TokenGenerator { system.tokens }

    init(
        configuration: Configuration, pool: PostgresPool, signingKeys: SigningKeyRing,
        accounts: AccountServices, log: Log, clients: ReloadableClients? = nil, metrics: Metrics = Metrics()
    ) {
        self.configuration = configuration
        self.pool = pool
        self.clientDirectory = clients ?? ReloadableClients(configuration)
        self.signingKeys = signingKeys
        self.accounts = accounts
        self.log = log
        self.metrics = metrics
    }

    /// The current clients; take it once per request.
    var clients: ClientRegistry { clientDirectory.current.registry }
    /// The current APIs; take it once per request.
    var resources: ResourceCatalog { clientDirectory.current.resources }

    var issuer: String { discovery.issuer }
    var discovery: DiscoveryDocument { DiscoveryDocument(issuer: configuration.issuer) }
    var settings: Configuration.OAuthSettings { configuration.oauth }

    /// Verifies tokens this server signed, with every published key.
    func verifier() throws -> JWSVerifier {
        JWSVerifier(keys: try signingKeys.publishedJWKS(), allowedAlgorithms: Set(JWSAlgorithm.allCases))
    }

    /// The signer for a client's ID tokens (its `id_token_signed_response_alg`).
    func idTokenSigner(for client: OAuthClient) throws -> JWSSigner {
        try signingKeys.signer(for: client.idTokenSignedResponseAlg)
    }

    /// Access tokens and logout tokens use RS256, the one algorithm every library verifies.
    func serverSigner() throws -> JWSSigner { try signingKeys.signer(for: .RS256) }

    /// The browser session as the protocol logic sees it.
    static func browserSession(_ session: CurrentSession) -> BrowserSession {
        BrowserSession(
            accountID: session.accountID.lowercased, authTime: session.authTime, amr: session.amr,
            sessionID: session.id.lowercased)
    }

    func clientName(_ clientID: String) -> String {
        clients.metadata[clientID]?.clientName ?? clientID
    }

    func pageContext(_ request: HTTPRequest, uiLocales: [String] = []) -> (PageContext, Cookie?) {
        let (token, cookie) = accounts.csrf.token(for: request)
        var context = accounts.pageContext(request, csrfToken: token)
        if !uiLocales.isEmpty {
            context.language = PageLanguage.negotiate(
                uiLocales: uiLocales.joined(separator: " "),
                acceptLanguage: request.headers["Accept-Language"])
        }
        return (context, cookie)
    }

    /// An HTML page that must not be cached.
    static func page(_ html: String, status: HTTPStatus = .ok, cookie: Cookie? = nil) -> HTTPResponse {
        var response = HTTPResponse.html(html, status: status)
        response.headers.set("Cache-Control", "no-store")
        if let cookie { response.setCookie(cookie) }
        return response
    }

    /// The error page for requests that must not be redirected (unknown client, bad redirect URI).
    func errorPage(_ request: HTTPRequest, _ error: OAuthError) -> HTTPResponse {
        log.warning("oauth.refused", ["path": request.path, "error": error.error, "hint": error.hint])
        let (context, _) = pageContext(request)
        let html = LoginPages.error(
            ErrorPage(
                context: context, title: nil,
                message: OAuthErrorText.message(
                    code: error.error, description: error.errorDescription, hint: error.hint,
                    language: context.language),
                backLink: "/account", code: error.error))
        return Self.page(html, status: HTTPStatus(code: error.status))
    }

    static func json(_ body: [UInt8], status: HTTPStatus = .ok) -> HTTPResponse {
        var response = HTTPResponse(status: status, body: body)
        response.headers.set("Content-Type", "application/json")
        response.headers.set("Cache-Control", "no-store")
        response.headers.set("Pragma", "no-cache")
        return response
    }

    /// The form body of a POST as `Parameters`; a wrong content type or bad encoding is
    /// `invalid_request`.
    static func formParameters(_ request: HTTPRequest) throws(OAuthError) -> Parameters {
        do {
            return Parameters(try request.formItems())
        } catch {
            throw OAuthError(.invalidRequest, hint: "The body must be application/x-www-form-urlencoded.")
        }
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? PostgresError { return "\(error.kind)" }
        return String(describing: type(of: error))
    }
}
