// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "auth-server",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "auth-server", targets: ["AuthServer"]),
        .executable(name: "auth-bench", targets: ["AuthBench"]),
        .executable(name: "webauthn-tool", targets: ["WebAuthnTool"]),
    ],
    targets: [
        // C system libraries (Debian packages), nothing but their C surface.
        .systemLibrary(
            name: "CLibPQ", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]),
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CArgon2", pkgConfig: "libargon2",
            providers: [.apt(["libargon2-dev"])]),

        // Pure and infrastructure modules.
        .target(name: "Crypto", dependencies: ["COpenSSL", "CArgon2"]),
        .target(name: "Postgres", dependencies: ["CLibPQ"]),
        .target(name: "HTTPServer", dependencies: ["COpenSSL"]),
        // Mail submission (SMTP client, MIME writer, addresses), knowing nothing of the product.
        .target(name: "SMTP", dependencies: ["HTTPServer"]),
        .target(name: "OIDC", dependencies: ["Crypto"]),
        .target(name: "WebAuthnCore", dependencies: ["Crypto"]),
        .target(name: "LoginPages"),

        // The application.
        .executableTarget(
            name: "AuthServer",
            dependencies: ["Crypto", "Postgres", "HTTPServer", "SMTP", "OIDC", "WebAuthnCore", "LoginPages"],
            plugins: ["BuildInfo"]),
        // Writes the release version (VERSION) and the git commit into the server at build time.
        .plugin(name: "BuildInfo", capability: .buildTool()),

        // Offline replay of captured passkey responses, for support; not part of the server.
        .executableTarget(name: "WebAuthnTool", dependencies: ["WebAuthnCore"]),

        // Load generator for bench/run (flows that need state between requests) and the
        // single-thread crypto and WebAuthn figures beside their references.
        .executableTarget(
            name: "AuthBench", dependencies: ["Crypto", "CArgon2", "WebAuthnCore", "OIDC"],
            path: "bench/Sources/AuthBench"),

        // Test support shared by several test targets: a software authenticator that makes
        // registrations and assertions with any flags, and a small test PKI.
        .target(
            name: "WebAuthnTestSupport", dependencies: ["Crypto", "WebAuthnCore"],
            path: "Tests/WebAuthnTestSupport"),
        // A scripted SMTP receiver on the loopback interface, for the client and the delivery queue.
        .target(name: "SMTPTestSupport", path: "Tests/SMTPTestSupport"),

        .testTarget(name: "CryptoTests", dependencies: ["Crypto", "WebAuthnTestSupport"]),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres"]),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer"]),
        .testTarget(name: "SMTPTests", dependencies: ["SMTP", "HTTPServer", "SMTPTestSupport"]),
        .testTarget(name: "OIDCTests", dependencies: ["OIDC", "Crypto"]),
        .testTarget(
            name: "WebAuthnCoreTests", dependencies: ["WebAuthnCore", "Crypto", "WebAuthnTestSupport"]),
        .testTarget(name: "LoginPagesTests", dependencies: ["LoginPages"]),
        .testTarget(
            name: "AuthServerTests",
            dependencies: [
                "AuthServer", "Postgres", "HTTPServer", "SMTP", "WebAuthnCore", "Crypto",
                "WebAuthnTestSupport",
                "SMTPTestSupport",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
