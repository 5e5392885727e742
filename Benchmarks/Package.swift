// swift-tools-version:6.1
// Benchmarks for slackindex, kept in their own package so the benchmark dependencies never reach the product.
// Run from this folder: `swift package --disable-sandbox benchmark` (see README.md).
import PackageDescription

/// One executable target per suite, at `<Suite>/<Suite>.swift`, plus the shared fixture code.
@MainActor
func suite(_ name: String) -> Target {
    .executableTarget(
        name: name,
        dependencies: [
            .product(name: "Benchmark", package: "benchmark"),
            .product(name: "SlackIndex", package: "slackindex"),
            "BenchmarkSupport",
        ],
        path: name,
        swiftSettings: [
            .enableUpcomingFeature("ExistentialAny"),
            .enableUpcomingFeature("MemberImportVisibility"),
        ],
        plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
}

let package = Package(
    name: "slackindex-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "slackindex", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // Fixtures shared by the suites: generated exports and imported archives, built outside the timed part.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "SlackIndex", package: "slackindex"),
            ],
            path: "Support",
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]
        ),
        suite("ImportThroughput"),
        suite("SearchLatency"),
        suite("TimelinePages"),
        suite("LRUCacheOps"),
    ],
    swiftLanguageModes: [.v6]
)
