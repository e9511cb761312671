import Crypto
import Foundation

/// Server-provided DPoP nonces (RFC 9449 §8) without state: a nonce is the HMAC of its time
/// step under a key every instance shares, so any instance recognises any instance's nonce
/// and nothing is written per request. The current and the previous step are accepted, so
/// a nonce lives between one and two steps.
public struct DPoPNonce: Sendable {
    public let key: SymmetricKey
    /// Length of a step in seconds.
    public let stepSeconds: Int

    public init(key: SymmetricKey, stepSeconds: Int = 300) {
        self.key = key
        self.stepSeconds = max(1, stepSeconds)
    }

    /// The nonce to hand out at `now`.
    public func current(now: Date) -> String { nonce(step: step(now)) }

    /// Whether `presented` is the nonce of the current or the previous step.
    public func isValid(_ presented: String, now: Date) -> Bool {
        let step = step(now)
        let bytes = Array(presented.utf8)
        return constantTimeEquals(bytes, Array(nonce(step: step).utf8))
            || constantTimeEquals(bytes, Array(nonce(step: step - 1).utf8))
    }

    private func step(_ now: Date) -> Int64 {
        Int64((now.timeIntervalSince1970 / Double(stepSeconds)).rounded(.down))
    }

    private func nonce(step: Int64) -> String {
        var message = Array("dpop-nonce:".utf8)
        withUnsafeBytes(of: step.bigEndian) { message.append(contentsOf: $0) }
        return Base64URL.encode(HMAC.authenticationCode(for: message, using: key).bytes.prefix(24))
    }
}
