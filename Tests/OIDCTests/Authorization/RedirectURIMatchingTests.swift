import Testing
@testable import OIDC

@Suite struct RedirectURIMatchingTests {
    // Web client registered: https://app.example.com/callback, https://app.example.com/cb?tenant=a
    @Test(arguments: [
        ("https://app.example.com/callback", true),
        ("https://app.example.com/cb?tenant=a", true),
        ("https://app.example.com/callback/", false),  // trailing slash
        ("https://APP.example.com/callback", false),  // host case
        ("HTTPS://app.example.com/callback", false),  // scheme case
        ("https://app.example.com/Callback", false),  // path case
        ("https://app.example.com/callbackx", false),  // prefix
        ("https://app.example.com/call", false),  // prefix of registered
        ("https://app.example.com/callback/../callback", false),  // path traversal
        ("https://app.example.com/x/../callback", false),
        ("https://user@app.example.com/callback", false),  // userinfo
        ("https://app.example.com@evil.example/callback", false),
        ("https://app.example.com/%63allback", false),  // encoded chars
        ("https://app.example.com/callback#frag", false),  // fragment
        ("https://app.example.com/callback?", false),
        ("https://app.example.com:443/callback", false),  // default port spelled out
        ("https://app.example.com/cb?tenant=b", false),  // different query
        ("https://app.example.com/cb", false),
        ("http://127.0.0.1:5000/callback", false),  // loopback rule is for native clients only
    ])
    func webClient(uri: String, matches: Bool) {
        #expect(RedirectURIMatching.matches(uri, client: Fixture.web) == matches)
    }

    // Native client registered: com.example.app:/oauth2redirect, https://app.example.com/native-callback,
    // http://127.0.0.1/callback, http://[::1]:8080/cb?x=1
    @Test(arguments: [
        ("com.example.app:/oauth2redirect", true),  // private-use scheme, exact
        ("com.example.app:/oauth2redirect/", false),
        ("com.example.App:/oauth2redirect", false),
        ("com.example.app:/oauth2redirect#x", false),
        ("com.evil.app:/oauth2redirect", false),
        ("https://app.example.com/native-callback", true),  // claimed https
        ("http://127.0.0.1/callback", true),
        ("http://127.0.0.1:51004/callback", true),  // any port
        ("http://127.0.0.1:1/callback", true),
        ("http://127.0.0.1:65535/callback", true),
        ("http://127.0.0.1:65536/callback", false),  // not a port
        ("http://127.0.0.1:/callback", false),
        ("http://127.0.0.1:80abc/callback", false),
        ("http://127.0.0.1:51004/other", false),  // different path
        ("http://127.0.0.1:51004/callback/", false),
        ("http://127.0.0.1:51004/callback?x=1", false),  // different query
        ("http://127.0.0.1:51004", false),
        ("http://127.0.0.1:51004@evil.example/callback", false),  // userinfo trick
        ("http://127.0.0.1.evil.example/callback", false),
        ("http://localhost:51004/callback", false),  // localhost refused
        ("http://localhost/callback", false),
        ("https://127.0.0.1:51004/callback", false),  // scheme must match
        ("http://[::1]:9999/cb?x=1", true),  // IPv6 loopback, any port, query exact
        ("http://[::1]/cb?x=1", true),
        ("http://[::1]:9999/cb?x=2", false),
        ("http://[::1]:9999/cb", false),
        ("http://127.0.0.1:9999/cb?x=1", false),  // host must match the registered loopback
    ])
    func nativeClient(uri: String, matches: Bool) {
        #expect(RedirectURIMatching.matches(uri, client: Fixture.native) == matches)
    }
}
