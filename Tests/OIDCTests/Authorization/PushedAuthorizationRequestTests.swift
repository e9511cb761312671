import Foundation
import Testing
@testable import OIDC

/// RFC 9126: what a pushed body becomes, which request URIs are ours, and the clients that
/// must push.
@Suite struct PushedAuthorizationRequestTests {
    @Test func credentialsAreNotStoredAndTheClientIDIsAdded() throws {
        let pushed = Parameters([
            ("response_type", "code"), ("client_secret", "s3cret"), ("client_assertion", "eyJ…"),
            ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
            ("dpop_jkt", "thumbprint"),
        ])
        let stored = try PushedAuthorizationRequest.parameters(pushed: pushed, client: Fixture.web)
        #expect(stored.items.map(\.name) == ["client_id", "response_type", "dpop_jkt"])
        #expect(try stored.value("client_id") == "web-app")
        #expect(try stored.value("dpop_jkt") == "thumbprint")
    }

    @Test func aRequestURIInTheBodyIsRefused() {
        let pushed = Parameters([
            ("client_id", "web-app"), ("request_uri", "urn:ietf:params:oauth:request_uri:x"),
        ])
        #expect(throws: OAuthError.invalidRequest("The 'request_uri' parameter cannot be pushed.")) {
            try PushedAuthorizationRequest.parameters(pushed: pushed, client: Fixture.web)
        }
    }

    @Test(arguments: [["native-app"], ["web-app", "web-app"]])
    func aClientIDOtherThanTheAuthenticatedOneIsRefused(_ ids: [String]) {
        let pushed = Parameters(ids.map { ("client_id", $0) })
        #expect(throws: OAuthError.invalidRequest("The 'client_id' does not name the authenticated client."))
        {
            try PushedAuthorizationRequest.parameters(pushed: pushed, client: Fixture.web)
        }
    }

    @Test func onlyOurURNsAreReferences() {
        #expect(PushedAuthorizationRequest.reference(in: "urn:ietf:params:oauth:request_uri:abc") == "abc")
        #expect(PushedAuthorizationRequest.reference(in: "urn:ietf:params:oauth:request_uri:") == nil)
        #expect(PushedAuthorizationRequest.reference(in: "https://client.example.com/request.jwt") == nil)
        #expect(
            PushedAuthorizationRequest.reference(
                in: "urn:ietf:params:oauth:request_uri:" + String(repeating: "a", count: 129)) == nil)
    }

    @Test func aClientThatMustPushIsRefusedAPlainRequest() throws {
        var client = Fixture.native
        client.requirePushedAuthorizationRequests = true
        #expect {
            try AuthorizationRequest.validate(
                Fixture.authorize(client), client: client, issuer: Fixture.issuer)
        } throws: { error in
            let failure = error as? AuthorizationFailure
            return failure?.error.code == .invalidRequest && failure?.response != nil
        }
        _ = try AuthorizationRequest.validate(
            Fixture.authorize(client), client: client, issuer: Fixture.issuer, pushed: true)
    }

    @Test func theServerSettingRequiresPushedRequestsOfEveryClient() throws {
        #expect(throws: AuthorizationFailure.self) {
            try AuthorizationRequest.validate(
                Fixture.authorize(), client: Fixture.native, issuer: Fixture.issuer, pushedRequired: true)
        }
        _ = try AuthorizationRequest.validate(
            Fixture.authorize(), client: Fixture.native, issuer: Fixture.issuer, pushed: true,
            pushedRequired: true)
    }

    @Test func anUnusableRequestURIIsRedirectedOnlyToARegisteredURI() {
        let error = OAuthError(.invalidRequestURI, hint: "Start again from the application.")
        let known = AuthorizationRequest.failure(
            error, parameters: Fixture.authorize(Fixture.web), client: Fixture.web, issuer: Fixture.issuer)
        #expect(known.response != nil)
        let unregistered = AuthorizationRequest.failure(
            error, parameters: Fixture.authorize(Fixture.web, ["redirect_uri": "https://evil.example/cb"]),
            client: Fixture.web, issuer: Fixture.issuer)
        #expect(unregistered.response == nil)
        let otherClient = AuthorizationRequest.failure(
            error, parameters: Fixture.authorize(Fixture.web), client: Fixture.native, issuer: Fixture.issuer)
        #expect(otherClient.response == nil)
    }
}
