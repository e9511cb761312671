import Testing

@testable import HTTPServer

@Suite struct ForwardedForTests {
    let proxies = ForwardedFor(trustedProxies: ["127.0.0.1", "10.0.0.0/8", "fd00::/8"].compactMap(AddressRange.init))

    @Test func addressRangesMatchTheirFamilyAndPrefix() throws {
        let block = try #require(AddressRange("10.1.0.0/16"))
        #expect(block.contains("10.1.200.3"))
        #expect(!block.contains("10.2.0.1"))
        #expect(!block.contains("::ffff:10.2.0.1"))
        #expect(block.contains("::ffff:10.1.0.1"))  // the IPv4-mapped form is the same address
        let single = try #require(AddressRange("::1"))
        #expect(single.contains("::1"))
        #expect(single.contains("0:0:0:0:0:0:0:1"))
        #expect(!single.contains("::2"))
        #expect(try #require(AddressRange("0.0.0.0/0")).contains("198.51.100.1"))
        for bad in ["", "10.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0.0/+8", "example.com", "10.0.0", "10.0.0.0/"] {
            #expect(AddressRange(bad) == nil, "\(bad)")
        }
        #expect(!block.contains("not an address"))
    }

    @Test func theRightmostUntrustedHopIsTheClient() {
        #expect(proxies.clientAddress(peer: "127.0.0.1", header: ["203.0.113.7"]) == "203.0.113.7")
        // Whatever the client wrote itself stays on the left and is not believed.
        #expect(proxies.clientAddress(peer: "127.0.0.1", header: ["1.2.3.4, 203.0.113.7"]) == "203.0.113.7")
        #expect(proxies.clientAddress(peer: "127.0.0.1", header: ["1.2.3.4", "203.0.113.7, 10.0.0.5"]) == "203.0.113.7")
        #expect(proxies.clientAddress(peer: "127.0.0.1", header: ["2001:db8::1"]) == "2001:db8::1")
        #expect(proxies.clientAddress(peer: "127.0.0.1", header: ["10.0.0.9, 10.0.0.5"]) == "10.0.0.9")
        // A malformed hop ends the trust: the peer itself is all that is known.
        #expect(proxies.clientAddress(peer: "127.0.0.1", header: ["203.0.113.7, evil"]) == "127.0.0.1")
        #expect(proxies.clientAddress(peer: "127.0.0.1", header: []) == "127.0.0.1")
    }

    @Test func onlyATrustedPeerIsRewritten() throws {
        let router = Router()
        router.use(proxies)
        router.get("/who") { request, _ in HTTPResponse(status: .ok, body: Array(request.remoteAddress.utf8)) }
        func who(peer: String, forwarded: String?) throws -> String {
            var headers: HTTPFields = [:]
            if let forwarded { headers.append("X-Forwarded-For", forwarded) }
            let request = HTTPRequest(method: .get, target: "/who", headers: headers, body: [], remoteAddress: peer)
            var context = RequestContext()
            return String(decoding: try router.respond(to: request, context: &context).body, as: UTF8.self)
        }
        #expect(try who(peer: "127.0.0.1", forwarded: "203.0.113.7") == "203.0.113.7")
        #expect(try who(peer: "198.51.100.9", forwarded: "203.0.113.7") == "198.51.100.9")
        #expect(try who(peer: "127.0.0.1", forwarded: nil) == "127.0.0.1")
        let untrusting = Router()
        untrusting.use(ForwardedFor(trustedProxies: []))
        untrusting.get("/who") { request, _ in HTTPResponse(status: .ok, body: Array(request.remoteAddress.utf8)) }
        let request = HTTPRequest(
            method: .get, target: "/who", headers: ["X-Forwarded-For": "203.0.113.7"], body: [], remoteAddress: "127.0.0.1")
        var context = RequestContext()
        #expect(String(decoding: try untrusting.respond(to: request, context: &context).body, as: UTF8.self) == "127.0.0.1")
    }
}
