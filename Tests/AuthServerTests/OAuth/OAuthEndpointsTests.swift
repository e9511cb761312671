import Foundation
import HTTPServer
import OIDC
import Postgres
import Testing

@testable import AuthServer

@Suite("OAuth JSON endpoint errors")
struct OAuthEndpointsTests {
    static func answer(_ error: any Error, step: String = "token") -> (HTTPResponse, String) {
        let buffer = LogBuffer()
        let response = OAuthEndpoints.answer(error, step: step, log: Log(write: { buffer.append($0) }))
        return (response, buffer.text)
    }

    static func json(_ response: HTTPResponse) throws -> [String: String] {
        try JSONDecoder().decode([String: String].self, from: Data(response.body))
    }

    @Test func aRefusalAnswersItselfWithoutALogLine() throws {
        let error = OAuthError(.invalidGrant, hint: "The refresh token is invalid, expired or revoked.")
        let (response, log) = Self.answer(error)
        #expect(response.status == .badRequest)
        #expect(response.body == error.jsonBody)
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(response.headers["Cache-Control"] == "no-store")
        #expect(response.headers["Pragma"] == "no-cache")
        #expect(response.headers["WWW-Authenticate"] == nil)
        #expect(log.isEmpty)
    }

    @Test func aClientAuthenticationFailureCarriesItsChallengeAndIsLoggedWithItsDebugDetail() throws {
        let error = OAuthError(
            .invalidClient, hint: "", debug: "wrong secret", wwwAuthenticate: #"Basic realm="oauth""#)
        let (response, log) = Self.answer(error, step: "revoke")
        #expect(response.status == .unauthorized)
        #expect(response.headers["WWW-Authenticate"] == #"Basic realm="oauth""#)
        #expect(try Self.json(response)["error"] == "invalid_client")
        #expect(!String(decoding: response.body, as: UTF8.self).contains("wrong secret"))
        #expect(log.contains("event=oauth.refused step=revoke error=invalid_client debug=\"wrong secret\""))
    }

    @Test func anUnexpectedErrorIsALoggedServerErrorWithAGenericBody() throws {
        struct Unexpected: Error {}
        let (response, log) = Self.answer(Unexpected(), step: "introspect")
        #expect(response.status == .internalServerError)
        #expect(
            try Self.json(response) == [
                "error": "server_error",
                "error_description": "The server encountered an unexpected condition.",
            ])
        #expect(response.headers["Cache-Control"] == "no-store")
        #expect(log.contains("level=error event=oauth.failed step=introspect reason=Unexpected"))
    }

    @Test func anUnavailableDatabaseIsTemporarilyUnavailable() throws {
        let (response, log) = Self.answer(PostgresError(kind: .poolTimeout, detail: "no connection"))
        #expect(response.status == .serviceUnavailable)
        #expect(try Self.json(response)["error"] == "temporarily_unavailable")
        #expect(log.contains("event=oauth.failed step=token reason=poolTimeout"))
    }
}
