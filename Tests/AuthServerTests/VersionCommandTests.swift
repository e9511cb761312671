import Foundation
import Testing

@testable import AuthServer

/// `auth-server version` names the build: the release version from VERSION and the commit of
/// this checkout, embedded at build time, as git reports them now.
@Suite struct VersionCommandTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func git(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", root.path] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = Pipe()
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "git \(arguments)")
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(arguments: ["--version", "version"])
    func printsTheVersionAndTheCommitOfThisCheckout(_ argument: String) throws {
        let result = try Executable.run([argument])
        #expect(result.status == 0, "\(result.error)")
        let version = try String(contentsOf: Self.root.appendingPathComponent("VERSION"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let head = try Self.git(["rev-parse", "HEAD"])
        let describe = try Self.git(["describe", "--always", "--dirty"])
        let dirty = describe.hasSuffix("-dirty")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "auth-server \(version)", "\(result.output)")
        #expect(lines.contains("commit: \(head)\(dirty ? "-dirty" : "")"), "\(result.output)")
        #expect(lines.contains("git describe: \(describe)"), "\(result.output)")
        #expect(lines.contains { $0.hasPrefix("swift: 6.") }, "\(result.output)")
        #expect(lines.contains { $0.hasPrefix("openssl: 3.") }, "\(result.output)")
    }

    @Test func anExtraArgumentIsAUsageErrorAndHelpIsUsage() throws {
        let result = try Executable.run(["version", "--json"])
        #expect(result.status == 2)
        #expect(result.error.contains("unexpected argument \"--json\""))
        let help = try Executable.run(["version", "--help"])
        #expect(help.status == 0)
        #expect(help.output.hasPrefix("Usage: auth-server version"))
    }

    @Test func theFactsMatchTheLibrariesLoaded() {
        let build = BuildInfo.current
        #expect(build.version == GeneratedBuildInfo.version)
        #expect(build.openSSL.split(separator: ".").count == 3, "\(build.openSSL)")
        #expect(build.swift != "unknown")
    }
}
