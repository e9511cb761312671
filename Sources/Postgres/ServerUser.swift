import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The unprivileged account the server runs as when this process is root.
struct ServerUser: Sendable {
    let name: String
    let uid: uid_t
    let gid: gid_t

    static func unprivileged() throws -> ServerUser {
        for name in ["postgres", "nobody"] {
            if let entry = getpwnam(name) {
                return ServerUser(name: name, uid: entry.pointee.pw_uid, gid: entry.pointee.pw_gid)
            }
        }
        throw ClusterError("running as root but neither user postgres nor nobody exists")
    }

    static func runuserPath() throws -> String {
        for path in ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"]
        where FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        throw ClusterError(
            "runuser (util-linux) not found; it is needed to run PostgreSQL as a non-root user")
    }

    func takeOwnership(of url: URL) throws {
        guard chown(url.path, uid, gid) == 0 else {
            throw ClusterError("cannot chown \(url.path) to \(name): errno \(errno)")
        }
    }
}
