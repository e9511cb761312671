import Foundation
import Testing
@testable import OIDC

@Suite struct ResourceCatalogTests {
    static let orders = ProtectedResource(
        identifier: "https://api.example.com/orders", name: "Orders",
        scopes: [
            .init(name: "orders:read", description: "Read your orders", descriptionJa: "注文の閲覧"),
            .init(name: "orders:write", description: "Place orders", descriptionJa: "注文"),
        ],
        allowedClients: ["web-app", "native-app"], tokenClaims: [.roles],
        introspection: .init(clientID: "orders-api", clientSecretHash: Fixture.secretHash))
    static let billing = ProtectedResource(
        identifier: "urn:example:billing", name: "Billing",
        scopes: [.init(name: "billing:read", description: "Read invoices", descriptionJa: "請求書の閲覧")],
        tokenFormat: .opaque, allowedClients: ["web-app"])
    static let catalog = ResourceCatalog([orders, billing])

    func refusal(_ body: () throws -> Void) -> OAuthError? {
        do {
            try body()
            return nil
        } catch {
            return error as? OAuthError
        }
    }

    @Test(arguments: [
        "https://api.example.com/orders", "urn:example:billing", "https://api.example.com/a?b=c",
    ])
    func indicatorsThatAreAbsoluteURIs(_ value: String) {
        #expect(ProtectedResource.isValidIndicator(value))
    }

    @Test(arguments: [
        "", "api.example.com/orders", "/orders", "https://api.example.com/orders#x", ":x", "https:",
        "1http://x", "https://api example.com",
    ])
    func indicatorsRefused(_ value: String) {
        #expect(!ProtectedResource.isValidIndicator(value))
    }

    @Test func apiScopesNameTheirAPIAndOthersAreLeftForNarrowing() throws {
        let selection = try Self.catalog.select(
            resources: [], scopes: ["openid", "orders:read", "unknown", "orders:read"], clientID: "web-app")
        #expect(selection.resources == ["https://api.example.com/orders"])
        #expect(selection.apiScopes == ["orders:read"])
        #expect(selection.otherScopes == ["openid", "unknown"])
    }

    @Test func explicitResourcesComeFirstWithoutDuplicates() throws {
        let selection = try Self.catalog.select(
            resources: ["urn:example:billing", "urn:example:billing"], scopes: ["orders:write"],
            clientID: "web-app")
        #expect(selection.resources == ["urn:example:billing", "https://api.example.com/orders"])
    }

    @Test func malformedResourceIsInvalidTarget() {
        let error = refusal {
            _ = try Self.catalog.select(resources: ["orders"], scopes: [], clientID: "web-app")
        }
        #expect(error?.code == .invalidTarget)
        #expect(error?.hint == "A 'resource' must be an absolute URI without a fragment.")
    }

    @Test func unknownResourceIsInvalidTarget() {
        let error = refusal {
            _ = try Self.catalog.select(
                resources: ["https://evil.example.com/"], scopes: ["openid"], clientID: "web-app")
        }
        #expect(error?.code == .invalidTarget)
        #expect(error?.hint == "The 'resource' is not a known API.")
    }

    @Test func resourceNotAllowedForTheClientIsInvalidTarget() {
        let error = refusal {
            _ = try Self.catalog.select(
                resources: ["urn:example:billing"], scopes: [], clientID: "native-app")
        }
        #expect(error?.code == .invalidTarget)
        #expect(error?.hint == "The client may not request the 'resource'.")
    }

    @Test func apiScopeNotAllowedForTheClientIsInvalidScope() {
        let error = refusal {
            _ = try Self.catalog.select(
                resources: [], scopes: ["openid", "billing:read"], clientID: "native-app")
        }
        #expect(error?.code == .invalidScope)
        #expect(error?.hint == "A requested API scope is not allowed for this client.")
    }

