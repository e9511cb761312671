import Foundation
import OIDC

/// `auth-server keys list|rotate --config FILE [--algorithm ALG]`.
enum KeysCommand {
    static let usage = """
        Usage:
          auth-server keys list --config FILE                  Show every signing key and its state
          auth-server keys rotate --config FILE [--algorithm ALG]
                                                               Add new keys (RS256 and ES256, or ALG): published
                                                               now, signing after signing_keys.pre_publication_seconds
        """

    static func run(_ args: [String], output: TextOutput) -> Int32 {
        guard let subcommand = args.first, subcommand == "list" || subcommand == "rotate" else {
            if args.first == "--help" || args.first == "-h" {
                output.print(usage)
                return 0
            }
            output.error(usage)
            return 2
        }
        var rest = Array(args.dropFirst())
        var algorithms: [JWSAlgorithm]?
        if subcommand == "rotate", let index = rest.firstIndex(of: "--algorithm") {
            guard index + 1 < rest.count, let algorithm = JWSAlgorithm(rawValue: rest[index + 1]) else {
                output.error("auth-server keys rotate: --algorithm must be one of RS256, PS256, ES256, EdDSA")
                return 2
            }
            algorithms = [algorithm]
            rest.removeSubrange(index...(index + 1))
        }
        return CommandLineTool.withConfigOption(rest, command: "keys \(subcommand)", output: output) { path in
            let configuration: Configuration
            do {
                configuration = try ConfigurationLoader.load(path: path).0
            } catch {
                output.error("\(path): the configuration has errors:\n\(error)")
                return 1
            }
            do {
                let database = try Database.open(configuration, log: Log(write: { _ in }))
                defer { database.close() }
                let ring = try database.signingKeys(configuration, environment: ProcessInfo.processInfo.environment)
                if subcommand == "rotate" {
                    for key in try ring.rotate(algorithms) {
                        output.print("added \(key.algorithm.rawValue) key \(key.kid), signing from \(format(key.activatesAt))")
                    }
                } else {
                    output.print(table(try ring.allKeys(), now: Date()))
                }
                return 0
            } catch {
                output.error("auth-server keys \(subcommand): \(ServeCommand.describe(error))")
                return 1
            }
        }
    }

    static func table(_ keys: [SigningKeyRing.Key], now: Date) -> String {
        var lines = [pad(["KID", "ALG", "STATE", "ACTIVATES", "RETIRES", "EXPIRES"])]
        for key in keys {
            lines.append(
                pad([
                    key.kid, key.algorithm.rawValue, key.state(at: now), format(key.activatesAt),
                    key.retiresAt.map(format) ?? "-", key.expiresAt.map(format) ?? "-",
                ]))
        }
        return lines.joined(separator: "\n")
    }

    private static func pad(_ columns: [String]) -> String {
        let widths = [44, 6, 8, 21, 21, 20]
        return zip(columns, widths).map { $0.padding(toLength: max($1, $0.count), withPad: " ", startingAt: 0) }
            .joined(separator: " ").trimmingCharacters(in: .whitespaces)
    }

    private static func format(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false))
    }
}
