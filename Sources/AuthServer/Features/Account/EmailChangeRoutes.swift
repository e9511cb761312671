import Foundation
import HTTPServer
import LoginPages

/// Changing the account's address (`EmailChangeFlow`): the JSON API the account page calls,
/// the link mailed to the new address, and the undo page the old address's link opens.
/// See docs/api.md.
struct EmailChangeRoutes: Sendable {
    let services: AccountServices

    struct ChangeRequest: Decodable {
        var email: String
    }

    struct CodeRequest: Decodable {
        var code: String
    }

    struct PendingJSON: Encodable {
        var pendingEmail: String

        enum CodingKeys: String, CodingKey { case pendingEmail = "pending_email" }
    }

    struct ChangedJSON: Encodable {
        var email: String
        var emailVerified: Bool

        enum CodingKeys: String, CodingKey {
            case email
            case emailVerified = "email_verified"
        }
    }

    private var flow: EmailChangeFlow {
        EmailChangeFlow(services: services, store: PostgresEmailChangeStore(db: services.pool))
    }

    func register(on router: Router) {
        let routes = self
        let api = JSONAPI(router: router, services: services)
        api.add(.post, "/api/account/email/change", step: "email.change.request", requestChange)
        api.add(.post, "/api/account/email/change/confirm", step: "email.change.confirm", confirm)
        api.add(.delete, "/api/account/email/change", step: "email.change.cancel", cancel)
        router.get("/account/email/confirm") { request, _ in try routes.confirmLink(request) }
        router.get("/account/email/undo") { request, _ in
            Pages.page(routes.services, request) { context in
                LoginPages.emailChangeUndo(context, token: request.queryValue("token") ?? "")
            }
        }
        router.post("/account/email/undo") { request, _ in try routes.undo(request) }
    }

    /// 202 `{"pending_email": …}`: the code is on its way to the new address.
    func requestChange(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireRecentSession(request)
        let body = try JSONAPI.decode(ChangeRequest.self, request)
        try flow.request(session: session, newEmail: body.email, request: request)
        return try JSONAPI.json(
            PendingJSON(pendingEmail: EmailAddress(body.email)?.address ?? body.email), status: .accepted)
    }

    func confirm(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireSession(request)
        let body = try JSONAPI.decode(CodeRequest.self, request)
        try Self.check(try flow.confirm(.code(body.code, accountID: session.accountID), request: request))
        let account = try AccountStore.summary(accountID: session.accountID, on: services.pool)
        return try JSONAPI.json(
            ChangedJSON(email: account?.email ?? "", emailVerified: account?.emailVerified ?? false))
    }

    func cancel(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireSession(request)
        try flow.cancel(session: session)
        return HTTPResponse(status: .noContent)
    }

    /// The outcome as the API answers it: nothing for a change, else the verification errors.
    static func check(_ outcome: EmailChangeFlow.Outcome) throws(APIError) {
        switch outcome {
        case .changed: return
        case .invalid: throw .invalidCode
        case .expired: throw .codeExpired
        case .locked(let retryAfter): throw .verificationLocked(retryAfter: retryAfter)
        case .taken: throw EmailChangeFlow.emailTaken
        }
    }

    func confirmLink(_ request: HTTPRequest) throws -> HTTPResponse {
        let outcome = try flow.confirm(.link(request.queryValue("token") ?? ""), request: request)
        let changed = if case .changed = outcome { true } else { false }
        return Pages.page(services, request, status: changed ? .ok : .badRequest) { context in
            LoginPages.lifecycleNotice(
                context, title: .emailChangeHeading, lead: changed ? .emailChanged : .undoInvalid,
                link: (.emailChangeHeading, "/account"))
        }
    }

    /// The undo form: CSRF-checked; every session of the account ends (its cookies die with them).
    func undo(_ request: HTTPRequest) throws -> HTTPResponse {
        let form = Pages.form(request)
        try services.csrf.verify(request, submitted: form["csrf_token"])
        let done = try flow.undo(token: form["token"] ?? "", request: request)
        return Pages.page(services, request, status: done ? .ok : .badRequest) { context in
            LoginPages.lifecycleNotice(
                context, title: done ? .undoneTitle : .undoTitle, lead: done ? .undoneLead : .undoInvalid,
                link: (.backToSignIn, "/signin"))
        }
    }
}
