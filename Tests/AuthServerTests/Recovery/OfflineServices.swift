import Foundation
import Postgres
import Testing

@testable import AuthServer

extension AccountServices {
    /// Services for a flow under test with an in-memory store: the default configuration, a
    /// pool that is never connected, a silent log, and `system` as the clock and random source.
    static func offline(system: TimeAndRandomness) throws -> AccountServices {
        let configuration = try #require(
            ConfigurationLoader.check(
                data: Data(#"{"issuer": "https://id.example.com", "clients": []}"#.utf8)
            )
            .configuration)
        return AccountServices(
            configuration: configuration, pool: PostgresPool(url: "postgres://127.0.0.1:1/unused"),
            log: Log(write: { _ in }), hasher: TestApplication.hasher, system: system)
    }
}
