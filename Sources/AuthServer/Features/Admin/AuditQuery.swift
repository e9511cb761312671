import Foundation
import OIDC

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

    /// The `detail` column's JSON object; members that are not strings are left out.
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
