// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "slackindex",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SlackIndex", targets: ["SlackIndex", "SlackIndexStore"]),
        .executable(name: "slackindex", targets: ["slackindex"]),
        .executable(name: "slackindex-mcp", targets: ["slackindex-mcp"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        // Already in AsyncHTTPClient's graph; used for SHA-256 of `serve` tokens.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        // The Model Context Protocol's official Swift SDK: `slackindex mcp` (stdio transport, Server API).
        .package(url: "https://github.com/modelcontextprotocol/swift-sdk", exact: "0.12.1"),
        // Already in Hummingbird's graph: an in-process server stops through a graceful shutdown, not a task
        // cancel (a cancelled accept loop drops accepted connections and NIO traps in their writers' deinit).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // PostgreSQL's wire protocol for the shared-archive backend (`--db postgresql://…`): the store only.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // `serve --metrics`: swift-metrics (already in Hummingbird's graph) is the API the server counts through,
        // swift-prometheus the backend that writes `/metrics` (one new module: Prometheus). swift-log (already in
        // the graph) carries `serve`'s structured logs.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .systemLibrary(name: "CSlackZlib", providers: [.apt(["zlib1g-dev"])]),
        // Whole-buffer DEFLATE for the import's hot paths (zip entries, packed JSON): measured on the 1M export,
        // inflating its day files 3.5 -> 1.6 s, their CRC 0.8 -> 0.1 s, packing the JSON 8.4 -> 2.7 s (zlib's
        // streaming API stays for the web UI's gzip).
        // Declared in its own shim and linked by soname: the build needs Debian's runtime `libdeflate0` only.
        .systemLibrary(name: "CSlackDeflate", providers: [.apt(["libdeflate0"]), .brew(["libdeflate"])]),
        // Word-at-a-time byte tests shared by the importer and the store, as `static inline` C so both inline them.
        .systemLibrary(name: "CSlackBytes"),
        // The FTS5 tokenizer: the only code that includes ICU headers (they clash with Foundation in Swift).
        .target(
            name: "CSlackTokenizer",
            linkerSettings: [.linkedLibrary("icuuc"), .linkedLibrary("sqlite3")]
        ),
        // The store: the only module that imports GRDB, SQLite or PostgresNIO; both backends sit behind its roles.
        // Everything else reaches the archive through `Archive`'s intention-named operations.
        .target(
            name: "SlackIndexStore",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                "CSlackTokenizer",
                "CSlackDeflate",
                "CSlackBytes",
            ],
            swiftSettings: swiftSettings
        ),
        // Import, search, timelines, sync and bench workloads: pure Swift over the store's API.
        .target(
            name: "SlackIndex",
            dependencies: [
                "SlackIndexStore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                "CSlackDeflate",
                "CSlackBytes",
            ],
            swiftSettings: swiftSettings
        ),
        // The archive served as a Slack-compatible Web API subset (Hummingbird): its own module so the
        // library stays free of server code.
        .target(
            name: "SlackIndexServer",
            dependencies: [
                "SlackIndex",
                "CSlackZlib",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The archive as a Model Context Protocol server for AI assistants (`slackindex mcp`): its own module so
        // the library stays free of the SDK.
        .target(
            name: "SlackIndexMCP",
            dependencies: ["SlackIndex", .product(name: "MCP", package: "swift-sdk")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "slackindex",
            dependencies: [
                "SlackIndex",
                "SlackIndexServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                // `serve`'s startup and shutdown lines (`ServeLogHandler`).
                .product(name: "Logging", package: "swift-log"),
            ],
            // Compiled against the static runtime's modules too, whose autolink entries name what static
            // Foundation needs (CoreFoundation, its ICU, …): linking with `-static-stdlib` alone left those out.
            swiftSettings: swiftSettings + [.unsafeFlags(["-static-stdlib"], .when(configuration: .release))],
            // Release builds carry the Swift runtime and Foundation inside: a process then reaches its first line
            // ~5 ms sooner (no dynamic loading of libswiftCore and Foundation, fewer relocations): `search flimflam
            // --limit 5` on the 1M archive 13.8 / 13.9 ms against 18.9 / 19.0 ms, medians of 25, interleaved
            // (docs/performance.md). The binary then needs only the C libraries a fresh machine has.
            // Linked by GNU ld (gold cannot) with packed relative relocations (DT_RELR, glibc 2.36): the static
            // binary's ~150,000 relative relocations took 3.6 MB the loader read at every start; packed they take
            // 30 KB. `search flimflam --limit 5` on the 1M archive reaches its first line in 14.3 ms against 15.5 ms,
            // medians of 25, interleaved (page faults 1,610 → 1,465). Linking without PIE saved 2.3 ms but gives up
            // address randomisation of the executable, which parses untrusted exports and serves HTTP: not taken.
            linkerSettings: [
                .unsafeFlags(["-static-stdlib"], .when(configuration: .release)),
                .unsafeFlags(
                    ["-use-ld=bfd", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"],
                    .when(platforms: [.linux], configuration: .release)),
            ],
            plugins: ["CommitStamp"]
        ),
        // What `slackindex mcp` runs once it has checked its arguments: its own executable, because the MCP SDK
        // imports FoundationNetworking (libcurl and ~25 libraries behind it), which made every command's start
        // 10-20 ms slower while it was linked into `slackindex` (a Foundation program starts in 0.01 s, one that
        // imports FoundationNetworking in 0.02-0.03 s: docs/performance.md).
        .executableTarget(
            name: "slackindex-mcp",
            dependencies: ["SlackIndex", "SlackIndexMCP"],
            swiftSettings: swiftSettings
        ),
        // `slackindex --version`'s commit: `git rev-parse` before each build (Plugins/CommitStamp).
        .plugin(name: "CommitStamp", capability: .buildTool()),
        // The seeded mutation fuzzer over the parsers (`FuzzTarget`): `slackindex-fuzz TARGET SECONDS [SEED]`.
        .executableTarget(
            name: "slackindex-fuzz",
            dependencies: ["SlackIndex", "SlackIndexMCP"],
            swiftSettings: swiftSettings
        ),
        // What both test targets share: fixtures, oracles, fuzzers, the PostgreSQL test server (a test target, so
        // that it may `@testable import` the modules and is never built by `swift build`).
        .testTarget(
            name: "SlackIndexTestSupport",
            dependencies: [
                "SlackIndex", "SlackIndexStore", "SlackIndexServer",
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        // Fast unit tests: no subprocess, no browser, no server on a port, no PostgreSQL
        // (`swift test --filter SlackIndexTests`).
        .testTarget(
            name: "SlackIndexTests",
            dependencies: [
                "SlackIndex", "SlackIndexStore", "SlackIndexServer", "SlackIndexMCP", "SlackIndexTestSupport",
                "CSlackZlib",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The CLI and `serve` as processes, the Python SDKs, Chromium, PostgreSQL, the fuzz loops
        // (`swift test --filter SlackIndexIntegrationTests`).
        .testTarget(
            name: "SlackIndexIntegrationTests",
            // Depends on the executables so `swift test` builds them for the CLI tests.
            dependencies: [
                "SlackIndex", "SlackIndexStore", "SlackIndexServer", "SlackIndexMCP", "SlackIndexTestSupport",
                // The unit tests' own checks of an archive (`ImportTests.dump`, `SyncPagesTests.check`).
                "SlackIndexTests",
                "slackindex", "slackindex-mcp",
                "CSlackZlib",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "MCP", package: "swift-sdk"),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
