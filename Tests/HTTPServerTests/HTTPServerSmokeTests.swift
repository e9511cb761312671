import Testing
@testable import HTTPServer

@Test func HTTPServerModuleBuilds() { #expect(Bool(true)) }
