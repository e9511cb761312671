/// How to reach the SMTP submission server.
public struct SMTPSettings: Sendable, Equatable {
    public enum Security: String, Sendable, Equatable, CaseIterable {
        /// Plain connection upgraded with STARTTLS before anything else is said (port 587).
        case starttls
        /// TLS from the first byte (port 465).
        case tls
        /// No encryption at all: only for a relay on the loopback interface.
        case none
    }

    public var host: String
    public var port: Int
    public var security: Security
    public var username: String?
    /// Read at start-up from a file or the environment, never from a configuration file itself.
    public var password: String?
    /// PEM file of trusted roots for the server certificate; the system roots when nil.
    public var caFile: String?
    public var timeoutSeconds: Int

    public init(
        host: String, port: Int = 587, security: Security = .starttls, username: String? = nil,
        password: String? = nil, caFile: String? = nil, timeoutSeconds: Int = 10
    ) {
        self.host = host
        self.port = port
        self.security = security
        self.username = username
        self.password = password
        self.caFile = caFile
        self.timeoutSeconds = timeoutSeconds
    }
}
