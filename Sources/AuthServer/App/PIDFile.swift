import Foundation

/// The file that holds the running server's process id, so that `clients reload` can find it.
enum PIDFile {
    static func write(_ path: String, pid: Int32 = getpid()) throws {
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("\(pid)\n".utf8).write(to: url, options: .atomic)
    }

    static func read(_ path: String) -> Int32? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return Int32(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Removes the file only while it still names this process (another server may have
    /// started since with the same file).
    static func remove(_ path: String, pid: Int32 = getpid()) {
        if read(path) == pid { try? FileManager.default.removeItem(atPath: path) }
    }
}
