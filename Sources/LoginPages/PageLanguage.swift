import Foundation

/// The languages the pages speak.
public enum PageLanguage: String, Sendable, CaseIterable {
    case en, ja

    /// OpenID Connect `ui_locales` (space-separated BCP 47 tags, in order of preference) wins;
    /// then `Accept-Language` by quality; English otherwise.
    public static func negotiate(uiLocales: String?, acceptLanguage: String?) -> PageLanguage {
        if let uiLocales {
            for tag in uiLocales.split(separator: " ") {
                if let language = match(tag) { return language }
            }
        }
        if let acceptLanguage {
            var choices: [(tag: Substring, quality: Double, order: Int)] = []
            for (order, item) in acceptLanguage.split(separator: ",").enumerated() {
                let parts = item.split(separator: ";")
                guard let tag = parts.first?.trimmingCharacters(in: .whitespaces), !tag.isEmpty else {
                    continue
                }
                var quality = 1.0
                for parameter in parts.dropFirst() {
                    let trimmed = parameter.trimmingCharacters(in: .whitespaces)
                    if trimmed.hasPrefix("q="), let value = Double(trimmed.dropFirst(2)) { quality = value }
                }
                if quality > 0 { choices.append((Substring(tag), quality, order)) }
            }
            choices.sort { $0.quality != $1.quality ? $0.quality > $1.quality : $0.order < $1.order }
            for choice in choices {
                if let language = match(choice.tag) { return language }
            }
        }
        return .en
    }

    static func match(_ tag: Substring) -> PageLanguage? {
        let primary = tag.split(separator: "-").first.map { $0.lowercased() } ?? ""
        return PageLanguage(rawValue: primary)
    }
}
