import Foundation
import HTTPServer
import OIDC
import Testing

@testable import AuthServer

@Suite struct BrowserOAuthErrorTests {
    struct Unexpected: Error {}

    static func classify(_ error: any Error, log buffer: LogBuffer = LogBuffer()) -> BrowserOAuthError {
        BrowserOAuthError(error, failureEvent: "authorize.failed", log: Log(write: { buffer.append($0) }))
    }

    @Test func refusalsKeepTheirAnswer() {
        let toClient = BrowserOAuthError.toClient(
            .redirect(location: "https://rp.example/cb?error=x"), uiLocales: ["ja"])
        #expect(Self.classify(toClient) == toClient)
        let denied = OAuthError(
            .accessDenied, hint: "The consent form expired; start again from the application.")
        #expect(Self.classify(BrowserOAuthError.page(denied)) == .page(denied))
        let invalid = OAuthError(.invalidRequest, hint: "No.")
        #expect(Self.classify(invalid) == .page(invalid))
    }

    @Test func aMalformedQueryOrFormIsInvalidRequest() {
        let error = Self.classify(HTTPError(.badRequest, message: "bad percent-encoding"))
        #expect(
            error
                == .page(
                    OAuthError(
                        .invalidRequest, hint: "The request is malformed.", debug: "bad percent-encoding")))
    }

    @Test func anUnexpectedErrorIsLoggedAndShownAsServerError() {
        let buffer = LogBuffer()
        #expect(Self.classify(Unexpected(), log: buffer) == .page(OAuthError(.serverError, hint: "")))
        #expect(buffer.text.contains("authorize.failed"))
        #expect(buffer.text.contains("Unexpected"))
    }
}
