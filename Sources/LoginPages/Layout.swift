import Foundation

/// The frame every page shares: language, stylesheet, one module script, the CSRF token in a
/// meta element (pages never use inline script or style, so the CSP stays strict).
struct Layout {
    var language: PageLanguage
    var title: String
    var siteName: String
    var csrfToken: String?
    var script: String?
    var bodyAttributes: [(String, String)] = []
    /// The current path and query without `ui_locales`, for the language links.
    var languageLinkBase: String?

    func render(_ content: [HTMLNode]) -> String {
        let strings = Strings(language)
        var head: [HTMLNode] = [
            H.el("meta", ["charset": "utf-8"]),
            H.el("meta", ["name": "viewport", "content": "width=device-width, initial-scale=1"]),
            H.el("meta", ["name": "color-scheme", "content": "light dark"]),
            H.el("title", [:], [.text("\(title) · \(siteName)")]),
            H.el("link", ["rel": "stylesheet", "href": "/static/css/app.css"]),
        ]
        if let csrfToken { head.append(H.el("meta", ["name": "csrf-token", "content": csrfToken])) }
        if let script { head.append(H.el("script", ["type": "module", "src": "/static/js/\(script)"])) }
        var languageLinks: [HTMLNode] = []
        if let base = languageLinkBase {
            let separator = base.contains("?") ? "&" : "?"
            for option in PageLanguage.allCases {
                let label = option == .en ? "English" : "日本語"
                if option == language {
                    languageLinks.append(
                        H.el("span", ["aria-current": "true", "lang": option.rawValue], [.text(label)]))
                } else {
                    languageLinks.append(
                        H.el(
                            "a",
                            [
                                "href": "\(base)\(separator)ui_locales=\(option.rawValue)",
                                "lang": option.rawValue, "hreflang": option.rawValue,
                            ],
                            [.text(label)]))
                }
            }
        }
        let body = HTMLNode(
            kind: .element(
                name: "body",
                attributes: bodyAttributes.map { HTMLNode.Attribute(name: $0.0, value: $0.1) },
                children: [
                    // The banner landmark: without it the site's name sits outside every landmark.
                    H.el(
                        "header", ["class": "brand"],
                        [H.el("span", ["class": "brand-mark", "aria-hidden": "true"], []), .text(siteName)]),
                    H.el("main", ["class": "card", "id": "main"], content),
                    H.el(
                        "footer", ["class": "site-footer"],
                        [
                            H.el("nav", ["aria-label": strings[.language]], languageLinks)
                        ]),
                ]))
        let html = H.el("html", ["lang": language.rawValue], [H.el("head", [:], head), body])
        return "<!doctype html>\n" + html.render() + "\n"
    }
}

/// Dates as the pages show them: day and minute in UTC, with the machine-readable value in
/// `<time datetime>` so the page script may show local time.
enum DateText {
    static func node(_ date: Date, _ language: PageLanguage) -> HTMLNode {
        H.el("time", ["datetime": iso(date)], [.text(format(date, language))])
    }

    static func format(_ date: Date, _ language: PageLanguage) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        let y = c.year ?? 0, mo = c.month ?? 0, d = c.day ?? 0, h = c.hour ?? 0, mi = c.minute ?? 0
        let time = String(format: "%02d:%02d", h, mi)
        switch language {
        case .en:
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            return "\(months[max(0, min(11, mo - 1))]) \(d), \(y) \(time) UTC"
        case .ja:
            return "\(y)年\(mo)月\(d)日 \(time) UTC"
        }
    }

    static func iso(_ date: Date) -> String {
        date.formatted(
            .iso8601.year().month().day().time(includingFractionalSeconds: false).timeZone(
                separator: .omitted))
    }
}
