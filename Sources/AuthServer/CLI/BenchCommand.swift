import Crypto
import Foundation

/// `auth-server bench crypto`: our signatures and Argon2id per second, single-threaded,
/// beside `openssl speed` and the reference `argon2` command for the same primitives.
/// The wrapper should add no real overhead: goal ≥ 0.9× for each.
enum BenchCommand {
    static func run(_ args: [String], output: TextOutput) -> Int32 {
        guard let target = args.first, target == "crypto" || target == "webauthn" else {
            output.error("Usage: auth-server bench crypto|webauthn [--seconds N]")
            return args.first == "--help" ? 0 : 2
        }
        var seconds = 3.0
        if let index = args.firstIndex(of: "--seconds"), index + 1 < args.count, let value = Double(args[index + 1]),
            value > 0
        {
            seconds = value
        }
        if target == "webauthn" {
            output.print(WebAuthnBenchmark.run(seconds: seconds))
            return 0
        }
        do {
            output.print(try crypto(seconds: seconds))
            return 0
        } catch {
            output.error("auth-server bench crypto: \(error)")
            return 1
        }
    }

    struct Row {
        var name: String
        var ours: Double
        var reference: Double?
        var referenceName: String
    }

    static func crypto(seconds: Double, rounds: Int = 3) throws -> String {
        let message = Array("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0".utf8)
        let rsa = try RSA.Signing.PrivateKey(keySize: 2048)
        let rsaSignature = try rsa.signature(for: message)
        let p256 = try P256.Signing.PrivateKey()
        let p256Signature = try p256.signature(for: message)
        let ed = try Curve25519.Signing.PrivateKey()
        let edSignature = try ed.signature(for: message)
        let rsaPublic = rsa.publicKey
        let p256Public = p256.publicKey
        let edPublic = ed.publicKey

        let hasher = PasswordHasher(maxConcurrent: 1)
        let operations: [(name: String, referenceName: String, body: () throws -> Void)] = [
            ("RS256 sign", "openssl speed rsa2048", { _ = try rsa.signature(for: message) }),
            ("RS256 verify", "openssl speed rsa2048", { _ = rsaPublic.isValidSignature(rsaSignature, for: message) }),
            ("ES256 sign", "openssl speed ecdsap256", { _ = try p256.signature(for: message) }),
            ("ES256 verify", "openssl speed ecdsap256", { _ = p256Public.isValidSignature(p256Signature, for: message) }),
            ("EdDSA sign", "openssl speed ed25519", { _ = try ed.signature(for: message) }),
            ("EdDSA verify", "openssl speed ed25519", { _ = edPublic.isValidSignature(edSignature, for: message) }),
            ("Argon2id hash (m=19456 KiB, t=2, p=1)", "argon2 CLI (same parameters)", {
                _ = try hasher.hash("correct horse battery staple")
            }),
        ]
        // The machine is shared and noisy: alternate ours and the reference for a few rounds
        // and keep each side's best figure, so both are measured under the same conditions.
        var ours = [Double](repeating: 0, count: operations.count)
        var references = [Double?](repeating: nil, count: operations.count)
        for _ in 0..<rounds {
            let speed = OpenSSLSpeed.measure(seconds: Int(seconds.rounded(.up)))
            let argon2 = Argon2Reference.measure(runs: max(3, Int(seconds * 8)))
            let roundReferences = [
                speed.rsaSign, speed.rsaVerify, speed.ecdsaSign, speed.ecdsaVerify, speed.eddsaSign, speed.eddsaVerify,
                argon2,
            ]
            for (index, operation) in operations.enumerated() {
                ours[index] = max(ours[index], try rate(seconds, operation.body))
                if let value = roundReferences[index] { references[index] = max(references[index] ?? 0, value) }
            }
        }
        let rows = operations.enumerated().map { index, operation in
            Row(name: operation.name, ours: ours[index], reference: references[index], referenceName: operation.referenceName)
        }
        var lines = ["Crypto, single-threaded, best of \(rounds) rounds of \(Int(seconds)) s per figure, \(ProcessInfo.processInfo.activeProcessorCount) cores"]
        lines.append(pad(["operation", "ours/s", "reference/s", "ratio", "reference"]))
        for row in rows {
            let ratio = row.reference.map { String(format: "%.2f", row.ours / $0) } ?? "n/a"
            lines.append(
                pad([row.name, String(format: "%.0f", row.ours), row.reference.map { String(format: "%.0f", $0) } ?? "n/a", ratio, row.referenceName]))
        }
        lines.append("goal: ratio >= 0.90 for each primitive")
        return lines.joined(separator: "\n")
    }

