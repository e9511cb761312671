import COpenSSL
import Foundation

/// Compares two byte strings without an early exit (`CRYPTO_memcmp`), so the time taken
/// does not reveal how many leading bytes of a secret an attacker guessed right.
/// Different lengths compare unequal (lengths are not secret).
public func constantTimeEquals(_ a: some DataProtocol, _ b: some DataProtocol) -> Bool {
    memcmpEquals(Array(a), Array(b))
}

private func memcmpEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return a.withUnsafeBytes { pa in
        b.withUnsafeBytes { pb in
            CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0
        }
    }
}
