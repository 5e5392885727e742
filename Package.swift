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
        .library(name: "SlackIndex", targets: ["SlackIndex"]),
        .executable(name: "slackindex", targets: ["slackindex"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
    ],
    targets: [
        .systemLibrary(name: "CSlackZlib", providers: [.apt(["zlib1g-dev"])]),
        // The FTS5 tokenizer: the only code that includes ICU headers (they clash with Foundation in Swift).
        .target(
            name: "CSlackTokenizer",
            linkerSettings: [.linkedLibrary("icuuc"), .linkedLibrary("sqlite3")]
        ),
        .target(
            name: "SlackIndex",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                "CSlackZlib",
                "CSlackTokenizer",
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "slackindex",
            dependencies: [
                "SlackIndex",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SlackIndexTests",
            // Depends on the executable so `swift test` builds it for the CLI tests.
            dependencies: ["SlackIndex", "slackindex"],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
