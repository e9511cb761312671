import Testing
@testable import LoginPages

@Test func loginPagesModuleBuilds() { #expect(Bool(true)) }
