import Foundation
import WebAuthnCore

/// `webauthn-tool verify|inspect FILE`: replays a captured passkey response offline, so that
/// support engineers can answer "why does this passkey fail?" without the server. A program
/// of its own: it needs only WebAuthnCore, and nothing of it ships in the server.
enum WebAuthnTool {
    static let usage = """
        Usage:
          webauthn-tool verify FILE    Run the registration or authentication ceremony described
                                       by FILE; prints the result or the failed step as JSON.
                                       Exit 0 verified, 1 verification failed, 2 unusable document
          webauthn-tool inspect FILE   Print a captured response (or a verify document) decoded

        FILE is JSON: {"ceremony": "registration"|"authentication", "response": {…},
        "expected_challenge", "origins", "rp_id", "require_user_verification",
        "require_user_presence", "allowed_algorithms", "credential_public_key", "sign_count", "now"}
        (see docs/examples/webauthn-authentication.json)
        """

    static func run(_ args: [String]) -> Int32 {
        guard args.count == 2, ["verify", "inspect"].contains(args[0]) else {
            if args.contains("--help") || args.contains("-h") {
                print(usage)
                return 0
            }
            printError(usage)
            return 2
        }
        guard let data = FileManager.default.contents(atPath: args[1]) else {
            printError("webauthn-tool \(args[0]): cannot read \(args[1])")
            return 2
        }
        let result =
            args[0] == "verify"
            ? OfflineVerification.run(document: Array(data))
            : ResponseInspection.inspect(document: Array(data))
        print(result.output)
        return result.exitCode
    }

    static func printError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

exit(WebAuthnTool.run(Array(CommandLine.arguments.dropFirst())))
