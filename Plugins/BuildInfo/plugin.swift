import Foundation
import PackagePlugin

/// Writes `BuildInfo.generated.swift` into the target before every build: the release version
/// from the `VERSION` file at the package root and the git commit of the checkout.
///
/// A prebuild command, so it runs on every `swift build` (a new commit is seen without a clean
/// build); the file is rewritten only when its content changes, so an unchanged checkout
/// recompiles nothing. It needs no network: without git or a `.git` directory (a source
/// tarball) the commit is "unknown".
@main struct BuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        // The compiler of the toolchain building this package (not whichever is first on PATH).
        let swiftc = (try? context.tool(named: "swiftc").url.path) ?? "swiftc"
        return [
            .prebuildCommand(
                displayName: "Recording the version and git commit of this build",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [
                    "-c", Self.script, "build-info",
                    context.package.directoryURL.path, output.path, swiftc,
                ],
                outputFilesDirectory: output)
        ]
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
