#if canImport(Glibc)
    import Glibc
#endif
import Foundation
import Synchronization

/// IMF-fixdate formatting (RFC 9110 §5.6.7) without Foundation formatters, plus a
/// once-per-second cache of the current `Date` header.
enum HTTPDate {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]

    static func format(_ date: Date) -> String {
        format(epochSeconds: Int(date.timeIntervalSince1970.rounded(.down)))
    }

    static func format(epochSeconds: Int) -> String {
        var t = time_t(epochSeconds)
        var parts = tm()
        gmtime_r(&t, &parts)
        let day = days[Int(parts.tm_wday) % 7]
        let month = months[Int(parts.tm_mon) % 12]
        return "\(day), \(two(Int(parts.tm_mday))) \(month) \(Int(parts.tm_year) + 1900) "
            + "\(two(Int(parts.tm_hour))):\(two(Int(parts.tm_min))):\(two(Int(parts.tm_sec))) GMT"
    }

    private static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

    private static let cache = Mutex<(second: Int, bytes: [UInt8])>((-1, []))

    /// The current date as header bytes, formatted at most once per second.
    static func currentBytes() -> [UInt8] {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let second = Int(now.tv_sec)
        return cache.withLock { entry in
            if entry.second != second {
                entry = (second, Array(format(epochSeconds: second).utf8))
            }
            return entry.bytes
        }
    }
}
