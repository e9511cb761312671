import Foundation
import Postgres

/// The few reads of token exchange that are not the shared token or identity SQL.
enum TokenExchangeStore {
    /// The transaction's time, which the issued tokens and the link's `last_used_at` share.
    static func now(on db: some SQLExecutor) throws -> Date {
        guard let now: Date = try db.query("SELECT now() AS now").first?.decode("now") else {
            throw PostgresError(kind: .decoding, detail: "now() returned no row")
        }
        return now
    }

    /// Whether an operator disabled the account (a linked identity then signs in no more). Read
    /// after `UpstreamAccounts.decide` share-locked the row: a disable under way was waited for
    /// and is seen, and one that comes later waits and then revokes what was issued.
    static func accountDisabled(_ accountID: UUID, on db: some SQLExecutor) throws -> Bool {
        try db.query("SELECT disabled_at IS NOT NULL AS disabled FROM accounts WHERE id = \(accountID)")
            .first?.decode("disabled") ?? true
    }
}
