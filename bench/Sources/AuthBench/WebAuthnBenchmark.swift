import Crypto
import Foundation
import WebAuthnCore

/// Measures, on one thread, how much the WebAuthn assertion ceremony costs on top of the
/// ES256 signature check it is built around: `AuthenticationVerifier.verify` calls per
/// second over browser-shaped `AuthenticationResponseJSON` values, against bare P-256
/// `isValidSignature` calls over the same signed bytes. The ratio shows how much of the
/// ceremony is the signature itself (the goal is at least 0.7).
enum WebAuthnBenchmark {
    static let rpID = "example.com"
    static let origin = "https://login.example.com"
    static let assertionCount = 64

    struct Fixture {
        var verifier: AuthenticationVerifier
        var credential: StoredCredential
        var responses: [(response: AuthenticationResponseJSON, challenge: [UInt8])]
        var publicKey: P256.Signing.PublicKey
        var signatures: [(signature: P256.Signing.ECDSASignature, signedData: [UInt8])]
    }

    /// Runs each measurement for `seconds` and returns a small table.
    static func run(seconds: Double) -> String {
        let fixture: Fixture
        do { fixture = try makeFixture() } catch { return "benchmark setup failed: \(error)" }
        let duration = max(seconds, 0.1)

        // The two measurements alternate in short slices, so load from other processes on
        // a shared machine affects both alike and the ratio stays meaningful.
        var failures = 0
        var invalid = 0
        var verifyTotal = (count: 0, seconds: 0.0)
        var signatureTotal = (count: 0, seconds: 0.0)
        let slices = max(Int(duration / 0.1), 1)
        for _ in 0..<slices {
            let verified = measure(0.05) { index in
                let item = fixture.responses[index % fixture.responses.count]
                do {
                    _ = try fixture.verifier.verify(
                        item.response, expectedChallenge: item.challenge, credential: fixture.credential,
                        requireUserVerification: false)
                } catch {
                    failures += 1
                }
            }
            verifyTotal = (verifyTotal.count + verified.count, verifyTotal.seconds + verified.seconds)
            let checked = measure(0.05) { index in
                let item = fixture.signatures[index % fixture.signatures.count]
                if !fixture.publicKey.isValidSignature(item.signature, for: item.signedData) { invalid += 1 }
            }
            signatureTotal = (signatureTotal.count + checked.count, signatureTotal.seconds + checked.seconds)
        }
        let verifyRate = verifyTotal.seconds > 0 ? Double(verifyTotal.count) / verifyTotal.seconds : 0
        let signatureRate =
            signatureTotal.seconds > 0 ? Double(signatureTotal.count) / signatureTotal.seconds : 0

        let ratio = signatureRate > 0 ? verifyRate / signatureRate : 0
        func row(_ name: String, _ rate: Double) -> String {
            let perOp = rate > 0 ? 1_000_000 / rate : 0
            return name.padding(toLength: 36, withPad: " ", startingAt: 0)
                + String(format: "%12.0f %10.1f", rate, perOp)
        }
        var lines = [
            "WebAuthn ES256 assertion verification, single thread, \(String(format: "%.1f", duration)) s in alternating slices, \(assertionCount) distinct assertions",
            "operation".padding(toLength: 36, withPad: " ", startingAt: 0) + "       ops/s      us/op",
            row("AuthenticationVerifier.verify", verifyRate),
            row("P256 isValidSignature", signatureRate),
            String(format: "ratio verify / bare signature: %.2f (goal >= 0.70)", ratio),
        ]
        if failures > 0 || invalid > 0 {
            lines.append(
                "WARNING: \(failures) verify failures, \(invalid) invalid signatures (results not meaningful)"
            )
        }
        return lines.joined(separator: "\n")
    }

    /// Calls `body` with increasing indices until `seconds` have passed; returns the number
    /// of calls and the time they took.
    static func measure(_ seconds: Double, _ body: (Int) -> Void) -> (count: Int, seconds: Double) {
        let clock = ContinuousClock()
        let start = clock.now
        let limit = Duration.milliseconds(Int64(seconds * 1000))
        var count = 0
        var elapsed = Duration.zero
        repeat {
            for _ in 0..<8 {
                body(count)
                count += 1
            }
            elapsed = clock.now - start
        } while elapsed < limit
        let components = elapsed.components
        return (count, Double(components.seconds) + Double(components.attoseconds) / 1e18)
    }

    static func makeFixture() throws -> Fixture {
        let key = try P256.Signing.PrivateKey()
        let (x, y) = try key.publicKey.rawCoordinates
        let coseKey = COSEKey.ec2P256(x: x, y: y)
        let credentialID = SecureRandom.bytes(count: 32)
        let credential = StoredCredential(
            id: credentialID, publicKey: CBOREncoder.encode(coseKey.cbor), signCount: 0,
            backupEligible: true, backedUp: true, userHandle: nil)
        let rpIDHash = Array(SHA256.hash(data: Array(rpID.utf8)))
        var responses: [(AuthenticationResponseJSON, [UInt8])] = []
        var signatures: [(P256.Signing.ECDSASignature, [UInt8])] = []
        for index in 0..<assertionCount {
            let challenge = SecureRandom.bytes(count: 32)
            let clientDataJSON = Array(
                #"{"type":"webauthn.get","challenge":"\#(Base64URL.encode(challenge))","origin":"\#(origin)","crossOrigin":false}"#
                    .utf8)
            let count = UInt32(index + 1)
            // Flags UP | UV | BE | BS, then the sign count.
            let authData =
                rpIDHash + [
                    0x1D, UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF),
                    UInt8(count & 0xFF),
                ]
            let signedData = authData + Array(SHA256.hash(data: clientDataJSON))
            let signature = try key.signature(for: signedData)
            let response = AuthenticationResponseJSON(
                id: Base64URL.encode(credentialID), rawId: Base64URL.encode(credentialID),
                response: AuthenticatorAssertionResponseJSON(
                    clientDataJSON: Base64URL.encode(clientDataJSON),
                    authenticatorData: Base64URL.encode(authData),
                    signature: Base64URL.encode(signature.derRepresentation)),
                authenticatorAttachment: "platform")
            responses.append((response, challenge))
            signatures.append((signature, signedData))
        }
        return Fixture(
            verifier: AuthenticationVerifier(rpID: rpID, allowedOrigins: [origin]), credential: credential,
            responses: responses.map { (response: $0.0, challenge: $0.1) }, publicKey: key.publicKey,
            signatures: signatures.map { (signature: $0.0, signedData: $0.1) })
    }
}
