import Foundation
import Testing

@testable import AuthServer

/// The addresses a client's `jwks_uri` may lead the server to: public unicast only; loopback
/// only behind the test setting.
@Suite struct OutgoingAddressPolicyTests {
    static func v6(_ text: String) -> [UInt8] {
        var raw = [UInt8](repeating: 0, count: 16)
        _ = inet_pton(AF_INET6, text, &raw)
        return raw
    }

    @Test(
        arguments: [
            [10, 1, 2, 3], [127, 0, 0, 1], [169, 254, 169, 254], [172, 16, 0, 1], [172, 31, 255, 255],
            [192, 168, 1, 1], [100, 64, 0, 1], [0, 0, 0, 0], [224, 0, 0, 1], [255, 255, 255, 255],
            [192, 0, 2, 1],
        ] as [[UInt8]])
    func privateAndSpecialIPv4AddressesAreRefused(_ address: [UInt8]) {
        #expect(!OutgoingAddressPolicy.isAllowed(address, allowLoopback: false))
    }

    @Test(arguments: [
        "::1", "::", "fc00::1", "fd12:3456::1", "fe80::1", "ff02::1", "::ffff:10.0.0.1",
        "::ffff:127.0.0.1", "64:ff9b::a9fe:a9fe", "2001:db8::1",
    ])
    func privateAndSpecialIPv6AddressesAreRefused(_ text: String) {
        #expect(!OutgoingAddressPolicy.isAllowed(Self.v6(text), allowLoopback: false))
    }

    @Test func publicAddressesAreAllowed() {
        #expect(OutgoingAddressPolicy.isAllowed([93, 184, 216, 34], allowLoopback: false))
        #expect(OutgoingAddressPolicy.isAllowed([172, 32, 0, 1], allowLoopback: false))
        #expect(OutgoingAddressPolicy.isAllowed(Self.v6("2606:2800:220:1::1"), allowLoopback: false))
        #expect(OutgoingAddressPolicy.isAllowed(Self.v6("::ffff:93.184.216.34"), allowLoopback: false))
    }

    @Test func theTestSettingAllowsLoopbackOnly() {
        #expect(OutgoingAddressPolicy.isAllowed([127, 0, 0, 1], allowLoopback: true))
        #expect(OutgoingAddressPolicy.isAllowed(Self.v6("::1"), allowLoopback: true))
        #expect(!OutgoingAddressPolicy.isAllowed([10, 0, 0, 1], allowLoopback: true))
        #expect(!OutgoingAddressPolicy.isAllowed([169, 254, 169, 254], allowLoopback: true))
    }

    @Test func onlyHTTPSIsFetched() {
        #expect(throws: OutgoingFetchError.notHTTPS) { try OutgoingFetch().get("http://example.com/jwks") }
        #expect(throws: OutgoingFetchError.forbiddenAddress("127.0.0.1")) {
            try OutgoingFetch().get("https://127.0.0.1:9/jwks")
        }
    }
}
