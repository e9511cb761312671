import Crypto

/// Which build this is: the release version (`VERSION`), the git commit (with `-dirty` when the
/// checkout had uncommitted changes; "unknown" when built outside git), and the Swift and OpenSSL
/// versions. Printed by `auth-server version`, logged with `server.started` and exported as the
/// `build_info` metric.
struct BuildInfo: Sendable {
    var version: String
    var commit: String
    var describe: String
    var swift: String
    var openSSL: String

    static let current = BuildInfo(
        version: GeneratedBuildInfo.version, commit: GeneratedBuildInfo.commit,
        describe: GeneratedBuildInfo.describe, swift: GeneratedBuildInfo.swift, openSSL: openSSLVersion)

    /// `auth-server version` and `auth-server --version`.
    var text: String {
        """
        auth-server \(version)
        commit: \(commit)
        git describe: \(describe)
        swift: \(swift)
        openssl: \(openSSL)
        """
    }
}
