import Crypto
import Foundation
import Testing
import WebAuthnCore

@testable import AuthServer
@testable import WebAuthnTestSupport

/// What a passkey sign-in answers for the WebAuthn Signal API (WebAuthn Level 3 §5.1.10).
@Suite("Passkey sign-in signals")
struct PasskeySignalsTests {
    static func signals(_ reply: TestAgent.Reply) throws -> (accepted: [String: Any], details: [String: Any])
    {
        let signals = try #require(reply.json["signals"] as? [String: Any])
        return (
            try #require(signals["all_accepted_credentials"] as? [String: Any]),
            try #require(signals["current_user_details"] as? [String: Any])
        )
    }

    @Test func aPasskeySignInAnswersItsAccountsCurrentPasskeysNameAndEmail() throws {
        let app = try TestApplication()
        let email = TestAgent.uniqueEmail("signals")
        let (agent, handle) = try PasskeyFlowTests.signedIn(app, email: email)
        let first = try SoftwareAuthenticator()
        let second = try SoftwareAuthenticator()
        #expect(try agent.registerPasskey(first).status == 201)
        #expect(try agent.registerPasskey(second).status == 201)
        // Another account's passkey never appears in this account's list.
        let (other, _) = try PasskeyFlowTests.signedIn(app)
        #expect(try other.registerPasskey(try SoftwareAuthenticator()).status == 201)

        let signedIn = try TestAgent(app).signInWithPasskey(first, userHandle: handle)
        #expect(signedIn.status == 200)
        #expect(signedIn.json["redirect_to"] as? String == "/account")
        let (accepted, details) = try Self.signals(signedIn)
        #expect(accepted["rpId"] as? String == "localhost")
        #expect(accepted["userId"] as? String == Base64URL.encode(handle))
        #expect(
            Set(accepted["allAcceptedCredentialIds"] as? [String] ?? [])
                == [Base64URL.encode(first.credentialID), Base64URL.encode(second.credentialID)])
        #expect(details["rpId"] as? String == "localhost")
        #expect(details["userId"] as? String == Base64URL.encode(handle))
        #expect(details["name"] as? String == email)
        #expect(details["displayName"] as? String == "Test User")

        // Removed on the account page: the next sign-in's list no longer holds it.
        let list = try agent.send("GET", "/api/passkeys")
        let passkeys = try #require(list.json["passkeys"] as? [[String: Any]])
        let secondID = try #require(
            passkeys.first { $0["credential_id"] as? String == Base64URL.encode(second.credentialID) }?["id"]
                as? String)
        #expect(try agent.send("DELETE", "/api/passkeys/\(secondID)").status == 200)
        #expect(
            try agent.send("PATCH", "/api/account", json: ["display_name": "Ada Lovelace"]).status == 200)
        let again = try TestAgent(app).signInWithPasskey(first, userHandle: handle, signCount: 2)
        #expect(again.status == 200)
        let (acceptedAgain, detailsAgain) = try Self.signals(again)
        #expect(
            acceptedAgain["allAcceptedCredentialIds"] as? [String] == [Base64URL.encode(first.credentialID)])
        #expect(detailsAgain["displayName"] as? String == "Ada Lovelace")
    }

    @Test func aRefusedSignInAnswersNoSignals() throws {
        let app = try TestApplication()
        let (agent, handle) = try PasskeyFlowTests.signedIn(app)
        let authenticator = try SoftwareAuthenticator()
        #expect(try agent.registerPasskey(authenticator).status == 201)
        // Without user presence: refused, and nothing about the account in the answer.
        let refused = try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle, up: false)
        #expect(refused.error == "passkey_verification_failed")
        #expect(refused.json["signals"] == nil)
        #expect(refused.json["signal"] == nil)
        // Unknown credential: only what `signalUnknownCredential` takes.
        let unknown = try TestAgent(app).signInWithPasskey(try SoftwareAuthenticator(), userHandle: handle)
        #expect(unknown.status == 401)
        #expect(unknown.error == "unknown_credential")
        #expect(
            Set((unknown.json["signal"] as? [String: Any])?.keys.map { $0 } ?? []) == [
                "rpId", "credentialId",
            ])
        #expect(Set(unknown.json.keys) == ["error", "message", "signal"])
    }
}
