import Foundation
import HTTPServer

/// `GET /api/account/export`: the signed-in account's data as a JSON download (`DataExport`).
/// A plain GET with the session cookie, so the account page's link downloads it.
struct DataExportRoutes: Sendable {
    let services: AccountServices

    func register(on router: Router) {
        let api = JSONAPI(router: router, services: services)
        api.add(.get, "/api/account/export", step: "account.export", export)
    }

    func export(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireSession(request)
        let export = DataExport(services: services, store: PostgresDataExportStore(db: services.pool))
        let document = try export.document(session: session)
        var response = try JSONAPI.json(document)
        let day = String(document.exportedAt.prefix(10))
        response.headers.set("Content-Disposition", "attachment; filename=\"account-data-\(day).json\"")
        services.log.info("account.exported", ["account": session.accountID.uuidString])
        return response
    }
}