    /// Operations per second of `body`, run repeatedly for `seconds`.
    static func rate(_ seconds: Double, _ body: () throws -> Void) throws -> Double {
        try body()  // warm up
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start.advanced(by: .milliseconds(Int(seconds * 1000)))
        var count = 0
        while clock.now < deadline {
            for _ in 0..<8 { try body() }
            count += 8
        }
        let elapsed = clock.now - start
        return Double(count) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
    }

    private static func pad(_ columns: [String]) -> String {
        let widths = [38, 10, 12, 6, 0]
        return zip(columns, widths).map { $0.padding(toLength: max($1, $0.count), withPad: " ", startingAt: 0) }
            .joined(separator: " ").trimmingCharacters(in: .whitespaces)
    }
}

/// Figures from `openssl speed -elapsed` (one process, one thread).
struct OpenSSLSpeed {
    var rsaSign: Double?, rsaVerify: Double?
    var ecdsaSign: Double?, ecdsaVerify: Double?
    var eddsaSign: Double?, eddsaVerify: Double?

    static func measure(seconds: Int) -> OpenSSLSpeed {
        guard let text = try? Subprocess.output("openssl", ["speed", "-elapsed", "-seconds", String(seconds), "rsa2048", "ecdsap256", "ed25519"])
        else { return OpenSSLSpeed() }
        return parse(text)
    }

    /// Reads the summary lines: `rsa 2048 bits … sign/s verify/s`, `256 bits ecdsa (nistp256) …`,
    /// `253 bits EdDSA (Ed25519) …`; the last two numbers are the rates.
    static func parse(_ text: String) -> OpenSSLSpeed {
        var result = OpenSSLSpeed()
        for line in text.split(separator: "\n") {
            let numbers = line.split(separator: " ").compactMap { Double($0) }
            guard numbers.count >= 2 else { continue }
            let sign = numbers[numbers.count - 2], verify = numbers[numbers.count - 1]
            if line.hasPrefix("rsa 2048 bits") {
                (result.rsaSign, result.rsaVerify) = (sign, verify)
            } else if line.contains("ecdsa (nistp256)") {
                (result.ecdsaSign, result.ecdsaVerify) = (sign, verify)
            } else if line.contains("EdDSA (Ed25519)") {
                (result.eddsaSign, result.eddsaVerify) = (sign, verify)
            }
        }
        return result
    }
}

/// Hashes per second of the reference `argon2` command (Debian package `argon2`) with the
/// server's parameters, from the time it reports for each hash.
enum Argon2Reference {
    static func measure(runs: Int) -> Double? {
        var total = 0.0
        for _ in 0..<runs {
            guard let text = try? Subprocess.output(
                "argon2", ["saltsaltsaltsalt", "-id", "-t", "2", "-k", "19456", "-p", "1", "-l", "32"],
                input: "correct horse battery staple"),
                let line = text.split(separator: "\n").first(where: { $0.hasSuffix("seconds") }),
                let seconds = Double(line.split(separator: " ").first ?? "")
            else { return nil }
            total += seconds
        }
        return Double(runs) / total
    }
}

/// Runs a program found on PATH and returns its standard output.
enum Subprocess {
    static func output(_ program: String, _ arguments: [String], input: String? = nil) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        let out = Pipe()
        let inPipe = Pipe()
        process.standardOutput = out
        process.standardError = Pipe()
        process.standardInput = inPipe
        try process.run()
        if let input { inPipe.fileHandleForWriting.write(Data(input.utf8)) }
        try inPipe.fileHandleForWriting.close()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw StartupError("\(program) exited with \(process.terminationStatus)") }
        return String(decoding: data, as: UTF8.self)
    }
}
