import Testing
@testable import WebAuthnCore

@Test func WebAuthnCoreModuleBuilds() { #expect(Bool(true)) }
