import Foundation
import OIDC
import Testing

@testable import AuthServer
@testable import WebAuthnTestSupport

/// The profile claims through `PATCH /api/account` and what ID tokens and userinfo release:
/// the values, their omission when unset, and `updated_at` as the time the profile changed.
@Suite("Profile claims: account API, userinfo, ID token, updated_at")
struct ProfileClaimsTests {
    static let full: [String: String] = [
        "given_name": "Hanako", "family_name": "Yamada", "preferred_username": "hanako",
        "locale": "JA-jp", "picture": "https://cdn.example.com/hanako.png",
    ]

    @Test func theAPIStoresReturnsAndRemovesTheFields() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail(), name: "Hanako Yamada")
        let empty = try agent.send("GET", "/api/account").json
        for field in ProfileFields.Field.allCases { #expect(empty[field.rawValue] is NSNull, "\(field)") }

        let saved = try agent.send("PATCH", "/api/account", json: Self.full)
        #expect(saved.status == 200, "\(saved.text)")
        #expect(saved.json["given_name"] as? String == "Hanako")
        #expect(saved.json["locale"] as? String == "ja-JP")
        #expect(saved.json["display_name"] as? String == "Hanako Yamada")
        let read = try agent.send("GET", "/api/account").json
        #expect(read["family_name"] as? String == "Yamada")
        #expect(read["preferred_username"] as? String == "hanako")
        #expect(read["picture"] as? String == "https://cdn.example.com/hanako.png")

        // Absent members stay; "" and null remove.
        let partial = try agent.send("PATCH", "/api/account", json: ["given_name": "", "picture": NSNull()])
        #expect(partial.status == 200)
        #expect(partial.json["given_name"] is NSNull)
        #expect(partial.json["picture"] is NSNull)
        #expect(partial.json["family_name"] as? String == "Yamada")
        #expect(partial.json["display_name"] as? String == "Hanako Yamada")
        #expect(
            try app.sql("SELECT given_name, picture FROM accounts").first.map {
                (try $0.decode("given_name", as: String?.self), try $0.decode("picture", as: String?.self))
            }! == (nil, nil))

        // The display name alone, as before.
        #expect(
            try agent.send("PATCH", "/api/account", json: ["display_name": "H. Y."]).json["display_name"]
                as? String == "H. Y.")
        #expect(
            try agent.send("PATCH", "/api/account", json: ["display_name": " "]).error
                == "invalid_display_name")
        #expect(
            try agent.send("PATCH", "/api/account", json: ["display_name": NSNull()]).error
                == "invalid_display_name")
    }

    /// Each bad value as a JSON fragment.
    @Test(arguments: [
        ("given_name", #""Ann\nAdmin""#), ("family_name", "\"\(String(repeating: "x", count: 201))\""),
        ("preferred_username", "\"\(String(repeating: "u", count: 65))\""), ("locale", #""ja_JP""#),
        ("picture", #""http://example.com/me.png""#), ("picture", #""https://user:pw@example.com/me.png""#),
        ("picture", #""javascript:alert(1)""#), ("given_name", "42"), ("locale", #"["en"]"#),
    ])
    func badValuesAre400NamingTheFieldAndWriteNothing(_ field: String, _ fragment: String) throws {
        let value = try JSONSerialization.jsonObject(with: Data(fragment.utf8), options: .fragmentsAllowed)
        let app = try TestApplication()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail(), name: "Before")
        let before = try app.sql("SELECT profile_updated_at FROM accounts").first?.decode(
            "profile_updated_at", as: Date.self)
        // A valid change in the same request is not written either: all or nothing.
        var body: [String: Any] = ["display_name": "After", "given_name": "Kept"]
        body[field] = value
        let reply = try agent.send("PATCH", "/api/account", json: body)
        #expect(reply.status == 400)
        #expect(reply.error == "invalid_\(field)")
        #expect((reply.json["message"] as? String)?.hasPrefix("\(field): ") == true)
        let row = try #require(
            try app.sql("SELECT display_name, given_name, profile_updated_at FROM accounts").first)
        #expect(try row.decode("display_name", as: String.self) == "Before")
        #expect(try row.decode("given_name", as: String?.self) == nil)
        #expect(try row.decode("profile_updated_at", as: Date.self) == before)
    }

    @Test func aChangeNeedsTheSessionAndTheCSRFToken() throws {
        let app = try TestApplication()
        let victim = TestAgent(app)
        try victim.signUp(email: TestAgent.uniqueEmail(), name: "Victim")
        // A cross-site request rides on the victim's cookie but cannot read the CSRF token.
        let forged = try victim.send(
            "PATCH", "/api/account", json: ["picture": "https://evil.example/x.png"], csrf: false)
        #expect(forged.status == 403)
        #expect(forged.error == "csrf_failed")
        // No session at all.
        let stranger = TestAgent(app)
        try stranger.prepareCSRF()
        let anonymous = try stranger.send("PATCH", "/api/account", json: ["given_name": "Mallory"])
        #expect(anonymous.status == 401)
        #expect(anonymous.error == "not_signed_in")
        #expect(
            try app.count("SELECT count(*) FROM accounts WHERE picture IS NOT NULL OR given_name IS NOT NULL")
                == 0)
    }

    @Test func userinfoAndTheIDTokenReleaseTheFieldsAndOmitUnsetOnes() throws {
        let app = try OAuthFixtures.app()
        let (agent, tokens) = try app.signedInFlow()
        let bare = try app.userinfo(tokens.accessToken).json
        for field in ProfileFields.Field.allCases { #expect(bare.keys.contains(field.rawValue) == false) }
        #expect(try agent.send("PATCH", "/api/account", json: Self.full).status == 200)

        let info = try app.userinfo(tokens.accessToken).json
        #expect(info["given_name"] as? String == "Hanako")
        #expect(info["family_name"] as? String == "Yamada")
        #expect(info["preferred_username"] as? String == "hanako")
        #expect(info["locale"] as? String == "ja-JP")
        #expect(info["picture"] as? String == "https://cdn.example.com/hanako.png")

        // The ID token carries them when the claims request parameter asks (Core §5.5).
        let idToken = try Self.idTokenClaims(app, agent)
        #expect(idToken["given_name"] == .string("Hanako"))
        #expect(idToken["locale"] == .string("ja-JP"))
        #expect(idToken["picture"] == .string("https://cdn.example.com/hanako.png"))

        // Removed: absent, not null.
        #expect(try agent.send("PATCH", "/api/account", json: ["locale": ""]).status == 200)
        #expect(try app.userinfo(tokens.accessToken).json.keys.contains("locale") == false)
    }

    /// The claims of an ID token from a new code flow of the signed-in `agent` that asks for the
    /// profile claims in the ID token with the `claims` parameter.
    static func idTokenClaims(_ app: TestApplication, _ agent: TestAgent) throws -> [String: JSONValue] {
        var attempt = AuthorizationAttempt()
        attempt.extra = [
            (
                "claims",
                #"{"id_token": {"given_name": null, "locale": null, "picture": null, "updated_at": null}}"#
            )
        ]
        let (_, tokens) = try app.signedInFlow(attempt, agent: agent)
        return try app.claims(of: try #require(tokens.idToken))
    }

    /// `updated_at` of userinfo, and the stored time set back a day so that a change shows.
    static func updatedAt(_ app: TestApplication, _ accessToken: String, rewind: Bool = false) throws -> Int {
        if rewind {
            try app.sql("UPDATE accounts SET profile_updated_at = profile_updated_at - interval '1 day'")
        }
        return try #require(try app.userinfo(accessToken).json["updated_at"] as? Int)
    }

    @Test func updatedAtMovesWithTheProfileAndNotWithOtherChanges() throws {
        let app = try OAuthFixtures.app()
        let (agent, tokens) = try app.signedInFlow()
        let email = try #require(try agent.send("GET", "/api/account").json["email"] as? String)
        let now = Int(Date().timeIntervalSince1970)
        let rewound = try Self.updatedAt(app, tokens.accessToken, rewind: true)
        #expect(rewound < now - 80_000)

        // Unrelated changes: a passkey added, the same name saved again.
        #expect(try agent.registerPasskey(try SoftwareAuthenticator()).status == 201)
        #expect(try agent.send("PATCH", "/api/account", json: ["display_name": "Test User"]).status == 200)
        #expect(try Self.updatedAt(app, tokens.accessToken) == rewound)

        // The display name (the `name` claim).
        #expect(try agent.send("PATCH", "/api/account", json: ["display_name": "New Name"]).status == 200)
        let renamed = try Self.updatedAt(app, tokens.accessToken)
        #expect(renamed >= now - 5)
        let account = try #require(
            try agent.send("GET", "/api/account").json["profile_updated_at"] as? String)
        #expect(account == iso8601(Date(timeIntervalSince1970: TimeInterval(renamed))))

        // A profile field, and its removal.
        let before = try Self.updatedAt(app, tokens.accessToken, rewind: true)
        #expect(
            try agent.send("PATCH", "/api/account", json: ["preferred_username": "newname"]).status == 200)
        #expect(try Self.updatedAt(app, tokens.accessToken) > before)
        let beforeRemoval = try Self.updatedAt(app, tokens.accessToken, rewind: true)
        #expect(try agent.send("PATCH", "/api/account", json: ["preferred_username": ""]).status == 200)
        #expect(try Self.updatedAt(app, tokens.accessToken) > beforeRemoval)

        // The address's verification (the `email_verified` claim).
        let beforeVerification = try Self.updatedAt(app, tokens.accessToken, rewind: true)
        let (code, _) = try verificationCode(app, to: email)
        #expect(try agent.post("/api/account/email/verify", ["code": code]).status == 200)
        let verified = try app.userinfo(tokens.accessToken).json
        #expect(verified["email_verified"] as? Bool == true)
        #expect(try #require(verified["updated_at"] as? Int) > beforeVerification)

        // The ID token carries the same time.
        #expect(
            try Self.idTokenClaims(app, agent)["updated_at"]
                == .int(try #require(verified["updated_at"] as? Int)))
    }

    @Test func theAccountPageShowsTheFieldsWithTheirAutofillTokens() throws {
        let app = try TestApplication()
        let agent = TestAgent(app)
        try agent.signUp(email: TestAgent.uniqueEmail())
        #expect(try agent.send("PATCH", "/api/account", json: Self.full).status == 200)
        let page = try agent.send("GET", "/account")
        #expect(page.status == 200)
        for (name, token, value) in [
            ("given_name", "given-name", "Hanako"), ("family_name", "family-name", "Yamada"),
            ("preferred_username", "username", "hanako"), ("locale", "language", "ja-JP"),
            ("picture", "photo", "https://cdn.example.com/hanako.png"),
        ] {
            #expect(page.text.contains(#"name="\#(name)""#), "\(name)")
            #expect(page.text.contains(#"autocomplete="\#(token)""#), "\(token)")
            #expect(page.text.contains(#"value="\#(value)""#), "\(value)")
            #expect(page.text.contains(#"id="\#(name)-error""#), "\(name) error")
        }
    }
}
