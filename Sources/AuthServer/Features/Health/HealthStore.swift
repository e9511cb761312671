import Postgres

/// The database connection pool as the metrics report it.
struct ConnectionPoolState: Sendable, Equatable {
    var inUse: Int
    var idle: Int
    var max: Int
    /// Requests waiting for a connection now.
    var waiting: Int
    /// Checkouts so far that found no free connection and had to wait.
    var waits: Int
}

/// What `HealthFlow` asks of the database.
protocol HealthStore: Sendable {
    /// Whether the database answers (within a second).
    func isReady() -> Bool
    var connectionPool: ConnectionPoolState { get }
    /// The passkey-adoption gauges (see `AdoptionReport`); none when the database does not answer.
    func adoptionGauges() -> [AdoptionReport.Gauge]
}

struct PostgresHealthStore: HealthStore {
    let pool: PostgresPool

    func isReady() -> Bool { pool.ping() }

    var connectionPool: ConnectionPoolState {
        let stats = pool.statistics
        return ConnectionPoolState(
            inUse: stats.inUse, idle: stats.idle, max: stats.max, waiting: stats.waiting, waits: stats.waits)
    }

    func adoptionGauges() -> [AdoptionReport.Gauge] { (try? AdoptionReport.gauges(on: pool)) ?? [] }
}
