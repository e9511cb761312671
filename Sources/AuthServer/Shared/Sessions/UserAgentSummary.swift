/// A short description of a browser from its User-Agent, for the session list.
enum UserAgentSummary {
    static func describe(_ userAgent: String) -> String {
        let browser: String =
            if userAgent.contains("Edg/") { "Edge" } else if userAgent.contains("Firefox/") {
                "Firefox"
            } else if userAgent.contains("Chrome/") || userAgent.contains("Chromium/") {
                "Chrome"
            } else if userAgent.contains("Safari/") { "Safari" } else if userAgent.isEmpty {
                "Unknown browser"
            } else { "App" }
        let system: String? =
            if userAgent.contains("iPhone") { "iPhone" } else if userAgent.contains("iPad") {
                "iPad"
            } else if userAgent.contains("Android") { "Android" } else if userAgent.contains("Mac OS X") {
                "macOS"
            } else if userAgent.contains("Windows") { "Windows" } else if userAgent.contains("Linux") {
                "Linux"
            } else { nil }
        return system.map { "\(browser) on \($0)" } ?? browser
    }
}
