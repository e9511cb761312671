import Crypto
import Foundation
import OIDC

/// DPoP (RFC 9449) costs: the proof check alone beside one bare ES256 verification (the
/// floor: a proof check is one verification plus parsing), and the refresh grant at `/token`
/// with and without a proof, closed loop, one rotation chain per connection.
enum DPoPBenchmark {
    /// A client's proof signer: a P-256 key and its public JWK.
    struct Client {
        let key: P256.Signing.PrivateKey
        let jwk: String

        init() throws {
            key = try P256.Signing.PrivateKey()
            let (x, y) = try key.publicKey.rawCoordinates
            jwk = #"{"kty":"EC","crv":"P-256","x":"\#(Base64URL.encode(x))","y":"\#(Base64URL.encode(y))"}"#
        }

        func proof(method: String, uri: String, now: Date = Date()) throws -> String {
            let header = #"{"typ":"dpop+jwt","alg":"ES256","jwk":\#(jwk)}"#
            let jti = Base64URL.encode(SecureRandom.bytes(count: 16))
            let claims =
                #"{"jti":"\#(jti)","htm":"\#(method)","htu":"\#(uri)","iat":\#(Int(now.timeIntervalSince1970))}"#
            let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
            return input + "." + Base64URL.encode(try key.signature(for: Array(input.utf8)).rawRepresentation)
        }
    }

    /// `auth-bench dpop`: single-threaded rates, best of `rounds`, and the goal
    /// "proof check < one ES256 verification + 10 %".
    static func ceiling(seconds: Double, rounds: Int = 3) throws -> String {
        let client = try Client()
        let uri = "https://id.example.com/token"
        let now = Date()
        let proof = try client.proof(method: "POST", uri: uri, now: now)
        let request = DPoPRequest(method: "POST", uri: uri)
        let cached = DPoPRequest(method: "POST", uri: uri, keys: DPoPKeyCache())
        // The same signing input and key as the proof: the bare verification it contains.
        let parts = proof.split(separator: ".")
        let input = Array((parts[0] + "." + parts[1]).utf8)
        let signature = try P256.Signing.ECDSASignature(
            rawRepresentation: try Base64URL.decode(String(parts[2])))
        let publicKey = client.key.publicKey
        guard publicKey.isValidSignature(signature, for: input),
            (try? DPoPProofVerifier.verify(proof, request: request, now: now)) != nil
        else { throw CryptoError.openSSLFailure("the benchmark's proof does not verify") }

        var es256 = 0.0
        var check = 0.0
        var cold = 0.0
        for _ in 0..<rounds {
            es256 = max(
                es256,
                try CryptoBenchmark.rate(seconds) { _ = publicKey.isValidSignature(signature, for: input) })
            check = max(
                check,
                try CryptoBenchmark.rate(seconds) {
                    _ = try DPoPProofVerifier.verify(proof, request: cached, now: now)
                })
            cold = max(
                cold,
                try CryptoBenchmark.rate(seconds) {
                    _ = try DPoPProofVerifier.verify(proof, request: request, now: now)
                })
        }
        // Time of a proof check ÷ time of one verification.
        let ratio = es256 / check
        return [
            "DPoP proof check, single-threaded, operations per user-CPU-second, best of \(rounds) rounds of \(Int(seconds)) s",
            "ES256 verify (bare)                                   \(String(format: "%.0f", es256))",
            "DPoPProofVerifier.verify, key seen before (the usual) \(String(format: "%.0f", check))",
            "DPoPProofVerifier.verify, a key's first proof         \(String(format: "%.0f", cold))  (time ratio \(String(format: "%.2f", es256 / cold)))",
            "proof check time / ES256 verify time                  \(String(format: "%.2f", ratio))  goal < 1.10: \(ratio < 1.10 ? "met" : "not met")",
        ].joined(separator: "\n")
    }
}

/// `auth-bench refresh`: the refresh grant in a closed loop. Each connection starts with one of
/// `tokens` and always sends the token the previous answer rotated to; with `dpop`, every
/// request carries a fresh ES256 proof for `htu` (signed by the load generator, so its cost is
/// on the same cores).
func refreshLoad(
    port: UInt16, tokens: [String], authorization: String, dpopURI: String?, connections: Int, seconds: Double
) -> String {
    let measurements = Measurements()
    let started = monotonicSeconds()
    let deadline = started + seconds
    runThreads(connections) { worker in
        guard worker < tokens.count, let client = try? DPoPBenchmark.Client() else {
            measurements.record([], ok: 0, errors: 1, statuses: [:])
            return
        }
        let connection = HTTPConnection(port: port)
        var token = tokens[worker]
        var latencies: [Double] = []
        var ok = 0
        var errors = 0
        var statuses: [Int: Int] = [:]
        while monotonicSeconds() < deadline {
            var headers = [
                ("Authorization", authorization), ("Content-Type", "application/x-www-form-urlencoded"),
            ]
            let begin = monotonicSeconds()
            do {
                if let dpopURI { headers.append(("DPoP", try client.proof(method: "POST", uri: dpopURI))) }
                let reply = try connection.request(
                    "POST", "/token", headers: headers,
                    body: Array("grant_type=refresh_token&refresh_token=\(token)".utf8))
                statuses[reply.status, default: 0] += 1
                guard reply.status == 200, let next = jsonString(reply.body, key: "refresh_token") else {
                    errors += 1
                    break  // the chain is broken: this connection stops
                }
                token = next
                ok += 1
                latencies.append(reply.receivedAt - begin)
            } catch {
                errors += 1
                break
            }
        }
        measurements.record(latencies, ok: ok, errors: errors, statuses: statuses)
    }
    return measurements.summary(seconds: monotonicSeconds() - started)
}
