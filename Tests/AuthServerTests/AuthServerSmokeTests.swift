import Testing
@testable import AuthServer

@Test func AuthServerModuleBuilds() { #expect(Bool(true)) }
