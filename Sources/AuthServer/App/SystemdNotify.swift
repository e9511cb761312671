import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The service manager's readiness protocol (sd_notify): when `NOTIFY_SOCKET` names a Unix
/// datagram socket (a path, or an abstract name starting with `@`), each state change is one
/// datagram of `KEY=VALUE` lines. Without `NOTIFY_SOCKET` every call does nothing, so the
/// server behaves the same outside systemd.
enum SystemdNotify {
    /// `NOTIFY_SOCKET` as the process started. Reading it removes it from the environment, so
    /// that the embedded PostgreSQL (which speaks the same protocol) and other child processes
    /// never notify in the server's name: `claimSocket()` before starting any of them.
    static let socketName: String? = {
        guard let value = getenv("NOTIFY_SOCKET") else { return nil }
        let name = String(cString: value)
        unsetenv("NOTIFY_SOCKET")
        return name.isEmpty ? nil : name
    }()

    static func claimSocket() { _ = socketName }

    /// The server listens and its database is migrated.
    static func ready(log: Log? = nil) { send("READY=1\nSTATUS=serving", log: log) }

    /// A SIGHUP reload begins; `ready()` ends it.
    static func reloading(log: Log? = nil) {
        send("RELOADING=1\nMONOTONIC_USEC=\(monotonicMicroseconds())", log: log)
    }

    /// The server finishes its requests in flight and exits.
    static func stopping(log: Log? = nil) { send("STOPPING=1", log: log) }

    /// Sends `state` to `NOTIFY_SOCKET`; false when the variable was unset or the datagram
    /// could not be sent (logged as `systemd.notify`).
    @discardableResult
    static func send(_ state: String, log: Log? = nil) -> Bool {
        guard let socketName else { return false }
        if let failure = deliver(state, to: socketName) {
            log?.error("systemd.notify", ["socket": socketName, "reason": failure])
            return false
        }
        return true
    }

    /// Sends one datagram; the reason it failed, or nil.
    static func deliver(_ state: String, to socketName: String) -> String? {
        #if canImport(Glibc)
            var name = Array(socketName.utf8)
            let abstract = name.first == UInt8(ascii: "@")
            guard abstract || name.first == UInt8(ascii: "/") else {
                return "NOTIFY_SOCKET must be an absolute path or start with @"
            }
            if abstract { name[0] = 0 }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let capacity = MemoryLayout.size(ofValue: address.sun_path)
            // A path needs its terminating zero; an abstract name is counted by its length.
            guard name.count + (abstract ? 0 : 1) <= capacity else { return "NOTIFY_SOCKET is too long" }
            withUnsafeMutableBytes(of: &address.sun_path) { path in
                path.copyBytes(from: name)
            }
            let length = socklen_t(
                MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + name.count + (abstract ? 0 : 1)
            )

            let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard descriptor >= 0 else { return "socket: \(String(cString: strerror(errno)))" }
            defer { close(descriptor) }
            let message = Array(state.utf8)
            let sent = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    message.withUnsafeBytes { bytes in
                        sendto(
                            descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), socketAddress,
                            length)
                    }
                }
            }
            guard sent == message.count else { return "sendto: \(String(cString: strerror(errno)))" }
            return nil
        #else
            return "sd_notify is available on Linux only"
        #endif
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }
}
