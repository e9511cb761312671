import Foundation
import HTTPServer
import SMTP

/// Reads `mail` and `email_verification`. The SMTP password never sits in the JSON: it comes
/// from `password_file` or from `AUTH_SERVER_SMTP_PASSWORD`.
enum MailConfigurationReader {
    static let smtpPasswordVariable = "AUTH_SERVER_SMTP_PASSWORD"

    static func readMail(_ root: ObjectReader, environment: [String: String], sink: ProblemSink)
        -> MailSettings
    {
        var mail = MailSettings()
        guard let value = root.value("mail"),
            let reader = ObjectReader(value, path: root.memberPath("mail"), sink: sink)
        else { return mail }
        if let transport = reader.string("transport") {
            if let parsed = MailSettings.Transport(rawValue: transport) {
                mail.transport = parsed
            } else {
                reader.error("transport", "must be \"development\" or \"smtp\", found \"\(transport)\"")
            }
        }
        if let from = reader.string("from") {
            if MailAddress.parse(from) != nil {
                mail.from = from
            } else {
                reader.error("from", "must be an address like \"Example <no-reply@example.com>\"")
            }
        }
        if let smtp = reader.value("smtp"),
            let smtpReader = ObjectReader(smtp, path: reader.memberPath("smtp"), sink: sink)
        {
            mail.smtp = readSMTP(smtpReader, environment: environment)
            smtpReader.reportUnknownMembers()
        }
        if mail.transport == .smtp, mail.smtp == nil, !reader.has("smtp") {
            reader.error("smtp", "is required when transport is \"smtp\"")
        }
        reader.reportUnknownMembers()
        return mail
    }

    private static func readSMTP(_ reader: ObjectReader, environment: [String: String]) -> SMTPSettings? {
        let host = reader.string("host", required: true)
        var settings = SMTPSettings(host: host ?? "")
        settings.port = reader.integer("port", in: 1...65_535) ?? settings.port
        if let security = reader.string("security") {
            if let parsed = SMTPSettings.Security(rawValue: security) {
                settings.security = parsed
            } else {
                reader.error("security", "must be \"starttls\", \"tls\" or \"none\", found \"\(security)\"")
            }
        }
        if settings.security == .none, let host, !Loopback.isLoopbackHost(host) {
            reader.error(
                "security", "\"none\" is allowed only for a loopback host (localhost, 127.0.0.1, ::1)")
        }
        settings.username = reader.string("username")
        if let file = reader.string("password_file") {
            if let data = FileManager.default.contents(atPath: file),
                let text = String(data: data, encoding: .utf8)
            {
                settings.password = text.trimmingCharacters(in: .newlines)
            } else {
                reader.error("password_file", "cannot read \(file)")
            }
        } else if let fromEnvironment = environment[smtpPasswordVariable], !fromEnvironment.isEmpty {
            settings.password = fromEnvironment
        }
        if settings.username != nil, settings.password == nil {
            reader.error(
                "password_file", "is required with username (or set \(smtpPasswordVariable))")
        }
        if settings.username == nil, settings.password != nil, reader.has("password_file") {
            reader.error("username", "is required with password_file")
        }
        if let caFile = reader.string("ca_file") {
            if FileManager.default.isReadableFile(atPath: caFile) {
                settings.caFile = caFile
            } else {
                reader.error("ca_file", "cannot read \(caFile)")
            }
        }
        settings.timeoutSeconds = reader.integer("timeout_seconds", in: 1...300) ?? settings.timeoutSeconds
        return host == nil ? nil : settings
    }

    static func readEmailVerification(_ root: ObjectReader, sink: ProblemSink) -> EmailVerificationSettings {
        var settings = EmailVerificationSettings()
        guard let value = root.value("email_verification"),
            let reader = ObjectReader(value, path: root.memberPath("email_verification"), sink: sink)
        else { return settings }
        settings.codeLifetimeSeconds =
            reader.integer("code_lifetime_seconds", in: 60...86_400) ?? settings.codeLifetimeSeconds
        settings.maxAttempts = reader.integer("max_attempts", in: 1...20) ?? settings.maxAttempts
        settings.maxGuessesPerWindow =
            reader.integer("max_guesses_per_window", in: 1...1_000) ?? settings.maxGuessesPerWindow
        settings.guessWindowSeconds =
            reader.integer("guess_window_seconds", in: 60...86_400) ?? settings.guessWindowSeconds
        settings.changeUndoDays = reader.integer("change_undo_days", in: 1...30) ?? settings.changeUndoDays
        reader.reportUnknownMembers()
        return settings
    }
}
