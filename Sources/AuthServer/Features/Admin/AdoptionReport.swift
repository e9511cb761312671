import Foundation
import OIDC

/// How far the accounts have moved to passkeys: accounts by credential state (an account with
/// neither a password nor a passkey that signs in through a linked provider is
/// `providerOnly`), sign-ins by method (`provider`: Sign in with Apple or another OpenID
/// provider, on the web or by token exchange), conditional upgrades offered and taken, and
/// recoveries. Read from the accounts'
/// credentials and from `audit_events`, for `auth-server report adoption` and `/metrics`.
struct AdoptionReport: Sendable, Equatable {
    struct Window: Sendable, Equatable {
        var passwordSignIns = 0
        var passkeySignIns = 0
        var providerSignIns = 0
        var upgradesOffered = 0
        var upgradesSucceeded = 0
        var recoveries = 0
    }

    var passwordOnly = 0
    var passwordAndPasskey = 0
    var passkeyOnly = 0
    var providerOnly = 0
    var last7Days = Window()
    var last30Days = Window()

    typealias Gauge = (name: String, help: String, samples: [(labels: String, value: Double)])

    var gauges: [Gauge] {
        [
            (
                "auth_accounts", "Accounts by the credentials they have.",
                [
                    ("state=\"password_only\"", Double(passwordOnly)),
                    ("state=\"password_and_passkey\"", Double(passwordAndPasskey)),
                    ("state=\"passkey_only\"", Double(passkeyOnly)),
                    ("state=\"provider_only\"", Double(providerOnly)),
                ]
            ),
            (
                "auth_sign_ins_recent", "Successful sign-ins by method in the recent window.",
                [
                    ("method=\"password\",window=\"7d\"", Double(last7Days.passwordSignIns)),
                    ("method=\"passkey\",window=\"7d\"", Double(last7Days.passkeySignIns)),
                    ("method=\"provider\",window=\"7d\"", Double(last7Days.providerSignIns)),
                    ("method=\"password\",window=\"30d\"", Double(last30Days.passwordSignIns)),
                    ("method=\"passkey\",window=\"30d\"", Double(last30Days.passkeySignIns)),
                    ("method=\"provider\",window=\"30d\"", Double(last30Days.providerSignIns)),
                ]
            ),
            (
                "auth_passkey_upgrades_recent", "Conditional passkey upgrades offered and completed.",
                [
                    ("result=\"offered\",window=\"30d\"", Double(last30Days.upgradesOffered)),
                    ("result=\"succeeded\",window=\"30d\"", Double(last30Days.upgradesSucceeded)),
                ]
            ),
            (
                "auth_recoveries_recent", "Completed account recoveries in the recent window.",
                [("window=\"30d\"", Double(last30Days.recoveries))]
            ),
        ]
    }

    /// A JSON object with sorted keys (stable for scripts).
    var json: String {
        func window(_ w: Window) -> JSONValue {
            .object([
                "sign_ins": .object([
                    "password": .int(w.passwordSignIns), "passkey": .int(w.passkeySignIns),
                    "provider": .int(w.providerSignIns),
                ]),
                "passkey_upgrades": .object([
                    "offered": .int(w.upgradesOffered), "succeeded": .int(w.upgradesSucceeded),
                ]),
                "recoveries": .int(w.recoveries),
            ])
        }
        let object: JSONValue = .object([
            "accounts": .object([
                "password_only": .int(passwordOnly), "password_and_passkey": .int(passwordAndPasskey),
                "passkey_only": .int(passkeyOnly), "provider_only": .int(providerOnly),
            ]),
            "last_7_days": window(last7Days),
            "last_30_days": window(last30Days),
        ])
        return String(decoding: JSONBody.encodePretty(object), as: UTF8.self)
    }

    var text: String {
        func percent(_ part: Int, _ whole: Int) -> String {
            whole == 0 ? "-" : String(format: "%.0f%%", Double(part) * 100 / Double(whole))
        }
        let total = passwordOnly + passwordAndPasskey + passkeyOnly + providerOnly
        var lines = [
            "Accounts",
            "  password only          \(passwordOnly)",
            "  password + passkey     \(passwordAndPasskey)",
            "  passkey only           \(passkeyOnly)",
            "  provider only          \(providerOnly)",
            "  with a passkey         \(percent(passwordAndPasskey + passkeyOnly, total))",
        ]
        for (label, w) in [("last 7 days", last7Days), ("last 30 days", last30Days)] {
            let signIns = w.passwordSignIns + w.passkeySignIns + w.providerSignIns
            lines += [
                "",
                "Sign-ins, \(label)",
                "  password               \(w.passwordSignIns)",
                "  passkey                \(w.passkeySignIns) (\(percent(w.passkeySignIns, signIns)))",
                "  provider               \(w.providerSignIns)",
                "Conditional upgrades, \(label)",
                "  offered                \(w.upgradesOffered)",
                "  succeeded              \(w.upgradesSucceeded) (\(percent(w.upgradesSucceeded, w.upgradesOffered)))",
                "Recoveries, \(label)     \(w.recoveries)",
            ]
        }
        return lines.joined(separator: "\n")
    }
}
