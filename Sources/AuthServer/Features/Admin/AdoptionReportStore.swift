import Foundation
import Postgres

/// Reading the report: the accounts' credentials and the recent `audit_events`, three
/// statements on the executor it is given.
extension AdoptionReport {
    static func load(on db: some SQLExecutor) throws -> AdoptionReport {
        var report = AdoptionReport()
        if let row = try db.query(
            """
            SELECT count(*) FILTER (WHERE has_password AND NOT has_passkey) AS password_only,
                   count(*) FILTER (WHERE has_password AND has_passkey) AS password_and_passkey,
                   count(*) FILTER (WHERE NOT has_password AND has_passkey) AS passkey_only,
                   count(*) FILTER (WHERE NOT has_password AND NOT has_passkey AND has_identity) AS provider_only
            FROM (SELECT EXISTS (SELECT 1 FROM password_credentials p WHERE p.account_id = a.id) AS has_password,
                         EXISTS (SELECT 1 FROM passkey_credentials k WHERE k.account_id = a.id) AS has_passkey,
                         EXISTS (SELECT 1 FROM upstream_identities i WHERE i.account_id = a.id) AS has_identity
                  FROM accounts a) states
            """
        ).first {
            report.passwordOnly = try row.decode("password_only")
            report.passwordAndPasskey = try row.decode("password_and_passkey")
            report.passkeyOnly = try row.decode("passkey_only")
            report.providerOnly = try row.decode("provider_only")
        }
        for (days, keyPath) in [(7, \AdoptionReport.last7Days), (30, \AdoptionReport.last30Days)] {
            guard
                let row = try db.query(
                    """
                    SELECT count(*) FILTER (WHERE event = 'sign_in.succeeded' AND detail->>'method' = 'password') AS password,
                           count(*) FILTER (WHERE event = 'sign_in.succeeded' AND detail->>'method' = 'passkey') AS passkey,
                           count(*) FILTER (WHERE event = 'sign_in.succeeded' AND (detail->>'method' LIKE 'upstream:%'
                                            OR detail->>'method' = 'apple_token_exchange')) AS provider,
                           count(*) FILTER (WHERE event = 'passkey.upgrade_offered') AS offered,
                           count(*) FILTER (WHERE event = 'passkey.added' AND detail->>'ceremony' = 'conditional') AS upgraded,
                           count(*) FILTER (WHERE event = 'recovery.completed') AS recoveries
                    FROM audit_events
                    WHERE occurred_at > now() - make_interval(days => \(days)::int)
                      AND event IN ('sign_in.succeeded', 'passkey.upgrade_offered', 'passkey.added', 'recovery.completed')
                    """
                ).first
            else { continue }
            report[keyPath: keyPath] = Window(
                passwordSignIns: try row.decode("password"), passkeySignIns: try row.decode("passkey"),
                providerSignIns: try row.decode("provider"),
                upgradesOffered: try row.decode("offered"), upgradesSucceeded: try row.decode("upgraded"),
                recoveries: try row.decode("recoveries"))
        }
        return report
    }

    /// The figures as Prometheus gauges, for `Metrics.render(gauges:)`.
    static func gauges(on db: some SQLExecutor) throws -> [Gauge] {
        try load(on: db).gauges
    }
}
