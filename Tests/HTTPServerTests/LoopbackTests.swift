import Testing

@testable import HTTPServer

@Suite struct LoopbackTests {
    @Test(arguments: [
        "127.0.0.1", "127.255.3.9", "::1", "[::1]", "localhost", "LocalHost", "::ffff:127.0.0.1",
    ])
    func loopbackHosts(host: String) {
        #expect(Loopback.isLoopbackHost(host))
    }

    @Test(arguments: [
        "127.evil.example", "localhost.evil.example", "10.0.0.1", "0.0.0.0", "::", "128.0.0.1", "::2", "",
        "[::1",
        "::ffff:10.0.0.1",
    ])
    func otherHosts(host: String) {
        #expect(!Loopback.isLoopbackHost(host))
    }

    @Test func peerAddressesAreNotNames() {
        #expect(Loopback.isLoopbackAddress("127.0.0.1"))
        #expect(!Loopback.isLoopbackAddress("localhost"))
    }

    @Test func urls() {
        #expect(Loopback.isLoopbackURL("http://localhost:8080"))
        #expect(Loopback.isLoopbackURL("http://127.0.0.1"))
        #expect(Loopback.isLoopbackURL("http://[::1]:8080"))
        #expect(!Loopback.isLoopbackURL("https://id.example.com"))
        #expect(!Loopback.isLoopbackURL("http://127.0.0.1.nip.io"))
        #expect(!Loopback.isLoopbackURL("not a url"))
    }

    @Test func aLocalRequestIsALoopbackPeerWithNoForwardingHeader() throws {
        func request(_ address: String, _ headers: [(String, String)] = []) throws -> HTTPRequest {
            var fields = HTTPFields()
            for (name, value) in headers { fields.append(name, value) }
            return HTTPRequest(method: .get, target: "/", headers: fields, remoteAddress: address)
        }
        #expect(Loopback.isLocal(try request("127.0.0.1")))
        #expect(Loopback.isLocal(try request("::1")))
        #expect(!Loopback.isLocal(try request("192.0.2.1")))
        for header in ["X-Forwarded-For", "Forwarded", "X-Real-IP"] {
            #expect(!Loopback.isLocal(try request("127.0.0.1", [(header, "192.0.2.1")])), "\(header)")
        }
    }
}
