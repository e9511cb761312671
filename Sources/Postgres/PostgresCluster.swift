import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A private PostgreSQL cluster run from the installed server binaries: the server's
/// embedded default database and the tests' throwaway database.
///
/// It listens on 127.0.0.1 only, without Unix sockets, trusts local logins as user `postgres`,
/// and never touches a system cluster. When the process runs as root, `initdb` and the server
/// run as the `postgres` system user (or `nobody`) through `runuser`, because PostgreSQL
/// refuses to run as root.
public final class PostgresCluster: Sendable {
    public let dataDirectory: URL
    public let port: Int
    public let logFile: URL
    private let binDirectory: URL
    /// The unprivileged user the server runs as when this process is root.
    private let serverUser: ServerUser?
    /// Set for `temporary()` clusters: removed by `stop()`; such clusters also skip fsync.
    private let temporaryRoot: URL?

    private init(
        dataDirectory: URL, port: Int, logFile: URL, binDirectory: URL, serverUser: ServerUser?,
        temporaryRoot: URL?
    ) {
        self.dataDirectory = dataDirectory
        self.port = port
        self.logFile = logFile
        self.binDirectory = binDirectory
        self.serverUser = serverUser
        self.temporaryRoot = temporaryRoot
    }

    /// Starts a cluster in `dataDirectory`, creating it with `initdb` when it holds no
    /// `PG_VERSION` yet and reusing it otherwise.
    ///
    /// - Parameters:
    ///   - port: the TCP port on 127.0.0.1; nil picks a free one.
    ///   - logFile: the server log; defaults to `<dataDirectory>.log` beside the directory.
    public static func start(dataDirectory: URL, port: Int? = nil, logFile: URL? = nil) throws
        -> PostgresCluster
    {
        let data = dataDirectory.standardizedFileURL
        let log =
            logFile
            ?? data.deletingLastPathComponent().appendingPathComponent(data.lastPathComponent + ".log")
        return try launch(dataDirectory: data, port: port, logFile: log, temporaryRoot: nil)
    }

    /// Starts a throwaway cluster in a fresh directory under the system temp directory, with
    /// fsync off; `stop()` removes it.
    public static func temporary() throws -> PostgresCluster {
        let root = try makeTemporaryDirectory()
        do {
            return try launch(
                dataDirectory: root.appendingPathComponent("data"), port: nil,
                logFile: root.appendingPathComponent("postgresql.log"), temporaryRoot: root)
        } catch {
            try? FileManager.default.removeItem(at: root)
            throw error
        }
    }

    /// The process id and port of a server that another process already runs on
    /// `dataDirectory`, read from its `postmaster.pid`; nil when no live server holds it (no
    /// file, an unreadable one, or a stale one left by a crash, which `pg_ctl start` clears).
    public static func runningServer(dataDirectory: URL) -> (pid: Int32, port: Int)? {
        let file = dataDirectory.standardizedFileURL.appendingPathComponent("postmaster.pid")
        guard let text = try? String(contentsOf: file, encoding: .utf8) else { return nil }
        // Line 1 is the postmaster's pid, line 4 its port (PostgreSQL's pidfile.h).
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 4, let pid = Int32(lines[0].trimmingCharacters(in: .whitespaces)), pid > 0,
            let port = Int(lines[3].trimmingCharacters(in: .whitespaces)), (1...65_535).contains(port)
        else { return nil }
        // Signal 0 checks that the process exists; EPERM means it exists under another user.
        guard kill(pid, 0) == 0 || errno == EPERM else { return nil }
        return (pid, port)
    }

    /// `postgresql://postgres@127.0.0.1:PORT/postgres`
    public var url: String { url(database: "postgres") }

    public func url(database: String) -> String {
        "postgresql://postgres@127.0.0.1:\(port)/\(database)"
    }

