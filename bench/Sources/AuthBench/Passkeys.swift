import Crypto
import Foundation
import WebAuthnCore

/// Software passkeys for the sign-in benchmark: ES256 keys whose credential id and user
/// handle are derived from their index, so pgbench scripts can name the same rows.
struct BenchPasskey: Sendable {
    let index: Int
    let key: P256.Signing.PrivateKey
    let credentialID: [UInt8]
    let userHandle: [UInt8]

    init(index: Int, key: P256.Signing.PrivateKey) {
        self.index = index
        self.key = key
        credentialID = SHA256.hash(data: Array("bench-cred-\(index)".utf8)).bytes
        userHandle = SHA256.hash(data: Array("bench-user-\(index)".utf8)).bytes
    }

    /// The body of `/api/passkeys/authentication/finish`, written directly: every value is a
    /// UUID, base64url or a fixed word, so nothing needs escaping, and the load generator
    /// spends its CPU on signing rather than on JSONSerialization.
    func finishBody(challengeID: String, challenge: String, origin: String, rpID: String) throws -> [UInt8] {
        var authenticatorData = SHA256.hash(data: Array(rpID.utf8)).bytes
        authenticatorData.append(0x05)  // UP | UV
        authenticatorData += [0, 0, 0, 0]  // sign count 0: counters not supported
        let clientData = Array(
            #"{"type":"webauthn.get","challenge":"\#(challenge)","origin":"\#(origin)","crossOrigin":false}"#.utf8)
        let signature = try key.signature(for: authenticatorData + SHA256.hash(data: clientData).bytes)
        let id = Base64URL.encode(credentialID)
        let body =
            #"{"challenge_id":"\#(challengeID)","credential":{"id":"\#(id)","rawId":"\#(id)","type":"public-key","#
            + #""authenticatorAttachment":"platform","clientExtensionResults":{},"response":{"#
            + #""clientDataJSON":"\#(Base64URL.encode(clientData))","authenticatorData":"\#(Base64URL.encode(authenticatorData))","#
            + #""signature":"\#(Base64URL.encode(signature.derRepresentation))","userHandle":"\#(Base64URL.encode(userHandle))"}}}"#
        return Array(body.utf8)
    }

    static func load(_ path: String) throws -> [BenchPasskey] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            let fields = line.split(separator: " ")
            guard fields.count == 2, let index = Int(fields[0]) else { throw HTTPClientError.malformed }
            return BenchPasskey(index: index, key: try P256.Signing.PrivateKey(rawRepresentation: try hexBytes(fields[1])))
        }
    }
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

func hexBytes(_ text: some StringProtocol) throws -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        guard let byte = UInt8(text[index..<next], radix: 16) else { throw HTTPClientError.malformed }
        bytes.append(byte)
        index = next
    }
    return bytes
}

/// `passkeys-setup`: the keys (one file) and the SQL that registers them, each on its own
/// account (another file), as a passkey sign-up would have stored them.
func passkeysSetup(count: Int, directory: String) throws {
    var keys = ""
    var sql = "BEGIN;\n"
    for index in 0..<count {
        let passkey = BenchPasskey(index: index, key: try P256.Signing.PrivateKey())
        keys += "\(index) \(hex(try passkey.key.rawRepresentation))\n"
        let (x, y) = try passkey.key.publicKey.rawCoordinates
        let cose = CBOREncoder.encode(COSEKey.ec2P256(x: x, y: y).cbor)
        let account = UUID().uuidString.lowercased()
        sql += """
            INSERT INTO accounts (id, display_name, webauthn_user_handle) VALUES ('\(account)', 'Bench \(index)', '\\x\(hex(passkey.userHandle))');
            INSERT INTO account_emails (id, account_id, email, normalized_email) VALUES (gen_random_uuid(), '\(account)', 'passkey\(index)@bench.example', 'passkey\(index)@bench.example');
            INSERT INTO passkey_credentials (id, account_id, credential_id, public_key, algorithm, backup_eligible, backed_up, transports, aaguid, name)
            VALUES (gen_random_uuid(), '\(account)', '\\x\(hex(passkey.credentialID))', '\\x\(hex(cose))', -7, false, false, '{internal}', '\\x\(String(repeating: "00", count: 16))', 'bench');

            """
    }
    sql += "COMMIT;\n"
    try keys.write(toFile: directory + "/passkeys.txt", atomically: true, encoding: .utf8)
    try sql.write(toFile: directory + "/passkeys.sql", atomically: true, encoding: .utf8)
}

/// `passkey-signin`: every thread repeats authentication start → sign → finish with its own
/// passkeys (so sign counts never race) for `seconds`. Latency is that of the pair.
func passkeySignIn(
    port: UInt16, passkeys: [BenchPasskey], connections: Int, seconds: Double, origin: String, rpID: String
) -> String {
    let measurements = Measurements()
    let deadline = monotonicSeconds() + seconds
    let started = monotonicSeconds()
    runThreads(connections) { worker in
        let connection = HTTPConnection(port: port)
        let mine = passkeys.enumerated().filter { $0.offset % connections == worker }.map(\.element)
        var latencies: [Double] = []
        var ok = 0
        var errors = 0
        var statuses: [Int: Int] = [:]
        guard !mine.isEmpty,
            let csrfReply = try? connection.request("GET", "/api/csrf"),
            let cookie = csrfReply.cookie("csrf") ?? csrfReply.cookie("__Host-csrf"),
            let token = csrfReply.json?["csrf_token"] as? String
        else {
            measurements.record([], ok: 0, errors: 1, statuses: [:])
            return
        }
        let headers = [("Content-Type", "application/json"), ("Cookie", cookie), ("X-CSRF-Token", token)]
        var turn = 0
        while monotonicSeconds() < deadline {
            let passkey = mine[turn % mine.count]
            turn += 1
            let begin = monotonicSeconds()
            do {
                let start = try connection.request(
                    "POST", "/api/passkeys/authentication/start", headers: headers, body: Array("{}".utf8))
                guard start.status == 200, let challengeID = jsonString(start.body, key: "challenge_id"),
                    let challenge = jsonString(start.body, key: "challenge")
                else {
                    errors += 1
                    statuses[start.status, default: 0] += 1
                    continue
                }
                let finish = try connection.request(
                    "POST", "/api/passkeys/authentication/finish", headers: headers,
                    body: try passkey.finishBody(challengeID: challengeID, challenge: challenge, origin: origin, rpID: rpID))
                statuses[finish.status, default: 0] += 1
                if finish.status == 200 {
                    ok += 1
                    latencies.append(finish.receivedAt - begin)
                } else {
                    errors += 1
                }
            } catch {
                errors += 1
            }
        }
        measurements.record(latencies, ok: ok, errors: errors, statuses: statuses)
    }
    return measurements.summary(seconds: monotonicSeconds() - started)
}

/// The string value of the first `"key":"…"` in compact JSON whose value has no escapes (a
/// UUID or base64url, as in the start reply); nil when absent.
func jsonString(_ body: [UInt8], key: String) -> String? {
    let needle = Array("\"\(key)\":\"".utf8)
    guard body.count > needle.count else { return nil }
    var index = 0
    while index + needle.count <= body.count {
        if body[index] == needle[0] && body[index..<(index + needle.count)].elementsEqual(needle) {
            let start = index + needle.count
            guard let end = body[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
            return String(decoding: body[start..<end], as: UTF8.self)
        }
        index += 1
    }
    return nil
}
