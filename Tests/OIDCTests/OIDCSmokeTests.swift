import Testing
@testable import OIDC

@Test func OIDCModuleBuilds() { #expect(Bool(true)) }
