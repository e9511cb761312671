import Foundation
import Postgres

/// The roles and groups an operator assigned to an account. Resource servers receive them as
/// claims of the access tokens issued for their API when the API's configuration asks for them.
struct AccountAttributes: Sendable, Equatable {
    enum Kind: String, Sendable, CaseIterable { case role, group }

    var roles: [String] = []
    var groups: [String] = []

    /// A role or group name: 1 to 100 characters of letters, digits and `. _ : / -`, starting
    /// with a letter or digit (the same rule as the table's CHECK).
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.unicodeScalars.count <= 100 else { return false }
        func plain(_ scalar: Unicode.Scalar) -> Bool {
            scalar.isASCII
                && (("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
                    || ("0"..."9").contains(scalar))
        }
        return plain(first)
            && name.unicodeScalars.allSatisfy { plain($0) || "._:/-".unicodeScalars.contains($0) }
    }
}

extension AccountStore {
    /// The account's roles and groups, each sorted by name.
    static func attributes(accountID: UUID, on db: some SQLExecutor) throws -> AccountAttributes {
        var attributes = AccountAttributes()
        for row in try db.query(
            "SELECT kind, name FROM account_attributes WHERE account_id = \(accountID) ORDER BY kind, name")
        {
            let name: String = try row.decode("name")
            switch AccountAttributes.Kind(rawValue: try row.decode("kind", as: String.self)) {
            case .role: attributes.roles.append(name)
            case .group: attributes.groups.append(name)
            case nil: continue
            }
        }
        return attributes
    }

    /// Assigns a role or group; true when the account did not hold it yet.
    @discardableResult
    static func addAttribute(
        _ kind: AccountAttributes.Kind, name: String, accountID: UUID, on db: some SQLExecutor
    ) throws -> Bool {
        try !db.query(
            """
            INSERT INTO account_attributes (account_id, kind, name) VALUES (\(accountID), \(kind.rawValue), \(name))
            ON CONFLICT DO NOTHING RETURNING name
            """
        ).isEmpty
    }

    /// Removes a role or group; true when the account held it.
    @discardableResult
    static func removeAttribute(
        _ kind: AccountAttributes.Kind, name: String, accountID: UUID, on db: some SQLExecutor
    ) throws -> Bool {
        try !db.query(
            """
            DELETE FROM account_attributes
            WHERE account_id = \(accountID) AND kind = \(kind.rawValue) AND name = \(name) RETURNING name
            """
        ).isEmpty
    }
}
