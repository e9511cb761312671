import Foundation

/// Names of well-known passkey providers by AAGUID, after the community list at
/// https://github.com/passkeydeveloper/passkey-authenticator-aaguids. Unknown or all-zero
/// AAGUIDs have no name: the page then shows only the passkey's own name.
enum PasskeyProviders {
    static let names: [String: String] = [
        "fbfc3007-154e-4ecc-8c0b-6e020557d7bd": "iCloud Keychain",
        "dd4ec289-e01d-41c9-bb89-70fa845d4bf2": "iCloud Keychain (Managed)",
        "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4": "Google Password Manager",
        "adce0002-35bc-c60a-648b-0b25f1f05503": "Chrome on Mac",
        "bada5566-a7aa-401f-bd96-45619a55120d": "1Password",
        "08987058-cadc-4b81-b6e1-30de50dcbe96": "Windows Hello",
        "9ddd1817-af5a-4672-a2b9-3e3dd95000a9": "Windows Hello",
        "6028b017-b1d4-4c02-b4b3-afcdafc96bb2": "Windows Hello",
        "d548826e-79b4-db40-a3d8-11116f7e8349": "Bitwarden",
        "531126d6-e717-415c-9320-3d9aa6981239": "Dashlane",
        "53414d53-554e-4700-0000-000000000000": "Samsung Pass",
        "b84e4048-15dc-4dd0-8640-f4f60813c8af": "NordPass",
        "0ea242b4-43c4-4a1b-8b17-dd6d0b6baec6": "Keeper",
        "f3809540-7f14-49c1-a8b3-8f813b225541": "Enpass",
        "cb69481e-8ff7-4039-93ec-0a2729a154a8": "YubiKey 5 Series",
        "ee882879-721c-4913-9775-3dfcce97072a": "YubiKey 5 Series",
    ]

    static func name(forAAGUID aaguid: [UInt8]) -> String? {
        guard aaguid.count == 16 else { return nil }
        return names[uuidString(aaguid)]
    }

    static func uuidString(_ bytes: [UInt8]) -> String {
        let hex = bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        let parts = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range -> String in
            let start = hex.index(hex.startIndex, offsetBy: range.lowerBound)
            let end = hex.index(hex.startIndex, offsetBy: range.upperBound)
            return String(hex[start..<end])
        }
        return parts.joined(separator: "-")
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