    /// Creates a database; `name` must be a plain lowercase identifier.
    public func createDatabase(_ name: String) throws {
        guard Self.isPlainIdentifier(name) else {
            throw PostgresError(
                kind: .syntaxOrUsage, detail: "database name \"\(name)\" is not a plain identifier")
        }
        let connection = try PostgresConnection(url: url)
        defer { connection.close() }
        try connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \"\(name)\""))
    }

    /// Stops the server (fast shutdown: sessions are disconnected); a temporary cluster's
    /// directory is removed as well.
    public func stop() throws {
        try stopServer()
        if let temporaryRoot {
            try FileManager.default.removeItem(at: temporaryRoot)
        }
    }

    /// Stops and starts the server again on the same port and data directory.
    public func restart() throws {
        try stopServer()
        try Self.startServer(
            binDirectory: binDirectory, dataDirectory: dataDirectory, port: port, logFile: logFile,
            serverUser: serverUser, fsync: temporaryRoot == nil)
    }

    // MARK: - Starting and stopping

    private static func launch(dataDirectory: URL, port: Int?, logFile: URL, temporaryRoot: URL?) throws
        -> PostgresCluster
    {
        let binDirectory = try findBinDirectory()
        let serverUser = geteuid() == 0 ? try ServerUser.unprivileged() : nil
        let fileManager = FileManager.default
        do {
            try fileManager.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw ClusterError(
                "cannot create data directory \(dataDirectory.path): \(error.localizedDescription)")
        }
        if !fileManager.fileExists(atPath: logFile.path) {
            guard fileManager.createFile(atPath: logFile.path, contents: nil) else {
                throw ClusterError("cannot create log file \(logFile.path)")
            }
        }
        if let serverUser {
            try serverUser.takeOwnership(of: dataDirectory)
            try serverUser.takeOwnership(of: logFile)
            // Every parent directory must let the server user through.
            let probe = try ClusterCommand.run("/bin/test", ["-w", dataDirectory.path], as: serverUser)
            guard probe.status == 0 else {
                throw ClusterError(
                    "data directory \(dataDirectory.path) is not reachable by user \(serverUser.name): "
                        + "every parent directory must be traversable (chmod o+x)")
            }
        }
        chmod(dataDirectory.path, 0o700)

        if !fileManager.fileExists(atPath: dataDirectory.appendingPathComponent("PG_VERSION").path) {
            let initdb = try ClusterCommand.run(
                binDirectory.appendingPathComponent("initdb").path,
                [
                    "-D", dataDirectory.path, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8",
                    "--locale=C",
                ],
                as: serverUser)
            guard initdb.status == 0 else {
                throw ClusterError("initdb failed (status \(initdb.status)): \(initdb.output)")
            }
        }

        // A port picked here may be taken by someone else before the server binds it:
        // try a few fresh ones before giving up.
        let candidates = port.map { [$0] } ?? []
        var lastError: (any Error)?
        for attempt in 0..<(port == nil ? 5 : 1) {
            let candidate = attempt < candidates.count ? candidates[attempt] : try freePort()
            do {
                try startServer(
                    binDirectory: binDirectory, dataDirectory: dataDirectory, port: candidate,
                    logFile: logFile, serverUser: serverUser, fsync: temporaryRoot == nil)
                return PostgresCluster(
                    dataDirectory: dataDirectory, port: candidate, logFile: logFile,
                    binDirectory: binDirectory, serverUser: serverUser, temporaryRoot: temporaryRoot)
            } catch {
                lastError = error
            }
        }
        throw lastError ?? ClusterError("server did not start")
    }

    private static func startServer(
        binDirectory: URL, dataDirectory: URL, port: Int, logFile: URL, serverUser: ServerUser?, fsync: Bool
    ) throws {
        var options = "-c listen_addresses=127.0.0.1 -c port=\(port) -c unix_socket_directories=''"
        if !fsync {
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        }
        let result = try ClusterCommand.run(
            binDirectory.appendingPathComponent("pg_ctl").path,
            ["-w", "-t", "60", "-D", dataDirectory.path, "-l", logFile.path, "-o", options, "start"],
            as: serverUser)
        guard result.status == 0 else {
            let log = (try? String(contentsOf: logFile, encoding: .utf8))?.suffix(2000) ?? ""
            throw ClusterError("pg_ctl start failed (status \(result.status)): \(result.output)\n\(log)")
        }
    }

    private func stopServer() throws {
        guard
            FileManager.default.fileExists(
                atPath: dataDirectory.appendingPathComponent("postmaster.pid").path)
        else { return }
        let result = try ClusterCommand.run(
            binDirectory.appendingPathComponent("pg_ctl").path,
            ["-w", "-t", "60", "-D", dataDirectory.path, "-m", "fast", "stop"], as: serverUser)
        guard result.status == 0 else {
            throw ClusterError("pg_ctl stop failed (status \(result.status)): \(result.output)")
        }
    }

    // MARK: - Helpers

    /// The newest installed server binaries: `pg_config --bindir`, then
    /// `/usr/lib/postgresql/<version>/bin` (highest version first), then `PATH`.
    static func findBinDirectory() throws -> URL {
        let fileManager = FileManager.default
        func hasServer(_ directory: String) -> Bool {
            fileManager.isExecutableFile(atPath: directory + "/initdb")
                && fileManager.isExecutableFile(atPath: directory + "/pg_ctl")
        }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        let pathDirectories = path.split(separator: ":").map(String.init)
        if let pgConfig = pathDirectories.map({ $0 + "/pg_config" }).first(
            where: fileManager.isExecutableFile),
            let result = try? ClusterCommand.run(pgConfig, ["--bindir"], as: nil), result.status == 0
        {
            let directory = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
            if hasServer(directory) { return URL(fileURLWithPath: directory) }
        }
        let versions = ((try? fileManager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .compactMap { name in Double(name).map { (name, $0) } }
            .sorted { $0.1 > $1.1 }
        for (name, _) in versions where hasServer("/usr/lib/postgresql/\(name)/bin") {
            return URL(fileURLWithPath: "/usr/lib/postgresql/\(name)/bin")
        }
        if let directory = pathDirectories.first(where: hasServer) {
            return URL(fileURLWithPath: directory)
        }
        throw ClusterError(
            "PostgreSQL server binaries (initdb, pg_ctl) not found; install the postgresql package")
    }

    /// Binds 127.0.0.1:0 and returns the port the kernel chose.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClusterError("socket() failed: errno \(errno)") }
        defer { Glibc.close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
            }
        }
        guard bound else { throw ClusterError("could not bind 127.0.0.1:0: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func makeTemporaryDirectory() throws -> URL {
        let base = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("pgcluster.XXXXXX")
            .path
        var template = Array(base.utf8CString)
        let path: String? = template.withUnsafeMutableBufferPointer { buffer in
            guard let start = buffer.baseAddress, let created = mkdtemp(start) else { return nil }
            return String(cString: created)
        }
        guard let path else { throw ClusterError("mkdtemp failed: errno \(errno)") }
        // Traversable for the unprivileged server user; the data directory itself stays 0700.
        chmod(path, 0o711)
        return URL(fileURLWithPath: path)
    }

    private static func isPlainIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, name.utf8.count <= 63, first != "_" || name.count > 1
        else {
            return false
        }
        return !("0"..."9").contains(first)
            && name.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
            }
    }
}
