import Foundation
import Testing
@testable import OIDC

@Suite struct DiscoveryTests {
    @Test func members() throws {
        let document = DiscoveryDocument(issuer: "https://id.example.com/")
        let json = try JSONDecoder().decode([String: JSONValue].self, from: Data(document.jsonBody))
        func strings(_ name: String) -> [String]? { json[name]?.arrayValue?.compactMap(\.stringValue) }
        #expect(json["issuer"] == .string("https://id.example.com"))
        #expect(json["authorization_endpoint"] == .string("https://id.example.com/authorize"))
        #expect(json["token_endpoint"] == .string("https://id.example.com/token"))
        #expect(json["userinfo_endpoint"] == .string("https://id.example.com/userinfo"))
        #expect(json["jwks_uri"] == .string("https://id.example.com/jwks"))
        #expect(json["revocation_endpoint"] == .string("https://id.example.com/revoke"))
        #expect(json["introspection_endpoint"] == .string("https://id.example.com/introspect"))
        #expect(json["end_session_endpoint"] == .string("https://id.example.com/logout"))
        #expect(strings("response_types_supported") == ["code"])
        #expect(strings("response_modes_supported") == ["query", "form_post"])
        #expect(
            strings("grant_types_supported") == [
                "authorization_code", "refresh_token", "client_credentials",
                "urn:ietf:params:oauth:grant-type:token-exchange",
            ])
        #expect(strings("subject_types_supported") == ["public"])
        #expect(strings("id_token_signing_alg_values_supported") == ["RS256", "ES256", "EdDSA", "PS256"])
        #expect(
            strings("token_endpoint_auth_methods_supported")
                == ["client_secret_basic", "client_secret_post", "private_key_jwt", "none"])
        #expect(
            strings("token_endpoint_auth_signing_alg_values_supported") == [
                "RS256", "ES256", "EdDSA", "PS256",
            ])
        #expect(
            strings("introspection_endpoint_auth_methods_supported")
                == ["client_secret_basic", "client_secret_post", "private_key_jwt"])
        #expect(strings("revocation_endpoint_auth_methods_supported")?.contains("none") == true)
        #expect(strings("code_challenge_methods_supported") == ["S256"])
        #expect(strings("scopes_supported") == ["openid", "profile", "email", "offline_access"])
        #expect(strings("claims_supported")?.contains("email_verified") == true)
        #expect(strings("claims_supported")?.contains("preferred_username") == true)
        #expect(json["claims_parameter_supported"] == .bool(true))
        #expect(strings("acr_values_supported") == ["phrh", "phr", "basic"])
        for claim in [
            "acr", "name", "email", "email_verified", "given_name", "family_name", "preferred_username",
            "locale",
            "picture", "updated_at",
        ] {
            #expect(strings("claims_supported")?.contains(claim) == true, "\(claim)")
        }
        #expect(json["request_parameter_supported"] == .bool(true))
        #expect(
            strings("request_object_signing_alg_values_supported") == ["RS256", "ES256", "EdDSA", "PS256"])
        #expect(json["request_uri_parameter_supported"] == .bool(false))
        #expect(json["authorization_response_iss_parameter_supported"] == .bool(true))
        #expect(json["backchannel_logout_supported"] == .bool(true))
        #expect(json["backchannel_logout_session_supported"] == .bool(true))
        #expect(
            strings("prompt_values_supported") == ["none", "login", "consent", "select_account", "create"])
        #expect(strings("ui_locales_supported") == ["en", "ja"])
        #expect(
            document.clientAssertionAudiences == [
                "https://id.example.com/token", "https://id.example.com", "https://id.example.com/par",
            ])
        #expect(json["pushed_authorization_request_endpoint"] == .string("https://id.example.com/par"))
        #expect(json["require_pushed_authorization_requests"] == .bool(false))
        #expect(
            DiscoveryDocument(issuer: "https://id.example.com", requirePushedAuthorizationRequests: true)
                .json["require_pushed_authorization_requests"] == .bool(true))
        // Slashes are not escaped.
        #expect(!String(decoding: document.jsonBody, as: UTF8.self).contains("\\/"))
    }

    @Test func signingAlgorithmsListOnlyThoseWithAKey() {
        let document = DiscoveryDocument(issuer: "https://id.example.com")
        let json = document.json(signingAlgorithmsWithKeys: ["PS256", "RS256", "HS256"])
        #expect(
            json["id_token_signing_alg_values_supported"] == .array([.string("RS256"), .string("PS256")]))
        // Everything else is the plain document.
        var rest = json
        rest["id_token_signing_alg_values_supported"] = document.json["id_token_signing_alg_values_supported"]
        #expect(rest == document.json)
        #expect(
            document.json(signingAlgorithmsWithKeys: [])["id_token_signing_alg_values_supported"]
                == .array([]))
    }
}

@Suite struct JSONValueTests {
    @Test func decodesEveryKind() throws {
        let text = #"{"a":1,"b":1.5,"c":true,"d":"x","e":[null,{"f":-2}],"g":{}}"#
        let value = try JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8))
        #expect(
            value == [
                "a": .int(1), "b": .double(1.5), "c": .bool(true), "d": .string("x"),
                "e": .array([.null, .object(["f": .int(-2)])]), "g": .object([:]),
            ])
    }

    @Test func claimsParameterWithFractionalValue() throws {
        let request = try Fixture.validate(
            Fixture.authorize(
                Fixture.native,
                [
                    "scope": "openid email",
                    "claims": #"{"id_token":{"email":{"essential":true,"value":1.5}}}"#,
                ]))
        #expect(request.idTokenClaims == ["email"])
    }
}
