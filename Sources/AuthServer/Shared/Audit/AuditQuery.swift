import Foundation
import OIDC
import Postgres

/// One stored security event, as `auth-server audit` and `users show` print it.
struct AuditRecord: Sendable, Equatable {
    var id: Int64
    var occurredAt: Date
    var event: String
    var actor: String
    var accountID: UUID?
    var clientID: String?
    var clientAddress: String
    var detail: [String: String]
}

/// A filter over `audit_events`, newest first.
struct AuditQuery: Sendable, Equatable {
    var since: Date?
    var until: Date?
    var accountID: UUID?
    var event: String?
    var limit = 100

    static func run(_ query: AuditQuery, on db: some SQLExecutor) throws -> [AuditRecord] {
        try db.query(
            """
            SELECT id, occurred_at, event, actor, account_id, client_id, client_address, detail::text AS detail
            FROM audit_events
            WHERE (\(query.since)::timestamptz IS NULL OR occurred_at >= \(query.since))
              AND (\(query.until)::timestamptz IS NULL OR occurred_at <= \(query.until))
              AND (\(query.accountID)::uuid IS NULL OR account_id = \(query.accountID))
              AND (\(query.event)::text IS NULL OR event = \(query.event))
            ORDER BY occurred_at DESC, id DESC
            LIMIT \(query.limit)
            """
        ).map { row in
            AuditRecord(
                id: try row.decode("id"), occurredAt: try row.decode("occurred_at"),
                event: try row.decode("event"),
                actor: try row.decode("actor"), accountID: try row.decode("account_id"),
                clientID: try row.decode("client_id"), clientAddress: try row.decode("client_address"),
                detail: decodeDetail(try row.decode("detail")))
        }
    }

    static func decodeDetail(_ text: String) -> [String: String] {
        guard case .object(let members)? = try? JSONValue.parse(Data(text.utf8)) else { return [:] }
        return members.compactMapValues(\.stringValue)
    }

    /// `--since`/`--until`: an ISO 8601 instant (`2026-05-01T12:00:00Z`, with an offset or
    /// fractional seconds, or a date alone, meaning midnight UTC), or a duration back from
    /// `now` (`30m`, `24h`, `7d`, `90s`).
    static func parseWhen(_ text: String, now: Date) -> Date? {
        if let last = text.last, let unit = ["s": 1.0, "m": 60, "h": 3_600, "d": 86_400][String(last)],
            let amount = Int(text.dropLast()), amount >= 0, amount <= 100_000
        {
            return now.addingTimeInterval(-Double(amount) * unit)
        }
        let full = ISO8601DateFormatter()
        if let date = full.date(from: text) { return date }
        full.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = full.date(from: text) { return date }
        full.formatOptions = [.withFullDate]
        return full.date(from: text)
    }

    /// One line: time, event, actor, account, client, address, detail (`key=value`, sorted).
    static func line(_ record: AuditRecord) -> String {
        let detail = record.detail.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            .joined(separator: " ")
        return [
            iso8601(record.occurredAt), record.event, record.actor,
            record.accountID?.lowercased ?? "-", record.clientID ?? "-",
            record.clientAddress.isEmpty ? "-" : record.clientAddress, detail.isEmpty ? "-" : detail,
        ].joined(separator: "  ")
    }

    static func json(_ record: AuditRecord) -> [String: JSONValue] {
        [
            "id": .int(Int(record.id)), "occurred_at": .string(iso8601(record.occurredAt)),
            "event": .string(record.event), "actor": .string(record.actor),
            "client_address": .string(record.clientAddress),
            "detail": .object(record.detail.mapValues(JSONValue.string)),
            "account_id": record.accountID.map { .string($0.lowercased) } ?? .null,
            "client_id": record.clientID.map(JSONValue.string) ?? .null,
        ]
    }
}
