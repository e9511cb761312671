import Foundation
import PackagePlugin

/// Writes `BuildInfo.generated.swift` into the target at build time: the release version from
/// the `VERSION` file at the package root and the git commit of the checkout.
///
/// A build command with declared inputs rather than a prebuild command: SwiftPM runs prebuild
/// commands only when it plans the build again, which a new commit alone does not cause, so the
/// binary would keep naming the previous commit. This command runs whenever the version file,
/// the checkout's HEAD, reflog or index, or a source file changed since the last build; the file
/// is rewritten only when its content changes, so an unchanged checkout recompiles nothing. It
/// needs no network: without git or a `.git` directory (a source tarball) the commit is
/// "unknown".
@main struct BuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let root = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        // The compiler of the toolchain building this package (not whichever is first on PATH).
        let swiftc = (try? context.tool(named: "swiftc").url.path) ?? "swiftc"
        // The command runs again when one of these changes: the version, where HEAD points and
        // the reflog every commit, checkout or reset appends to, the index, and the sources (an
        // edit makes the checkout dirty).
        var inputs = [root.appending(path: "VERSION")]
        if let git = Self.gitDirectory(root) {
            inputs += ["HEAD", "logs/HEAD", "index"].map { git.appending(path: $0) }
        }
        for case let module as SourceModuleTarget in context.package.targets {
            inputs += module.sourceFiles.map(\.url)
        }
        inputs = inputs.filter { FileManager.default.fileExists(atPath: $0.path) }
        return [
            .buildCommand(
                displayName: "Recording the version and git commit of this build",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", Self.script, "build-info", root.path, output.path, swiftc],
                inputFiles: inputs,
                outputFiles: [output.appending(path: "BuildInfo.generated.swift")])
        ]
    }

    /// The checkout's git directory: `.git`, or where a `.git` file points (a worktree).
    static func gitDirectory(_ root: URL) -> URL? {
        let dotGit = root.appending(path: ".git")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: dotGit.path, isDirectory: &isDirectory) else {
            return nil
        }
        if isDirectory.boolValue { return dotGit }
        guard let text = try? String(contentsOf: dotGit, encoding: .utf8),
            let line = text.split(separator: "\n").first(where: { $0.hasPrefix("gitdir: ") })
        else { return nil }
        let path = String(line.dropFirst("gitdir: ".count)).trimmingCharacters(in: .whitespaces)
        return path.hasPrefix("/") ? URL(fileURLWithPath: path) : root.appending(path: path)
    }

    /// `$1`: the package root; `$2`: the directory for the generated file; `$3`: the Swift
    /// compiler. Values are reduced to characters that need no escaping in a Swift string literal.
    static let script = #"""
        set -u
        root="$1"; out="$2"; swiftc="$3"
        PATH="${PATH:-/usr/bin:/bin}"
        mkdir -p "$out"
        clean() { tr -cd 'A-Za-z0-9._+-' | cut -c1-100; }
        version=$(head -n 1 "$root/VERSION" 2>/dev/null | clean)
        [ -n "$version" ] || version=unknown
        commit=unknown; describe=unknown
        if command -v git >/dev/null 2>&1 && git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
            commit=$(git -C "$root" rev-parse --verify -q HEAD 2>/dev/null | clean)
            describe=$(git -C "$root" describe --always --dirty 2>/dev/null | clean)
            case "$describe" in *-dirty) commit="$commit-dirty" ;; esac
            [ -n "$commit" ] || commit=unknown
            [ -n "$describe" ] || describe=unknown
        fi
        swift=$("$swiftc" --version 2>/dev/null \
            | sed -n 's/.*Swift version \([^ ]*\).*/\1/p' | head -n 1 | clean)
        [ -n "$swift" ] || swift=unknown
        tmp="$out/.BuildInfo.swift.tmp"
        cat > "$tmp" <<SWIFT
        // Generated at build time from VERSION and git; not checked in.
        enum GeneratedBuildInfo {
            static let version = "$version"
            static let commit = "$commit"
            static let describe = "$describe"
            static let swift = "$swift"
        }
        SWIFT
        if cmp -s "$tmp" "$out/BuildInfo.generated.swift"; then
            rm -f "$tmp"
        else
            mv "$tmp" "$out/BuildInfo.generated.swift"
        fi
        """#
}
