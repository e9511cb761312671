import Foundation
import Testing

@testable import AuthServer

@Suite("Configuration: mail and email_verification")
struct MailConfigurationTests {
    static func config(_ extra: String) -> String {
        """
        {"issuer": "https://id.example.com", "clients": [], \(extra)}
        """
    }

    func check(_ json: String, environment: [String: String] = [:]) -> ConfigurationLoader.Result {
        ConfigurationLoader.check(data: Data(json.utf8), environment: environment)
    }

    @Test func defaultsToTheDevelopmentMailbox() throws {
        let configuration = try #require(
            check(#"{"issuer": "https://id.example.com", "clients": []}"#).configuration)
        #expect(configuration.mail == MailSettings())
        #expect(configuration.mail.transport == .development)
        #expect(configuration.mail.from == "auth-server <no-reply@localhost>")
        #expect(configuration.emailVerification.codeLifetimeSeconds == 900)
        #expect(configuration.emailVerification.maxAttempts == 5)
    }

    @Test func readsSMTPWithThePasswordFromTheEnvironment() throws {
        let json = Self.config(
            """
            "mail": {"transport": "smtp", "from": "Example <no-reply@example.com>",
                     "smtp": {"host": "smtp.example.com", "username": "mailer", "timeout_seconds": 20}},
            "email_verification": {"code_lifetime_seconds": 600, "max_attempts": 3}
            """)
        let configuration = try #require(
            check(json, environment: [MailConfigurationReader.smtpPasswordVariable: "s3cret"]).configuration)
        let smtp = try #require(configuration.mail.smtp)
        #expect(smtp.host == "smtp.example.com")
        #expect(smtp.port == 587)
        #expect(smtp.security == .starttls)
        #expect(smtp.username == "mailer")
        #expect(smtp.password == "s3cret")
        #expect(smtp.timeoutSeconds == 20)
        #expect(
            configuration.emailVerification
                == EmailVerificationSettings(codeLifetimeSeconds: 600, maxAttempts: 3))
    }

    @Test func readsThePasswordFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("smtp-\(UUID().uuidString)")
        try "from-file\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let json = Self.config(
            #""mail": {"transport": "smtp", "smtp": {"host": "localhost", "port": 465, "security": "tls", "username": "u", "password_file": "\#(file.path)"}}"#
        )
        let smtp = try #require(check(json).configuration?.mail.smtp)
        #expect(smtp.password == "from-file")
        #expect(smtp.security == .tls)
        #expect(smtp.port == 465)
    }

    @Test func reportsEveryProblemWithItsPath() {
        let json = Self.config(
            """
            "mail": {"transport": "carrier-pigeon", "from": "not an address", "smtp": {"host": "smtp.example.com",
                     "security": "none", "username": "u", "ca_file": "/nonexistent/ca.pem", "port": 0, "colour": 1}},
            "email_verification": {"max_attempts": 0, "lifetime": 5}
            """)
        let problems = check(json).problems.map(\.description)
        #expect(
            problems.contains(
                "error: $.mail.transport: must be \"development\" or \"smtp\", found \"carrier-pigeon\""))
        #expect(
            problems.contains(
                "error: $.mail.from: must be an address like \"Example <no-reply@example.com>\""))
        #expect(
            problems.contains(
                "error: $.mail.smtp.security: \"none\" is allowed only for a loopback host (localhost, 127.0.0.1, ::1)"
            ))
        #expect(
            problems.contains(
                "error: $.mail.smtp.password_file: is required with username (or set AUTH_SERVER_SMTP_PASSWORD)"
            ))
        #expect(problems.contains("error: $.mail.smtp.ca_file: cannot read /nonexistent/ca.pem"))
        #expect(problems.contains("error: $.mail.smtp.port: must be between 1 and 65535, found 0"))
        #expect(problems.contains("error: $.mail.smtp.colour: is not a known setting"))
        #expect(
            problems.contains("error: $.email_verification.max_attempts: must be between 1 and 20, found 0"))
        #expect(problems.contains("error: $.email_verification.lifetime: is not a known setting"))
    }

    @Test func guessBudgetAndSignUpThrottleSettingsAreReadAndValidated() throws {
        let defaults = try #require(check(Self.config(#""mail": {}"#)).configuration)
        #expect(defaults.emailVerification.maxGuessesPerWindow == 20)
        #expect(defaults.emailVerification.guessWindowSeconds == 3_600)
        #expect(defaults.signUp == SignUpSettings(maxPerEmail: 5, maxPerClient: 100, windowSeconds: 3_600))
        let configured = try #require(
            check(
                Self.config(
                    """
                    "email_verification": {"max_guesses_per_window": 10, "guess_window_seconds": 600},
                    "sign_up": {"max_per_email": 3, "max_per_client": 50, "window_seconds": 60}
                    """)
            ).configuration)
        #expect(configured.emailVerification.maxGuessesPerWindow == 10)
        #expect(configured.emailVerification.guessWindowSeconds == 600)
        #expect(configured.signUp == SignUpSettings(maxPerEmail: 3, maxPerClient: 50, windowSeconds: 60))
        let problems = check(
            Self.config(
                """
                "email_verification": {"max_guesses_per_window": 0, "guess_window_seconds": 5},
                "sign_up": {"max_per_email": 0, "window_seconds": 100000, "per_minute": 1}
                """)
        ).problems.map(\.description)
        #expect(
            problems.contains(
                "error: $.email_verification.max_guesses_per_window: must be between 1 and 1000, found 0"))
        #expect(
            problems.contains(
                "error: $.email_verification.guess_window_seconds: must be between 60 and 86400, found 5"))
        #expect(problems.contains("error: $.sign_up.max_per_email: must be between 1 and 1000, found 0"))
        #expect(
            problems.contains("error: $.sign_up.window_seconds: must be between 10 and 86400, found 100000"))
        #expect(problems.contains("error: $.sign_up.per_minute: is not a known setting"))
    }

    @Test func smtpTransportNeedsItsSettingsAndNoneOnlyOnLoopback() throws {
        #expect(
            check(Self.config(#""mail": {"transport": "smtp"}"#)).problems.map(\.description)
                == ["error: $.mail.smtp: is required when transport is \"smtp\""])
        let loopback = Self.config(
            #""mail": {"transport": "smtp", "smtp": {"host": "127.0.0.1", "port": 2525, "security": "none"}}"#
        )
        #expect(check(loopback).problems.isEmpty)
    }

    @Test func developmentMailboxLogsRecipientAndSubjectButNeverTheBody() throws {
        let buffer = LogBuffer()
        let mailbox = DevelopmentMailbox(log: Log(write: { buffer.append($0) }))
        try mailbox.deliver(
            OutgoingMail(to: "ada@example.org", subject: "Hello", text: "code 123456", html: "<p>123456</p>"))
        #expect(buffer.text.contains("to=ada@example.org"))
        #expect(buffer.text.contains("subject=Hello"))
        #expect(buffer.text.contains("/dev/mail"))
        #expect(!buffer.text.contains("123456"))
        #expect(mailbox.received(to: "ADA@example.org").count == 1)
    }
}
