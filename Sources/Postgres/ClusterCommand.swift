import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the PostgreSQL server tools for `PostgresCluster`.
enum ClusterCommand {
    struct CommandResult {
        let status: Int32
        let output: String
    }

    /// Runs a program to completion, as `user` via `runuser` when given, collecting its output
    /// through a file (a pipe could be held open by the server that `pg_ctl` forks). The program
    /// gets standard input from /dev/null and no other descriptor of this process.
    ///
    /// `posix_spawn` and `waitpid` directly: the calling thread may be one that cannot serve a
    /// run loop, and nothing here needs more.
    static func run(_ executable: String, _ arguments: [String], as user: ServerUser?) throws
        -> CommandResult
    {
        let argv: [String]
        let program: String
        if let user {
            program = try ServerUser.runuserPath()
            argv = [program, "-u", user.name, "--", executable] + arguments
        } else {
            program = executable
            argv = [executable] + arguments
        }
        let outputPath = NSTemporaryDirectory() + "/pgcluster-\(UUID().uuidString).out"
        defer { unlink(outputPath) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of this process's: the server `pg_ctl start` forks outlives the call,
        // and a pipe it inherited (another thread's child output) would never reach its end.
        guard let addCloseFrom, addCloseFrom(&actions, 3) == 0 else {
            throw ClusterError("cannot run \(program): posix_spawn_file_actions_addclosefrom_np failed")
        }

        var pid = pid_t()
        let spawnStatus = withCStrings(argv + [nil]) { arguments in
            let mutableArguments = arguments.map { $0.map { UnsafeMutablePointer(mutating: $0) } }
            return posix_spawn(&pid, program, &actions, nil, mutableArguments, environ)
        }
        guard spawnStatus == 0 else {
            throw ClusterError("cannot run \(program): \(String(cString: strerror(spawnStatus)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw ClusterError("waitpid failed: errno \(errno)") }
        }
        // WIFEXITED / WEXITSTATUS are macros Swift cannot import.
        let exitStatus: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return CommandResult(status: exitStatus, output: output)
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (since 2.34), which Swift's Glibc
    /// module does not import.
    private static let addCloseFrom = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast(
            $0, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }
}
