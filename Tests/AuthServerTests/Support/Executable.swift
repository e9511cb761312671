import Foundation

/// Runs the built `auth-server` executable, as an operator would.
struct Executable {
    struct Result {
        var status: Int32
        var output: String
        var error: String
    }

    /// `.build/<configuration>/auth-server`, beside the test bundle.
    static var url: URL { url(of: "auth-server") }

    /// `.build/<configuration>/PROGRAM`, beside the test bundle (the package's executables).
    static func url(of program: String) -> URL {
        let bundleDirectory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var candidate = bundleDirectory.appendingPathComponent(program)
        if !FileManager.default.fileExists(atPath: candidate.path) {
            // `swift test` runs `<name>PackageTests.xctest` from the same folder on Linux.
            candidate = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
                .appendingPathComponent(".build/debug/\(program)")
        }
        return candidate
    }

    static func run(
        program: String = "auth-server", _ arguments: [String], environment: [String: String]? = nil,
        input: String? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = url(of: program)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        // Standard input is written and standard error read on threads of their own while
        // standard output is read here: a child that fills one pipe (64 kB) while this side
        // waits on another would otherwise never finish.
        let errData = Drained()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
            try? stdin.fileHandleForWriting.close()
        }
        DispatchQueue.global().async(group: group) {
            errData.data = error.fileHandleForReading.readDataToEndOfFile()
        }
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, output: String(decoding: outData, as: UTF8.self),
            error: String(decoding: errData.data, as: UTF8.self))
    }

    /// What a reader thread read, handed over after `DispatchGroup.wait()`.
    private final class Drained: @unchecked Sendable {
        var data = Data()
    }
}
