import Foundation

/// The load generator of bench/run, for flows that need state between requests.
let usage = """
    Usage:
      auth-bench passkeys-setup --count N --dir DIR
          ES256 keys (DIR/passkeys.txt) and the SQL registering them (DIR/passkeys.sql)
      auth-bench passkey-signin --port P --keys FILE --origin O --rp-id R [--connections C] [--seconds S]
          authentication start + finish in a loop, one new session each
      auth-bench rate --port P --path PATH --rate R [--header 'Name: value']... [--connections C] [--seconds S]
          GET at a fixed rate (open loop); latency from each request's due time
      auth-bench crypto [--seconds S]
          our signatures and Argon2id per second beside openssl speed and bare libargon2
      auth-bench webauthn [--seconds S]
          assertion verifications per second beside bare ES256 verifications
      auth-bench dpop [--seconds S]
          DPoP proof checks per second beside bare ES256 verifications
      auth-bench refresh --port P --tokens FILE --authorization 'Basic …' [--dpop HTU] [--connections C] [--seconds S]
          the refresh grant in a closed loop, each connection following its rotation chain;
          with --dpop, a fresh ES256 proof for HTU on every request
      auth-bench codeflow --authorize-url URL [--cookie 'name=value']... --token-url URL --authorization 'Basic …'
              --redirect-uri URI [--code-verifier V] [--connections C] [--seconds S]
          the code flow of a signed-in browser in a closed loop: GET the authorization URL (with its
          fixed code_challenge, if any) → redirect with code → POST the token URL; latency of both
    Each load prints one line: result rps=… p50_ms=… p99_ms=… ok=… errors=… statuses=…
    """

let command = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "--help"
let arguments = Array(CommandLine.arguments.dropFirst(2))

func option(_ name: String, in arguments: [String] = arguments) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
func options(_ name: String, in arguments: [String] = arguments) -> [String] {
    arguments.indices.filter { arguments[$0] == name && $0 + 1 < arguments.count }.map { arguments[$0 + 1] }
}
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("auth-bench: \(message)\n".utf8))
    exit(2)
}

let port = option("--port").flatMap(UInt16.init)
let connections = max(1, option("--connections").flatMap(Int.init) ?? 8)
let seconds = min(600, max(0.5, option("--seconds").flatMap(Double.init) ?? 10))
/// The single-thread figures (crypto, webauthn): seconds of CPU time per measurement.
let cpuSeconds = option("--seconds").flatMap(Double.init).flatMap { $0 > 0 ? $0 : nil } ?? 3

switch command {
case "passkeys-setup":
    guard let count = option("--count").flatMap(Int.init), count > 0, count <= 100_000,
        let dir = option("--dir")
    else {
        fail("passkeys-setup needs --count (1…100000) and --dir")
    }
    do { try passkeysSetup(count: count, directory: dir) } catch { fail("\(error)") }
case "passkey-signin":
    guard let port, let keys = option("--keys"), let origin = option("--origin"), let rpID = option("--rp-id")
    else {
        fail("passkey-signin needs --port, --keys, --origin and --rp-id")
    }
    let passkeys: [BenchPasskey]
    do { passkeys = try BenchPasskey.load(keys) } catch { fail("cannot read \(keys): \(error)") }
    print(
        passkeySignIn(
            port: port, passkeys: passkeys, connections: connections, seconds: seconds, origin: origin,
            rpID: rpID))
case "rate":
    guard let port, let path = option("--path"), let rate = option("--rate").flatMap(Double.init), rate > 0,
        rate <= 100_000
    else {
        fail("rate needs --port, --path and --rate (requests/s)")
    }
    let headers = options("--header").compactMap { header -> (String, String)? in
        guard let colon = header.firstIndex(of: ":") else { return nil }
        return (
            String(header[..<colon]),
            header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        )
    }
    print(
        rateLoad(
            port: port, path: path, headers: headers, rate: rate, seconds: seconds, connections: connections))
case "crypto":
    do {
        print(
            try CryptoBenchmark.crypto(
                seconds: cpuSeconds))
    } catch {
        FileHandle.standardError.write(Data("auth-bench crypto: \(error)\n".utf8))
        exit(1)
    }
case "webauthn":
    print(WebAuthnBenchmark.run(seconds: cpuSeconds))
case "dpop":
    do { print(try DPoPBenchmark.ceiling(seconds: cpuSeconds)) } catch { fail("dpop: \(error)") }
case "refresh":
    guard let port, let file = option("--tokens"), let authorization = option("--authorization") else {
        fail("refresh needs --port, --tokens and --authorization")
    }
    guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { fail("cannot read \(file)") }
    let tokens = text.split(separator: "\n").map(String.init)
    guard tokens.count >= connections else { fail("refresh needs one token per connection in \(file)") }
    print(
        refreshLoad(
            port: port, tokens: tokens, authorization: authorization, dpopURI: option("--dpop"),
            connections: connections, seconds: seconds))
case "codeflow":
    guard let authorizeURL = option("--authorize-url"),
        let authorize = CodeFlowBenchmark.Endpoint(url: authorizeURL),
        let tokenURL = option("--token-url"), let token = CodeFlowBenchmark.Endpoint(url: tokenURL),
        let authorization = option("--authorization"), let redirectURI = option("--redirect-uri")
    else {
        fail(
            "codeflow needs --authorize-url and --token-url (http://127.0.0.1:PORT/…), --authorization and --redirect-uri"
        )
    }
    let flow = CodeFlowBenchmark(
        authorize: authorize, token: token, cookies: options("--cookie"), authorization: authorization,
        redirectURI: redirectURI, codeVerifier: option("--code-verifier"))
    print(flow.run(connections: connections, seconds: seconds))
default:
    print(usage)
    exit(command == "--help" ? 0 : 2)
}
