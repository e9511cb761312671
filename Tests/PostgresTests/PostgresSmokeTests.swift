import Testing
@testable import Postgres

@Test func PostgresModuleBuilds() { #expect(Bool(true)) }
