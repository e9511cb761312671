import Crypto
import Foundation
import Testing
@testable import OIDC

/// The upstream authorization request's derived secrets, its URL, and the callback's checks
/// in their order.
@Suite struct UpstreamRequestTests {
    let secrets = UpstreamRequestSecrets(key: SymmetricKey(bytes: [UInt8](repeating: 7, count: 32)))
    let state = UpstreamRequestSecrets.state(randomBytes: [UInt8](repeating: 1, count: 32))
    let binding = "browser-binding-cookie-value"
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func stateIsFortyThreeBase64URLCharacters() {
        #expect(state.utf8.count == 43)
        #expect(UpstreamRequestSecrets.isWellFormed(state: state))
        #expect(!UpstreamRequestSecrets.isWellFormed(state: String(state.dropLast())))
        #expect(!UpstreamRequestSecrets.isWellFormed(state: String(state.dropLast()) + "="))
        #expect(!UpstreamRequestSecrets.isWellFormed(state: ""))
    }

    @Test func nonceAndVerifierAreDerivedAndDistinct() {
        let nonce = secrets.nonce(forState: state)
        let verifier = secrets.codeVerifier(forState: state)
        #expect(nonce == secrets.nonce(forState: state))
        #expect(nonce != verifier)
        #expect(verifier.utf8.count == 43)
        // Another key (another deployment) derives other values from the same state.
        let other = UpstreamRequestSecrets(key: SymmetricKey(bytes: [UInt8](repeating: 8, count: 32)))
        #expect(other.nonce(forState: state) != nonce)
        #expect(other.codeVerifier(forState: state) != verifier)
        // Another state, other values.
        let state2 = UpstreamRequestSecrets.state(randomBytes: [UInt8](repeating: 2, count: 32))
        #expect(secrets.nonce(forState: state2) != nonce)
    }

    /// RFC 7636 Appendix B's example.
    @Test func codeChallengeIsS256() {
        #expect(
            UpstreamRequestSecrets.codeChallenge(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
                == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test func authorizationURLKeepsTheEndpointsQueryAndAddsEveryParameter() throws {
        let url = UpstreamAuthorizationURL(
            endpoint: "https://upstream.example/authorize?tenant=a", clientID: "client 1",
            redirectURI: "https://idp.example/upstream/x/callback", scope: "openid email+x", state: state,
            nonce: "n", codeChallenge: "c", responseMode: "form_post"
        ).string
        let text = try #require(url)
        let components = try #require(URLComponents(string: text))
        let items = Dictionary(
            uniqueKeysWithValues: (components.queryItems ?? []).map { ($0.name, $0.value) })
        #expect(items["tenant"] == "a")
        #expect(items["response_type"] == "code")
        #expect(items["client_id"] == "client 1")
        #expect(items["scope"] == "openid email+x")
        #expect(items["state"] == state)
        #expect(items["code_challenge_method"] == "S256")
        #expect(items["response_mode"] == "form_post")
        #expect(components.percentEncodedQuery?.contains("email%2Bx") == true)
    }

    @Test(arguments: ["", "upstream.example/authorize", "ftp://upstream.example/a", "https://u.example/a#f"])
    func authorizationURLRefusesAnEndpointThatIsNotAnAbsoluteURL(_ endpoint: String) {
        #expect(
            UpstreamAuthorizationURL(
                endpoint: endpoint, clientID: "c", redirectURI: "r", scope: "openid", state: state,
                nonce: "n",
                codeChallenge: "c"
            ).string == nil)
    }

    private func stored(provider: String = "corp", expiresIn: TimeInterval = 300) -> UpstreamCallback.Stored {
        UpstreamCallback.Stored(
            provider: provider, bindingDigest: UpstreamRequestSecrets.digest(binding),
            expiresAt: now.addingTimeInterval(expiresIn))
    }

    private func check(
        state: String?, code: String? = "code-1", error: String? = nil, cookie: String?,
        stored: UpstreamCallback.Stored?, provider: String = "corp"
    ) throws(UpstreamCallbackError) -> String {
        try UpstreamCallback.check(
            state: state, code: code, error: error, bindingCookie: cookie, stored: stored, provider: provider,
            now: now)
    }

    @Test func aGoodAnswerGivesTheCode() throws {
        #expect(try check(state: state, cookie: binding, stored: stored()) == "code-1")
    }

    @Test func refusalsInOrder() {
        #expect(throws: UpstreamCallbackError.malformedState) {
            try check(state: nil, cookie: binding, stored: stored())
        }
        #expect(throws: UpstreamCallbackError.malformedState) {
            try check(state: "short", cookie: binding, stored: stored())
        }
        // Unknown or already used: the store found nothing.
        #expect(throws: UpstreamCallbackError.unknownState) {
            try check(state: state, cookie: binding, stored: nil)
        }
        #expect(throws: UpstreamCallbackError.unknownState) {
            try check(state: state, cookie: binding, stored: stored(expiresIn: -1))
        }
        #expect(throws: UpstreamCallbackError.wrongProvider) {
            try check(state: state, cookie: binding, stored: stored(provider: "apple"))
        }
        // Another browser: no cookie, or its own.
        #expect(throws: UpstreamCallbackError.otherBrowser) {
            try check(state: state, cookie: nil, stored: stored())
        }
        #expect(throws: UpstreamCallbackError.otherBrowser) {
            try check(state: state, cookie: "attacker-binding", stored: stored())
        }
        // The provider's error only after the state proved the answer belongs here.
        #expect(throws: UpstreamCallbackError.upstreamError("access_denied")) {
            try check(state: state, code: nil, error: "access_denied", cookie: binding, stored: stored())
        }
        #expect(throws: UpstreamCallbackError.otherBrowser) {
            try check(state: state, code: nil, error: "access_denied", cookie: nil, stored: stored())
        }
        #expect(throws: UpstreamCallbackError.missingCode) {
            try check(state: state, code: "", cookie: binding, stored: stored())
        }
    }

    @Test func appleUserJSONGivesTheNameOnly() {
        let user = AppleUserInfo(
            json:
                #"{"name":{"firstName":" Ada ","lastName":"Lovelace"},"email":"x@privaterelay.appleid.com"}"#)
        #expect(user == AppleUserInfo(firstName: "Ada", lastName: "Lovelace"))
        #expect(user?.displayName == "Ada Lovelace")
        #expect(AppleUserInfo(json: nil) == nil)
        #expect(AppleUserInfo(json: "not json") == nil)
        #expect(AppleUserInfo(json: #"{"email":"a@b.c"}"#) == nil)
        #expect(AppleUserInfo(json: #"{"name":{"firstName":""}}"#) == nil)
    }
}
