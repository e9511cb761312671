import Crypto
import Foundation
import HTTPServer
import WebAuthnCore

/// The signed-in account's passkeys, as JSON: registration, list, rename, removal. Every call
/// needs the session cookie; state-changing ones also the CSRF token. See docs/api.md.
struct PasskeyManagementRoutes: Sendable {
    let services: AccountServices

    struct PasskeyJSON: Encodable {
        var id: String
        var credentialID: String
        var name: String
        var provider: String?
        var aaguid: String
        var synced: Bool
        var backupEligible: Bool
        var transports: [String]
        var createdAt: String
        var lastUsedAt: String?

        init(_ record: PasskeyRecord) {
            id = record.id.lowercased
            credentialID = Base64URL.encode(record.credentialID)
            name = record.name
            provider = PasskeyProviders.name(forAAGUID: record.aaguid)
            aaguid = PasskeyProviders.uuidString(record.aaguid)
            synced = record.backedUp
            backupEligible = record.backupEligible
            transports = record.transports
            createdAt = iso8601(record.createdAt)
            lastUsedAt = record.lastUsedAt.map(iso8601)
        }

        enum CodingKeys: String, CodingKey {
            case id
            case credentialID = "credential_id"
            case name
            case provider
            case aaguid
            case synced
            case backupEligible = "backup_eligible"
            case transports
            case createdAt = "created_at"
            case lastUsedAt = "last_used_at"
        }
    }

    struct PasskeyList: Encodable {
        var passkeys: [PasskeyJSON]
    }

    struct RenameRequest: Decodable {
        var name: String
    }

    /// What `PublicKeyCredential.signalAllAcceptedCredentials` takes.
    struct AllAcceptedCredentials: Encodable {
        var rpId: String
        var userId: String
        var allAcceptedCredentialIds: [String]
    }

    struct DeleteResult: Encodable {
        var signal: AllAcceptedCredentials
    }

    private var flow: PasskeyManagementFlow {
        PasskeyManagementFlow(services: services, store: PostgresPasskeyManagementStore(db: services.pool))
    }

    func register(on router: Router) {
        let api = JSONAPI(router: router, services: services)
        api.add(.post, "/api/passkeys/registration/start", step: "registration.start", registrationStart)
        api.add(.post, "/api/passkeys/registration/finish", step: "registration.finish", registrationFinish)
        api.add(.get, "/api/passkeys", step: "passkeys.list", list)
        api.add(.patch, "/api/passkeys/:id", step: "passkeys.rename", rename)
        api.add(.delete, "/api/passkeys/:id", step: "passkeys.delete", delete)
    }

    func registrationStart(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireRecentSession(request)
        let started = try flow.registrationStart(session: session)
        return try JSONAPI.json(
            PasskeyChallengeResponse(
                challengeID: started.challengeID.lowercased, options: started.options))
    }

    func registrationFinish(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireSession(request)
        let body = try JSONAPI.decode(PasskeyRegistrationFinishRequest.self, request)
        let challengeID = try JSONAPI.uuid(body.challengeID)
        let record = try flow.registrationFinish(
            session: session, challengeID: challengeID, credential: body.credential, name: body.name,
            request: request)
        return try JSONAPI.json(PasskeyJSON(record), status: .created)
    }

    func list(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireSession(request)
        let passkeys = try flow.list(session: session)
        return try JSONAPI.json(PasskeyList(passkeys: passkeys.map(PasskeyJSON.init)))
    }

    func rename(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireSession(request)
        let id = try JSONAPI.uuid(context.pathParameters["id"])
        let body = try JSONAPI.decode(RenameRequest.self, request)
        try flow.rename(session: session, id: id, name: body.name)
        return HTTPResponse(status: .noContent)
    }

    func delete(_ request: HTTPRequest, _ context: RequestContext) throws -> HTTPResponse {
        let session = try services.requireRecentSession(request)
        let id = try JSONAPI.uuid(context.pathParameters["id"])
        let removal = try flow.delete(session: session, id: id, request: request)
        return try JSONAPI.json(
            DeleteResult(
                signal: AllAcceptedCredentials(
                    rpId: services.rpID, userId: Base64URL.encode(removal.userHandle),
                    allAcceptedCredentialIds: removal.remainingCredentialIDs.map(Base64URL.encode))))
    }
}
