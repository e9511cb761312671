/// Creating accounts: how many sign-ups one address, and one client address, may make per window.
struct SignUpSettings: Sendable, Equatable {
    var maxPerEmail = 5
    var maxPerClient = 100
    var windowSeconds = 3_600
}

/// Reads `sign_up`: the limits on creating accounts.
enum SignUpConfigurationReader {
    static func read(_ root: ObjectReader, sink: ProblemSink) -> SignUpSettings {
        var settings = SignUpSettings()
        guard let value = root.value("sign_up"),
            let reader = ObjectReader(value, path: root.memberPath("sign_up"), sink: sink)
        else { return settings }
        settings.maxPerEmail = reader.integer("max_per_email", in: 1...1_000) ?? settings.maxPerEmail
        settings.maxPerClient = reader.integer("max_per_client", in: 1...100_000) ?? settings.maxPerClient
        settings.windowSeconds = reader.integer("window_seconds", in: 10...86_400) ?? settings.windowSeconds
        reader.reportUnknownMembers()
        return settings
    }
}
