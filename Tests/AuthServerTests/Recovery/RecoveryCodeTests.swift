import Crypto
import Foundation
import Testing

@testable import AuthServer

/// The one-time codes draw from the injected random source, so a fixed source gives fixed
/// codes, and the rejection step is visible.
@Suite struct RecoveryCodeTests {
    /// A source that hands out `bytes` in order, as many as asked each time.
    static func source(_ bytes: [UInt8]) -> TimeAndRandomness {
        let queue = ByteQueue(bytes)
        return TimeAndRandomness(now: { Date(timeIntervalSince1970: 0) }, randomBytes: { queue.take($0) })
    }

    final class ByteQueue: @unchecked Sendable {
        private var bytes: [UInt8]
        private let lock = NSLock()
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        func take(_ count: Int) -> [UInt8] {
            lock.withLock {
                let taken = Array(bytes.prefix(count))
                bytes.removeFirst(taken.count)
                return taken
            }
        }
    }

    @Test func aRecoveryCodeIsEightDigitsFromFourBytes() {
        // 0x00000001 → 1 → "00000001"
        #expect(RecoveryCode.generate(Self.source([0, 0, 0, 1])) == "00000001")
        // 0x05F5E100 = 100_000_000 → 0
        #expect(RecoveryCode.generate(Self.source([0x05, 0xF5, 0xE1, 0x00])) == "00000000")
    }

    @Test func aRecoveryCodeRejectsTheBiasedTopOfTheRange() {
        // 0xFFFFFFFF is above the largest multiple of 10^8: drawn again.
        #expect(RecoveryCode.generate(Self.source([0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0x30, 0x39])) == "00012345")
    }

    @Test func aRecoverySaltIsSixteenDrawnBytes() {
        #expect(RecoveryCode.newSalt(Self.source(Array(1...16))) == Array(1...16))
    }

    @Test func aVerificationCodeIsSixDigitsAndRejectsTheBiasedTop() {
        #expect(VerificationCode.generate(Self.source([0, 0, 0x30, 0x39])) == "012345")
        // 4_294_000_000 = 0xFFF13D80 is the first rejected value.
        #expect(VerificationCode.generate(Self.source([0xFF, 0xF1, 0x3D, 0x80, 0, 0, 0, 7])) == "000007")
    }

    @Test func aVerificationLinkTokenIsSixteenDrawnBytesInBase64URL() {
        let bytes = [UInt8](repeating: 0xFB, count: 16)
        #expect(VerificationCode.newLinkToken(Self.source(bytes)) == Base64URL.encode(bytes))
        #expect(VerificationCode.newSalt(Self.source(Array(1...16))) == Array(1...16))
    }

    @Test func theRecoveryLinkCarriesTheAddressInTheQueryAndTheCodeInTheFragment() {
        #expect(
            RecoveryMail.link(issuer: "https://id.example.com", email: "a+b@example.com", code: "01234567")
                == "https://id.example.com/recover?email=a+b@example.com#code=01234567")
    }
}
