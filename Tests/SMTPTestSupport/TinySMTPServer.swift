import Foundation
import Glibc
import Synchronization

/// A minimal SMTP receiver on 127.0.0.1 for client tests: plain TCP, scripted replies,
/// records every transaction. Not a mail server: one connection at a time.
public final class TinySMTPServer: Sendable {
    public struct Received: Sendable, Equatable {
        public var auth: String?
        public var mailFrom: String
        public var rcptTo: String
        /// The message as the client meant it: dot-stuffing undone, CRLF line ends.
        public var data: String
    }

    public struct Script: Sendable {
        public var capabilities: [String]
        /// Replies to successive RCPT commands; 250 once the list is used up.
        public var rcptReplies: [String]
        /// Say nothing at all after accepting (to test timeouts).
        public var silent: Bool
        public var greeting: String

        public init(
            capabilities: [String] = ["AUTH PLAIN LOGIN", "SIZE 10000000"], rcptReplies: [String] = [],
            silent: Bool = false, greeting: String = "220 tiny ESMTP"
        ) {
            self.capabilities = capabilities
            self.rcptReplies = rcptReplies
            self.silent = silent
            self.greeting = greeting
        }
    }

    public let port: Int
    private let listener: Int32
    private let state: Mutex<(received: [Received], rcptIndex: Int, stopped: Bool)>
    public let script: Script

    public init(_ script: Script = Script()) throws {
        self.script = script
        state = Mutex(([], 0, false))
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 8) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    public var received: [Received] { state.withLock { $0.received } }

    /// Waits (up to `seconds`) until `count` messages arrived.
    public func waitFor(_ count: Int, seconds: Double = 20) -> [Received] {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let list = received
            if list.count >= count { return list }
            usleep(20_000)
        }
        return received
    }

    /// Wakes the accept loop, which then closes the listener itself: closing it here could let
    /// another test's socket take the descriptor number while the loop still uses it.
    public func stop() {
        state.withLock { $0.stopped = true }
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        defer { close(listener) }
        while !state.withLock({ $0.stopped }) {
            let client = accept(listener, nil, nil)
            if client < 0 { continue }
            serve(client)
            close(client)
        }
    }

    private func serve(_ fd: Int32) {
        if script.silent {
            usleep(3_000_000)
            return
        }
        var buffer: [UInt8] = []
        func readLine() -> String? {
            while true {
                if let index = buffer.firstIndex(of: 10) {
                    var line = Array(buffer[..<index])
                    buffer.removeFirst(index + 1)
                    if line.last == 13 { line.removeLast() }
                    return String(decoding: line, as: UTF8.self)
                }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = recv(fd, &chunk, chunk.count, 0)
                guard count > 0 else { return nil }
                buffer.append(contentsOf: chunk[0..<count])
            }
        }
        func reply(_ text: String) {
            let bytes = Array((text + "\r\n").utf8)
            _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
        reply(script.greeting)
        var auth: String?
        var from = ""
        var to = ""
        while let line = readLine() {
            let upper = line.uppercased()
            if upper.hasPrefix("EHLO") {
                let lines = ["tiny"] + script.capabilities
                for (index, text) in lines.enumerated() {
                    reply("250\(index == lines.count - 1 ? " " : "-")\(text)")
                }
            } else if upper.hasPrefix("AUTH PLAIN ") {
                auth = String(line.dropFirst(11))
                reply("235 ok")
            } else if upper.hasPrefix("MAIL FROM:") {
                from = String(line.dropFirst(10))
                reply("250 ok")
            } else if upper.hasPrefix("RCPT TO:") {
                to = String(line.dropFirst(8))
                let answer = state.withLock { state -> String in
                    defer { state.rcptIndex += 1 }
                    return state.rcptIndex < script.rcptReplies.count
                        ? script.rcptReplies[state.rcptIndex] : "250 ok"
                }
                reply(answer)
            } else if upper == "DATA" {
                reply("354 go on")
                var lines: [String] = []
                while let dataLine = readLine(), dataLine != "." {
                    lines.append(dataLine.hasPrefix(".") ? String(dataLine.dropFirst()) : dataLine)
                }
                let message = Received(
                    auth: auth, mailFrom: from, rcptTo: to, data: lines.joined(separator: "\r\n") + "\r\n")
                state.withLock { $0.received.append(message) }
                reply("250 queued")
            } else if upper == "QUIT" {
                reply("221 bye")
                return
            } else {
                reply("502 unknown")
            }
        }
    }
}
