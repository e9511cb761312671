import Crypto
import Foundation
import OIDC
import Testing
import WebAuthnCore

@testable import AuthServer
@testable import WebAuthnTestSupport

/// Tampered JWTs at /userinfo and /logout, hostile WebAuthn JSON (bad base64url, oversized
/// and deeply nested CBOR and JSON, wrong origin, replays) and injection in every text field.
@Suite("Hostile input: tokens, passkeys and text fields")
struct HostileTokenAndPasskeyTests {
    static func b64(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes) }
    static func b64(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }

    /// Tampered variants of a real token: each must be refused.
    static func forgeries(of token: String, publicJWK: JWK) throws -> [(String, String)] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let header =
            try JSONSerialization.jsonObject(with: Data(try Base64URL.decode(parts[0]))) as? [String: Any]
            ?? [:]
        var payload =
            try JSONSerialization.jsonObject(with: Data(try Base64URL.decode(parts[1]))) as? [String: Any]
            ?? [:]
        func encode(_ object: [String: Any]) throws -> String {
            b64(Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])))
        }
        func withHeader(_ changes: [String: Any]) throws -> [String: Any] {
            var copy = header
            for (key, value) in changes { copy[key] = value }
            return copy
        }
        let payloadPart = parts[1]
        var forged: [(String, String)] = []
        forged.append(("alg none", try encode(withHeader(["alg": "none"])) + "." + payloadPart + "."))
        forged.append(("alg None", try encode(withHeader(["alg": "None"])) + "." + payloadPart + "."))
        forged.append(
            (
                "alg none keeping the signature",
                try encode(withHeader(["alg": "none"])) + "." + payloadPart + "." + parts[2]
            ))
        // HS256 keyed with the public key, in each form an attacker might guess.
        let publicJSON = String(decoding: try JSONEncoder().encode(publicJWK), as: UTF8.self)
        for (label, key) in [
            ("JWK JSON", Array(publicJSON.utf8)),
            ("modulus", try Base64URL.decode(publicJWK.n ?? publicJWK.x ?? "")),
        ] {
            let input = try encode(withHeader(["alg": "HS256"])) + "." + payloadPart
            let mac = HMAC.authenticationCode(for: Array(input.utf8), using: SymmetricKey(bytes: key)).bytes
            forged.append(("HS256 keyed with the public key (\(label))", input + "." + b64(mac)))
        }
        forged.append(
            (
                "unknown kid",
                try encode(withHeader(["kid": "unknown-kid"])) + "." + payloadPart + "." + parts[2]
            ))
        forged.append(
            (
                "kid path traversal",
                try encode(withHeader(["kid": "../../../../../../dev/null"])) + "." + payloadPart + "."
                    + parts[2]
            ))
        forged.append(
            (
                "kid SQL injection",
                try encode(withHeader(["kid": "x' UNION SELECT 'a"])) + "." + payloadPart + "." + parts[2]
            ))
        forged.append(
            (
                "kid 10 KB",
                try encode(withHeader(["kid": String(repeating: "k", count: 10_000)])) + "." + payloadPart
                    + "." + parts[2]
            ))
        // An attacker's own key, announced in the header.
        let attacker = try P256.Signing.PrivateKey()
        let attackerJWK = try JWK(publicKey: .p256(attacker.publicKey), algorithm: .ES256)
        let jwkObject = try JSONSerialization.jsonObject(with: JSONEncoder().encode(attackerJWK))
        for (label, extra) in [
            ("embedded jwk", ["jwk": jwkObject]),
            ("jku", ["jku": "http://127.0.0.1:9/jwks"] as [String: Any]),
        ] {
            var changes: [String: Any] = ["alg": "ES256", "kid": "attacker"]
            for (key, value) in extra { changes[key] = value }
            let input = try encode(withHeader(changes)) + "." + payloadPart
            let signature = try attacker.signature(for: Array(input.utf8)).rawRepresentation
            forged.append(("attacker key via \(label)", input + "." + b64(signature)))
        }
        payload["sub"] = UUID().uuidString.lowercased()
        forged.append(("modified subject", parts[0] + "." + (try encode(payload)) + "." + parts[2]))
        payload["exp"] = 4_102_444_800
        forged.append(("extended expiry", parts[0] + "." + (try encode(payload)) + "." + parts[2]))
        forged.append(("signature removed", parts[0] + "." + payloadPart + "."))
        var flipped = try Base64URL.decode(parts[2])
        flipped[flipped.count / 2] ^= 1
        forged.append(("one signature bit flipped", parts[0] + "." + payloadPart + "." + b64(flipped)))
        forged.append(
            (
                "unknown critical header",
                try encode(withHeader(["crit": ["x-evil"], "x-evil": true])) + "." + payloadPart + "."
                    + parts[2]
            ))
        forged.append(("two segments", parts[0] + "." + payloadPart))
        forged.append(("four segments", token + ".x"))
        forged.append(("characters outside base64url", parts[0] + ".!!!." + parts[2]))
        forged.append(("bad base64url length", parts[0] + ".abcde." + parts[2]))
        forged.append(("header not JSON", b64("not json") + "." + payloadPart + "." + parts[2]))
        forged.append(
            (
                "deeply nested header",
                b64(String(repeating: "[", count: 3_000)) + "." + payloadPart + "." + parts[2]
            ))
        return forged
    }

    @Test func tamperedTokensAreRefusedAtUserinfoAndLogout() throws {
        let app = try OAuthFixtures.app()
        let (agent, tokens) = try app.signedInFlow()
        let keys = try app.signingKeys.publishedJWKS().keys
        let rsa = try #require(keys.first { $0.kty == "RSA" })
        let catalogue = HostileCatalogue(app: app)
        var cases: [HostileCase] = []
        for (name, token) in try Self.forgeries(of: tokens.accessToken, publicJWK: rsa) {
            // RFC 6750 §2.1: a credential outside the b64token syntax is a malformed request.
            let malformed = name == "characters outside base64url"
            cases.append(
                .init(
                    "userinfo: \(name)", malformed ? 400 : 401,
                    malformed ? "invalid_request" : "invalid_token"
                ) {
                    try app.userinfo(token)
                })
        }
        let idToken = try #require(tokens.idToken)
        cases.append(
            .init("userinfo: ID token as access token", 401, "invalid_token") { try app.userinfo(idToken) })
        cases.append(
            .init("userinfo: two Authorization headers", 400, "invalid_request") {
                TestAgent.Reply(
                    response: try app.client.get(
                        "/userinfo",
                        headers: [
                            ("Authorization", "Bearer \(tokens.accessToken)"), ("Authorization", "Bearer x"),
                        ]))
            })
        cases.append(
            .init("userinfo: header and query token", 400, "invalid_request") {
                TestAgent.Reply(
                    response: try app.client.get(
                        "/userinfo?access_token=\(tokens.accessToken)",
                        headers: [("Authorization", "Bearer \(tokens.accessToken)")]))
            })
        // A forged hint counts as none: the user is asked (the confirmation form), never
        // signed out at once nor sent to the client.
        for (name, hint) in try Self.forgeries(of: idToken, publicJWK: rsa) {
            cases.append(
                .init("logout hint: \(name)", 200, "logout-form") {
                    try agent.send(
                        "GET",
                        "/logout?"
                            + FormEncoding.encode([
                                (name: "id_token_hint", value: hint),
                                (name: "post_logout_redirect_uri", value: "https://rp.example/signed-out"),
                            ]))
                })
        }
        #expect(cases.count >= 45)
        try catalogue.run(cases)
        // The session survived every forged logout.
        #expect(try agent.send("GET", "/api/account").status == 200)
        #expect(try app.userinfo(tokens.accessToken).status == 200)
    }

    // MARK: - WebAuthn JSON

    /// CBOR an attacker might send as an attestation object.
    static let hostileCBOR: [(String, [UInt8])] = [
        ("empty", []),
        ("deeply nested arrays", [UInt8](repeating: 0x81, count: 100_000) + [0x00]),
        ("deeply nested maps", Array(repeating: [0xA1, 0x00], count: 50_000).flatMap { $0 } + [0x00]),
        ("indefinite nesting", [UInt8](repeating: 0x9F, count: 100_000)),
        (
            "huge claimed byte string",
            [0xA1, 0x63] + Array("fmt".utf8) + [0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        ),
        ("huge claimed map", [0xBB, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
        ("huge claimed array", [0x9B, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]),
        ("reserved additional info", [0x1C]),
        ("break outside indefinite", [0xFF]),
        ("truncated map", [0xA3, 0x63, 0x66, 0x6D, 0x74]),
        (
            "oversized, 700 KB byte string",
            [0xA1, 0x63] + Array("fmt".utf8) + [0x5A, 0x00, 0x0A, 0xAE, 0x60]
                + [UInt8](repeating: 0x41, count: 700_000)
        ),
        ("invalid UTF-8 text key", [0xA1, 0x62, 0xFF, 0xFE, 0x00]),
        ("tag bomb", [UInt8](repeating: 0xC6, count: 100_000) + [0x00]),
    ]

    static let badBase64: [(String, String)] = [
        ("standard alphabet", "ab+/cd=="), ("padding", "YWJj="), ("spaces", "YW Jj"),
        ("non-ASCII", "YWJj\u{00E9}"),
        ("one char", "Y"), ("NUL", "YW\u{0}Jj"),
    ]

    @Test func hostileWebAuthnResponsesAreRefused() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        #expect(try agent.signUp(email: TestAgent.uniqueEmail("pk")).status == 201)
        let account = try agent.send("GET", "/api/account")
        let handle = try Base64URL.decode(
            try #require((account.json["signal"] as? [String: Any])?["userId"] as? String))
        let authenticator = try SoftwareAuthenticator()
        #expect(try agent.registerPasskey(authenticator).status == 201)

        // A sign-in whose finish body is replayed below.
        let first = TestAgent(app)
        let start = try first.post("/api/passkeys/authentication/start")
        let firstChallenge = try Base64URL.decode(
            try #require((start.json["options"] as? [String: Any])?["challenge"] as? String))
        let assertion = try authenticator.serverAssertion(challenge: firstChallenge).userHandle(handle).json()
        let finishBody = AuthenticationFinish(
            challengeID: start.json["challenge_id"] as? String ?? "", credential: assertion)
        #expect(try first.postEncodable("/api/passkeys/authentication/finish", finishBody).status == 200)

        // Challenges and registrations for the counted batch, issued beforehand.
        let browser = TestAgent(app)
        func authenticationChallenge() throws -> (String, [UInt8]) {
            let reply = try browser.post("/api/passkeys/authentication/start")
            return (
                reply.json["challenge_id"] as? String ?? "",
                try Base64URL.decode((reply.json["options"] as? [String: Any])?["challenge"] as? String ?? "")
            )
        }
        func registrationChallenge() throws -> (String, [UInt8]) {
            let reply = try agent.post("/api/passkeys/registration/start")
            return (
                reply.json["challenge_id"] as? String ?? "",
                try Base64URL.decode((reply.json["options"] as? [String: Any])?["challenge"] as? String ?? "")
            )
        }
        func assertionBody(_ id: String, _ credential: AuthenticationResponseJSON) throws -> [String: Any] {
            try JSONSerialization.jsonObject(
                with: JSONEncoder().encode(AuthenticationFinish(challengeID: id, credential: credential)))
                as? [String: Any] ?? [:]
        }
        func registrationBody(_ id: String, _ credential: RegistrationResponseJSON) throws -> [String: Any] {
            try JSONSerialization.jsonObject(
                with: JSONEncoder().encode(RegistrationFinish(challengeID: id, credential: credential)))
                as? [String: Any] ?? [:]
        }
        func replacing(_ body: [String: Any], _ field: String, with value: Any) -> [String: Any] {
            var copy = body
            var credential = copy["credential"] as? [String: Any] ?? [:]
            var response = credential["response"] as? [String: Any] ?? [:]
            if ["id", "rawId", "type"].contains(field) {
                credential[field] = value
            } else {
                response[field] = value
            }
            credential["response"] = response
            copy["credential"] = credential
            return copy
        }

        var cases: [HostileCase] = []
        let signInPath = "/api/passkeys/authentication/finish"
        let registerPath = "/api/passkeys/registration/finish"
        cases.append(
            .init("replayed sign-in response", 400, "challenge_invalid") {
                try first.postEncodable(signInPath, finishBody)
            })
        do {
            let (id, _) = try authenticationChallenge()
            cases.append(
                .init("old assertion on a new challenge", 400, "passkey_verification_failed") {
                    try browser.postEncodable(
                        signInPath, AuthenticationFinish(challengeID: id, credential: assertion))
                })
        }
        for (label, origin, rpID) in [
            ("wrong origin", "https://evil.example", ServerRP.id),
            ("http origin on another port", "http://localhost:8081", ServerRP.id),
            ("origin with a path", "http://localhost:8080/x", ServerRP.id),
            ("wrong RP ID hash", ServerRP.origin, "evil.example"),
        ] {
            let (id, challenge) = try authenticationChallenge()
            let credential = try authenticator.makeAssertion(challenge: challenge, origin: origin, rpID: rpID)
                .userHandle(handle).json()
            cases.append(
                .init("sign-in: \(label)", 400, "passkey_verification_failed") {
                    try browser.postEncodable(
                        signInPath, AuthenticationFinish(challengeID: id, credential: credential))
                })
        }
        do {
            let (id, challenge) = try authenticationChallenge()
            let credential = try authenticator.serverAssertion(challenge: challenge).userHandle(handle)
                .clientDataType("webauthn.create").json()
            cases.append(
                .init("sign-in: type webauthn.create", 400, "passkey_verification_failed") {
                    try browser.postEncodable(
                        signInPath, AuthenticationFinish(challengeID: id, credential: credential))
                })
        }
        for field in ["clientDataJSON", "authenticatorData", "signature", "userHandle"] {
            for (label, text) in Self.badBase64.prefix(3) {
                let (id, challenge) = try authenticationChallenge()
                let body = replacing(
                    try assertionBody(
                        id, try authenticator.serverAssertion(challenge: challenge).userHandle(handle).json()),
                    field, with: text)
                cases.append(
                    .init("sign-in: \(field) \(label)", 400, "passkey_verification_failed") {
                        try browser.post(signInPath, body)
                    })
            }
        }
        for (label, text) in Self.badBase64 {
            let (id, challenge) = try authenticationChallenge()
            let body = replacing(
                try assertionBody(
                    id, try authenticator.serverAssertion(challenge: challenge).userHandle(handle).json()),
                "rawId", with: text)
            cases.append(
                .init("sign-in: rawId \(label)", 401, "unknown_credential") {
                    try browser.post(signInPath, body)
                })
        }
        do {
            let (id, challenge) = try authenticationChallenge()
            let nested = Self.b64(String(repeating: "[", count: 100_000))
            let body = replacing(
                try assertionBody(
                    id, try authenticator.serverAssertion(challenge: challenge).userHandle(handle).json()),
                "clientDataJSON", with: nested)
            cases.append(
                .init("sign-in: deeply nested clientDataJSON", 400, "passkey_verification_failed") {
                    try browser.post(signInPath, body)
                })
        }
        cases.append(
            .init("sign-in: challenge_id not a UUID", 400, "invalid_request") {
                try browser.post(
                    signInPath,
                    ["challenge_id": "'; DROP TABLE accounts; --", "credential": [:] as [String: Any]])
            })
        cases.append(
            .init("sign-in: body is a deeply nested array", 400, "invalid_request") {
                try browser.postRaw(signInPath, Array(String(repeating: "[", count: 200_000).utf8))
            })
        cases.append(
            .init("sign-in: body is invalid UTF-8", 400, "invalid_request") {
                try browser.postRaw(
                    signInPath, Array(#"{"challenge_id":""#.utf8) + [0xFF, 0xFE] + Array(#""}"#.utf8))
            })
        cases.append(
            .init("sign-in: body is not JSON", 400, "invalid_request") {
                try browser.postRaw(signInPath, Array("challenge_id=1".utf8))
            })
        cases.append(
            .init("sign-in: body as a form", 415, "unsupported_media_type") {
                try browser.postRaw(
                    signInPath, Array("challenge_id=1".utf8), contentType: "application/x-www-form-urlencoded"
                )
            })

        // Registration (signed in): hostile attestation objects and client data.
        for (label, cbor) in Self.hostileCBOR {
            let (id, challenge) = try registrationChallenge()
            let body = replacing(
                try registrationBody(id, try authenticator.serverRegistration(challenge: challenge).json()),
                "attestationObject", with: Self.b64(cbor))
            cases.append(
                .init("registration: CBOR \(label)", 400, "passkey_verification_failed") {
                    try agent.post(registerPath, body)
                })
        }
        for (label, text) in Self.badBase64 {
            let (id, challenge) = try registrationChallenge()
            let body = replacing(
                try registrationBody(id, try authenticator.serverRegistration(challenge: challenge).json()),
                "attestationObject", with: text)
            cases.append(
                .init("registration: attestationObject \(label)", 400, "passkey_verification_failed") {
                    try agent.post(registerPath, body)
                })
        }
        do {
            let other = try SoftwareAuthenticator()
            let (id, challenge) = try registrationChallenge()
            let credential = try other.makeRegistration(
                challenge: challenge, origin: "https://evil.example", rpID: ServerRP.id
            ).json()
            cases.append(
                .init("registration: wrong origin", 400, "passkey_verification_failed") {
                    try agent.postEncodable(
                        registerPath, RegistrationFinish(challengeID: id, credential: credential))
                })
        }
        do {
            let other = try SoftwareAuthenticator()
            let (id, challenge) = try registrationChallenge()
            let credential = try other.serverRegistration(challenge: challenge).json()
            let stranger = TestAgent(app)
            try stranger.signUp(email: TestAgent.uniqueEmail("stranger"))
            let signUpOfStranger = try stranger.send("GET", "/api/account")
            #expect(signUpOfStranger.status == 200)
            cases.append(
                .init("registration: another account's challenge", 400, "challenge_invalid") {
                    try stranger.postEncodable(
                        registerPath, RegistrationFinish(challengeID: id, credential: credential))
                })
        }
        // Passkey sign-up: a reserved registration, finished with hostile bodies.
        let newcomer = TestAgent(app)
        let signUp = try newcomer.post(
            "/api/passkeys/signup/start", ["email": "new@example.com", "display_name": "New"])
        let registrationID = signUp.json["registration_id"] as? String ?? ""
        let signUpChallenge = try Base64URL.decode(
            (signUp.json["options"] as? [String: Any])?["challenge"] as? String ?? "")
        let newKey = try SoftwareAuthenticator()
        func signUpBody(
            email: String = TestAgent.uniqueEmail("new"), name: String = "New",
            origin: String = ServerRP.origin
        ) throws -> [String: Any] {
            let credential = try newKey.makeRegistration(
                challenge: signUpChallenge, origin: origin, rpID: ServerRP.id
            ).json()
            return try JSONSerialization.jsonObject(
                with: JSONEncoder().encode(
                    SignUpFinish(
                        registrationID: registrationID, email: email, displayName: name,
                        credential: credential))) as? [String: Any] ?? [:]
        }
        let signUpPath = "/api/passkeys/signup/finish"
        let wrongOrigin = try signUpBody(origin: "https://evil.example")
        cases.append(
            .init("sign-up: wrong origin", 400, "passkey_verification_failed") {
                try newcomer.post(signUpPath, wrongOrigin)
            })
        // Another account's email is not refused (that would reveal the account): see
        // SignUpEnumerationTests.
        for (label, email) in [
            ("HTML email", "<script>alert(1)</script>@example.com"), ("no at sign", "example.com"),
            ("SQL email", "' OR 1=1 --"), ("two recipients", "a@example.com,b@example.com"),
            ("display-name form", "Eve <eve@example.com>"), ("quoted local part", "\"a b\"@example.com"),
            ("newline in email", "a@example.com\r\nBcc: b@example.com"), ("empty email", ""),
        ] {
            let body = try signUpBody(email: email)
            cases.append(
                .init("sign-up: \(label)", 400, "invalid_email") { try newcomer.post(signUpPath, body) })
        }
        for (label, name) in [
            ("empty name", ""), ("name of 201 characters", String(repeating: "n", count: 201)),
        ] {
            let body = try signUpBody(name: name)
            cases.append(
                .init("sign-up: \(label)", 400, "invalid_display_name") {
                    try newcomer.post(signUpPath, body)
                })
        }
        #expect(cases.count >= 50)
        try HostileCatalogue(app: app).run(cases)
        // The reserved sign-up still works after all of that.
        #expect(try newcomer.post(signUpPath, try signUpBody()).status == 201)
    }

    // MARK: - Injection in text fields

    static let hostileTexts = [
        "<script>alert(1)</script>", "\"><img src=x onerror=alert(1)>", "'; DROP TABLE accounts; --",
        "Robert'); DELETE FROM passkey_credentials;--", "</textarea><svg onload=alert(1)>", "{{7*7}} ${7*7}",
        "&lt;already escaped&gt; &amp;", "\u{202E}evil\u{202C} 名前",
    ]

    @Test func injectedTextIsStoredVerbatimAndRenderedEscaped() throws {
        let app = try OAuthFixtures.app()
        for text in Self.hostileTexts {
            let agent = TestAgent(app)
            let email = TestAgent.uniqueEmail("inj")
            #expect(try agent.signUp(email: email, name: text).status == 201, "sign-up with \(text)")
            #expect(try agent.send("GET", "/api/account").json["display_name"] as? String == text)
            let authenticator = try SoftwareAuthenticator()
            let registered = try agent.registerPasskey(authenticator)
            let passkeyID = try #require(registered.json["id"] as? String)
            let renamed = try agent.send("PATCH", "/api/passkeys/\(passkeyID)", json: ["name": text])
            #expect(renamed.status == 204)
            let listed = try agent.send("GET", "/api/passkeys")
            #expect((listed.json["passkeys"] as? [[String: Any]])?.first?["name"] as? String == text)
            let page = try agent.send("GET", "/account")
            #expect(page.status == 200)
            let escaped = text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(
                of: "<", with: "&lt;"
            )
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            if text.contains("<") || text.contains("&") {
                #expect(!page.text.contains(text), "raw \(text) on the account page")
            }
            #expect(page.text.contains(escaped), "escaped \(text) on the account page")
            // The consent page shows the account's email and name, escaped.
            let consent = try agent.send("GET", "/authorize?" + AuthorizationAttempt().query)
            #expect(consent.status == 200)
            if text.contains("<") { #expect(!consent.text.contains(text)) }
        }
        // Hostile text as an email is refused, as a login hint it is escaped.
        let agent = TestAgent(app)
        for text in Self.hostileTexts {
            let reply = try agent.post(
                "/api/signup/password",
                ["email": text, "display_name": "x", "password": "correct horse battery"])
            #expect(reply.status == 400)
            #expect(reply.error == "invalid_email")
            let page = try agent.send(
                "GET", "/signin?" + FormEncoding.encode([(name: "login_hint", value: text)]))
            #expect(page.status == 200)
            if text.contains("<") { #expect(!page.text.contains(text)) }
        }
        let accounts = try app.sql("SELECT count(*)::int AS n FROM accounts")
        #expect(try accounts.first?.decode("n", as: Int.self) == Self.hostileTexts.count)
        #expect(
            try app.sql("SELECT count(*)::int AS n FROM passkey_credentials").first?.decode("n", as: Int.self)
                == Self.hostileTexts.count)
    }
}

extension TestAgent {
    /// A state-changing call with this agent's cookies and CSRF token and a body sent as is.
    func postRaw(_ path: String, _ body: [UInt8], contentType: String = "application/json") throws -> Reply {
        try prepareCSRF()
        var headers = [("Content-Type", contentType), ("Origin", origin), ("X-CSRF-Token", csrfToken ?? "")]
        if !cookies.isEmpty {
            headers.append(("Cookie", cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")))
        }
        return Reply(response: try client.send(method: "POST", target: path, headers: headers, body: body))
    }
}
