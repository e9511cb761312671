import Crypto
import Foundation
import Testing
@testable import OIDC

/// RFC 9101 request objects: each refusal with its exact hint, then what a good one yields.
@Suite struct RequestObjectTests {
    static let now = Fixture.now

    static func sign(
        _ claims: [String: JSONValue?] = [:], type: String? = RequestObject.type,
        client: OAuthClient = Fixture.web
    ) throws -> String {
        var payload: [String: JSONValue] = [
            "iss": .string(client.clientID), "aud": .string(Fixture.issuer),
            "client_id": .string(client.clientID),
            "exp": .int(Int(now.timeIntervalSince1970) + 300),
            "nbf": .int(Int(now.timeIntervalSince1970) - 10),
            "response_type": .string("code"), "scope": .string("openid"), "max_age": .int(60),
            "claims": .object(["userinfo": .object(["email": .null])]),
        ]
        for (name, value) in claims { payload[name] = value ?? nil }
        for (name, value) in claims where value == nil { payload.removeValue(forKey: name) }
        let signer = try JWSSigner(privateKey: try Fixture.signingKey(), algorithm: .ES256, keyID: "k1")
        return try signer.sign(payload: JSONBody.encode(payload), type: type)
    }

    static var keys: JWKS {
        var jwk = Vectors.ecJWK.publicJWK
        jwk.kid = "k1"
        return JWKS(keys: [jwk])
    }

    static func verify(_ object: String, client: OAuthClient = Fixture.web) throws(OAuthError)
        -> RequestObject.Verified
    {
        try RequestObject.verify(object, client: client, keys: keys, issuer: Fixture.issuer, now: now)
    }

    static func refusal(_ object: String, client: OAuthClient = Fixture.web) -> String? {
        do {
            _ = try verify(object, client: client)
            return nil
        } catch {
            #expect(error.code == .invalidRequestObject)
            return error.hint
        }
    }

    @Test func aGoodObjectYieldsItsParameters() throws {
        let verified = try Self.verify(try Self.sign(["jti": .string("j1")]))
        #expect(try verified.parameters.value("client_id") == "web-app")
        #expect(try verified.parameters.value("max_age") == "60")
        #expect(try verified.parameters.value("claims") == #"{"userinfo":{"email":null}}"#)
        #expect(verified.parameters.contains("iss") == false && verified.parameters.contains("exp") == false)
        #expect(verified.jwtID == "j1")
    }

    @Test func claimsAreChecked() throws {
        let t = Int(Self.now.timeIntervalSince1970)
        #expect(
            Self.refusal(try Self.sign(["aud": .string("https://other.example")]))
                == "The request object's 'aud' is not this server.")
        #expect(
            Self.refusal(try Self.sign(["iss": .string("native-app")]))
                == "The request object's 'iss' is not the client.")
        #expect(Self.refusal(try Self.sign(["exp": .int(t - 60)])) == "The request object has expired.")
        #expect(Self.refusal(try Self.sign(["exp": nil])) == "The request object has no 'exp' claim.")
        #expect(
            Self.refusal(try Self.sign(["exp": .int(t + 7_200)]))
                == "The request object's 'exp' is too far in the future.")
        #expect(
            Self.refusal(try Self.sign(["nbf": .int(t + 600)]))
                == "The request object is not valid yet ('nbf').")
        #expect(
            Self.refusal(try Self.sign(["nbf": .int(t - 7_200)])) == "The request object's 'nbf' is too old.")
        #expect(
            Self.refusal(try Self.sign(["client_id": .string("native-app")]))
                == "The request object's 'client_id' is not the client's.")
        #expect(
            Self.refusal(try Self.sign(["request_uri": .string("https://x")]))
                == "A request object cannot contain 'request' or 'request_uri'.")
        #expect(
            Self.refusal(try Self.sign(type: "JWT"))
                == "The request object's 'typ' is not oauth-authz-req+jwt.")
    }

    @Test func theSignatureMustVerifyWithTheClientsKeys() throws {
        let object = try Self.sign()
        var tampered = object.split(separator: ".").map(String.init)
        tampered[1] = Base64URL.encode(Array(#"{"iss":"web-app"}"#.utf8))
        #expect(
            Self.refusal(tampered.joined(separator: "."))
                == "The request object's signature does not verify with the client's keys.")
        let unsigned = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + tampered[1] + "."
        #expect(RequestObject.isSigned(unsigned) == false)
        #expect(Self.refusal(unsigned) == "The request object's signing algorithm is not allowed.")
        #expect(RequestObject.isSigned(object))
    }

    @Test func aFAPIClientNeedsTypAndNbf() throws {
        var client = Fixture.web
        client.profile = .fapi2
        #expect(
            Self.refusal(try Self.sign(type: nil, client: client), client: client)
                == "The request object's 'typ' must be oauth-authz-req+jwt.")
        #expect(
            Self.refusal(try Self.sign(["nbf": nil], client: client), client: client)
                == "The request object has no 'nbf' claim.")
        _ = try Self.verify(try Self.sign(client: client), client: client)
        _ = try Self.verify(try Self.sign(["nbf": nil], type: nil))
    }
}
