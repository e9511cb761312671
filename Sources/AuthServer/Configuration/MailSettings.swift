import SMTP

/// Outgoing mail: the development mailbox (messages stay in memory, readable at /dev/mail) or
/// an SMTP server.
struct MailSettings: Sendable, Equatable {
    enum Transport: String, Sendable, Equatable { case development, smtp }

    var transport: Transport = .development
    /// The `From` header: `Name <address>` or a bare address.
    var from = "auth-server <no-reply@localhost>"
    /// Set when `transport` is `smtp`.
    var smtp: SMTPSettings?
}

/// The one-time codes that prove an address reaches the account holder.
struct EmailVerificationSettings: Sendable, Equatable {
    var codeLifetimeSeconds = 900
    /// Wrong guesses a code survives; then it is dead and a new one must be requested.
    var maxAttempts = 5
    /// Guesses at codes per account and per address in one window, across resends; past it the
    /// verification is locked until the window ends (even the right code is refused).
    var maxGuessesPerWindow = 20
    var guessWindowSeconds = 3_600
    /// How long the old address's link can undo an email change (restore it, end every session).
    var changeUndoDays = 7
}