    @Test func targetIsTheNamedResourceWithinTheGrant() throws {
        let granted = [Self.orders.identifier, Self.billing.identifier]
        #expect(
            try Self.catalog.target(
                requested: [Self.billing.identifier], granted: granted, clientID: "web-app")
                == Self.billing)
        // Several APIs and none named: a token for this server's own endpoints.
        #expect(try Self.catalog.target(requested: [], granted: granted, clientID: "web-app") == nil)
        // One API: its token without naming it.
        #expect(
            try Self.catalog.target(requested: [], granted: [Self.orders.identifier], clientID: "web-app")
                == Self.orders)
        #expect(try Self.catalog.target(requested: [], granted: [], clientID: "web-app") == nil)
    }

    @Test func theIssuerIsAlwaysATargetForTheServersOwnToken() throws {
        let catalog = ResourceCatalog([Self.orders], issuer: Fixture.issuer)
        #expect(
            try catalog.target(
                requested: [Fixture.issuer], granted: [Self.orders.identifier], clientID: "web-app")
                == nil)
        let selection = try catalog.select(
            resources: [Fixture.issuer], scopes: ["openid", "orders:read"], clientID: "web-app")
        #expect(selection.resources == [Self.orders.identifier])
    }

    @Test func targetOutsideTheGrantIsInvalidTarget() {
        let error = refusal {
            _ = try Self.catalog.target(
                requested: [Self.billing.identifier], granted: [Self.orders.identifier], clientID: "web-app")
        }
        #expect(error?.code == .invalidTarget)
        #expect(error?.hint == "The 'resource' is not within the grant.")
    }

    @Test func twoTargetsAreRefused() {
        let error = refusal {
            _ = try Self.catalog.target(
                requested: [Self.orders.identifier, Self.billing.identifier],
                granted: [Self.orders.identifier, Self.billing.identifier], clientID: "web-app")
        }
        #expect(error?.code == .invalidTarget)
    }

    @Test func targetNoLongerAllowedAfterAReloadIsRefused() {
        let error = refusal {
            _ = try Self.catalog.target(
                requested: [], granted: [Self.billing.identifier], clientID: "native-app")
        }
        #expect(error?.code == .invalidTarget)
    }

    @Test func tokenScopesAreTheAudiencesOnly() {
        let granted = ["openid", "profile", "orders:read", "billing:read"]
        #expect(Self.catalog.tokenScopes(granted: granted, for: Self.orders) == ["orders:read"])
        #expect(Self.catalog.tokenScopes(granted: granted, for: nil) == ["openid", "profile"])
    }

    @Test func resourceServerAuthenticatesWithItsOwnSecret() throws {
        let api = try ResourceServerAuthentication.authenticate(
            .basic(clientID: "orders-api", secret: Fixture.secret), catalog: Self.catalog)
        #expect(api == Self.orders)
        #expect(
            try ResourceServerAuthentication.authenticate(
                .basic(clientID: "web-app", secret: Fixture.secret), catalog: Self.catalog) == nil)
    }

    @Test func resourceServerWithAWrongSecretOrNoneIsRefused() {
        for presented: PresentedClientCredentials in [
            .post(clientID: "orders-api", secret: "wrong"), .none(clientID: "orders-api"),
        ] {
            let error = refusal {
                _ = try ResourceServerAuthentication.authenticate(presented, catalog: Self.catalog)
            }
            #expect(error?.code == .invalidClient)
        }
    }

    @Test func authorizationRequestRecordsResourcesAndRefusesUnknownOnes() throws {
        var client = Fixture.web
        client.clientID = "web-app"
        let parameters = Fixture.authorize(
            client, ["scope": "openid orders:read"], extra: [("resource", "urn:example:billing")])
        let request = try AuthorizationRequest.validate(
            parameters, client: client, issuer: Fixture.issuer, resources: Self.catalog)
        #expect(request.scopes == ["openid", "orders:read"])
        #expect(request.resources == ["urn:example:billing", "https://api.example.com/orders"])

        do {
            _ = try AuthorizationRequest.validate(
                Fixture.authorize(client, extra: [("resource", "https://unknown.example.com/")]),
                client: client,
                issuer: Fixture.issuer, resources: Self.catalog)
            Issue.record("an unknown resource was accepted")
        } catch {
            // Redirected to the client, like other errors after the redirect URI is validated.
            #expect(error.error.code == .invalidTarget)
            #expect(error.response != nil)
        }
    }

    @Test func accessTokenCarriesExtraClaimsButNeverOverRegisteredOnes() {
        var claims = AccessTokenClaims(
            issuer: Fixture.issuer, audience: Self.orders.identifier, subject: "u", clientID: "web-app",
            expiresAt: Fixture.now, issuedAt: Fixture.now, jwtID: "j", scope: ["orders:read"], authTime: nil)
        claims.extraClaims = ["roles": .array([.string("admin")]), "sub": .string("forged")]
        #expect(claims.json["roles"] == .array([.string("admin")]))
        #expect(claims.json["sub"] == .string("u"))
        #expect(claims.json["aud"] == .string(Self.orders.identifier))
    }
}
