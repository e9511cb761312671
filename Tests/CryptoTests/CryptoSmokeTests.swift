import Testing
@testable import Crypto

@Test func CryptoModuleBuilds() { #expect(Bool(true)) }
