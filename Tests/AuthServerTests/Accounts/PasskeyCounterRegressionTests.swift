import Foundation
import Testing

@testable import AuthServer
@testable import WebAuthnTestSupport

/// A copy of a passkey's private key (a cloned authenticator) signs with its own counter,
/// which falls behind the original's: the server must notice, never forget the highest
/// counter it saw, and apply `passkeys.on_counter_regression`.
@Suite struct PasskeyCounterRegressionTests {
    static func registered(_ app: TestApplication) throws -> (SoftwareAuthenticator, [UInt8], UUID) {
        let email = TestAgent.uniqueEmail()
        let (agent, handle) = try PasskeyFlowTests.signedIn(app, email: email)
        let authenticator = try SoftwareAuthenticator()
        #expect(try agent.registerPasskey(authenticator).status == 201)
        return (authenticator, handle, try app.accountID(email: email))
    }

    static func storedCount(_ app: TestApplication, _ accountID: UUID) throws -> Int {
        try #require(
            try app.sql("SELECT sign_count FROM passkey_credentials WHERE account_id = \(accountID)").first
        )
        .decode("sign_count")
    }

    @Test func aClonedPasskeyNeverLowersTheStoredCounterAndIsReported() throws {
        let app = try TestApplication()
        let (authenticator, handle, accountID) = try Self.registered(app)
        #expect(
            try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle, signCount: 10).status
                == 200)
        #expect(try Self.storedCount(app, accountID) == 10)

        // The clone's counter is behind: with the default policy (warn) it signs in, but the
        // stored maximum stays and the event is recorded.
        let clone = try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle, signCount: 3)
        #expect(clone.status == 200)
        #expect(try Self.storedCount(app, accountID) == 10)
        let events = try Recovery.auditEvents(app, accountID: accountID)
        let event = try #require(events.first { $0.0 == "passkey.counter_regression" })
        #expect(event.1["stored"] == "10")
        #expect(event.1["received"] == "3")
        #expect(event.1["action"] == "warned")
        let metrics = try TestAgent(app).send("GET", "/metrics").text
        #expect(metrics.contains(#"auth_passkey_counter_regressions_total{action="warned"} 1"#))
        #expect(app.logBuffer.text.contains("reason=possibleClone"))

        // The original keeps counting from where it was.
        #expect(
            try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle, signCount: 11).status
                == 200)
        #expect(try Self.storedCount(app, accountID) == 11)
    }
}

@Suite struct PasskeyCounterPolicyTests {
    @Test func aClonedPasskeyIsRefusedWhenThePolicyIsRefuse() throws {
        let app = try TestApplication { $0.passkeys.onCounterRegression = .refuse }
        let (authenticator, handle, accountID) = try PasskeyCounterRegressionTests.registered(app)
        #expect(
            try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle, signCount: 10).status
                == 200)
        let sessionsBefore = try app.count(
            "SELECT count(*) FROM authentication_sessions WHERE account_id = \(accountID)")

        let clone = TestAgent(app)
        let reply = try clone.signInWithPasskey(authenticator, userHandle: handle, signCount: 10)
        #expect(reply.status == 400)
        #expect(reply.error == "passkey_verification_failed")
        #expect(reply.setCookies.allSatisfy { !$0.hasPrefix("session=") })
        #expect(try clone.send("GET", "/api/account").status == 401)
        #expect(
            try app.count("SELECT count(*) FROM authentication_sessions WHERE account_id = \(accountID)")
                == sessionsBefore)
        #expect(try PasskeyCounterRegressionTests.storedCount(app, accountID) == 10)
        let events = try Recovery.auditEvents(app, accountID: accountID)
        #expect(events.contains { $0.0 == "passkey.counter_regression" && $0.1["action"] == "refused" })
        #expect(events.contains { $0.0 == "sign_in.failed" && $0.1["reason"] == "counter_regression" })
        let metrics = try TestAgent(app).send("GET", "/metrics").text
        #expect(metrics.contains(#"auth_passkey_counter_regressions_total{action="refused"} 1"#))

        // The authenticator whose counter moves on still signs in.
        #expect(
            try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle, signCount: 11).status
                == 200)
    }

    @Test func authenticatorsWithoutACounterAreNotRegressions() throws {
        // Counters of 0 on both sides mean "no counter" (synced passkeys): never a clone signal.
        let app = try TestApplication { $0.passkeys.onCounterRegression = .refuse }
        let (authenticator, handle, _) = try PasskeyCounterRegressionTests.registered(app)
        for _ in 0..<2 {
            #expect(
                try TestAgent(app).signInWithPasskey(authenticator, userHandle: handle, signCount: 0).status
                    == 200)
        }
    }

    @Test func thePolicyIsReadAndValidated() throws {
        func check(_ value: String) -> ConfigurationLoader.Result {
            ConfigurationLoader.check(
                data: Data(
                    #"{"issuer": "https://id.example.com", "clients": [], "passkeys": {"on_counter_regression": "\#(value)"}}"#
                        .utf8))
        }
        #expect(check("refuse").configuration?.passkeys.onCounterRegression == .refuse)
        #expect(check("warn").configuration?.passkeys.onCounterRegression == .warn)
        #expect(
            ConfigurationLoader.check(
                data: Data(#"{"issuer": "https://id.example.com", "clients": []}"#.utf8)
            )
            .configuration?.passkeys.onCounterRegression == .warn)
        #expect(
            check("block").problems.map(\.description) == [
                #"error: $.passkeys.on_counter_regression: must be "warn" or "refuse", found "block""#
            ])
    }

    @Test(arguments: [(Configuration.CounterRegressionPolicy.warn, true), (.refuse, false)])
    func policyDecision(policy: Configuration.CounterRegressionPolicy, allowsClone: Bool) {
        #expect(policy.allowsSignIn(afterCounterRegression: false))
        #expect(policy.allowsSignIn(afterCounterRegression: true) == allowsClone)
    }
}
