import Benchmark
import BenchmarkSupport
@_spi(Benchmarks) import SlackIndex

/// Messages in the generated and imported export (seed `Fixtures.seed`).
private let messages = 50_000

/// The engine over the imported archive and the library's built-in 200-query workload drawn from it.
private struct SearchFixture: Sendable {
    var engine: SearchEngine
    var workload: [SearchBench.Query]
    var options: SearchOptions

    init() throws {
        let archive = try Fixtures.archive(messages: messages)
        let bench = SearchBench(archive: archive)
        engine = SearchEngine(archive: archive)
        workload = try bench.builtInWorkload()
        options = SearchOptions()
        options.limit = bench.limit
    }

    /// The workload's first query of `kind` (the workload is drawn with a fixed seed, so always the same text).
    func query(_ kind: String) -> String {
        guard let query = workload.first(where: { $0.kind == kind }) else {
            fatalError("The built-in workload has no '\(kind)' query.")
        }
        return query.text
    }
}

let benchmarks: @Sendable () -> Void = {
    // As `slackindex` does before anything opens an archive.
    Archive.disableSQLiteMemoryStatistics()
    let metrics: [BenchmarkMetric] = [.wallClock, .mallocCountTotal]
    Benchmark.defaultConfiguration = .init(
        metrics: metrics,
        warmupIterations: 2,
        maxDuration: .seconds(2),
        maxIterations: 1_000,
        thresholds: Tolerance.standard(for: metrics)
    )

    let fixture = SetupValue<SearchFixture>()
    let configuration = Benchmark.Configuration(setup: { fixture.set(try SearchFixture()) })

    // The whole mixed workload (rare, medium, common, phrase, prefix, filter, filter-only), each query once.
    Benchmark(
        "Workload built-in 200 queries",
        configuration: .init(maxDuration: .seconds(6), maxIterations: 30, setup: configuration.setup)
    ) { benchmark in
        let fixture = fixture.value
        for _ in benchmark.scaledIterations {
            for query in fixture.workload {
                blackHole(try fixture.engine.search(query.text, options: fixture.options))
            }
        }
    }

    for (name, kind) in [
        ("Rare word", "rare"), ("Common word", "common"), ("Phrase", "phrase"), ("Prefix", "prefix"),
        ("Filter only", "filter-only"),
    ] {
        Benchmark(name, configuration: configuration) { benchmark in
            let fixture = fixture.value
            let text = fixture.query(kind)
            for _ in benchmark.scaledIterations {
                blackHole(try fixture.engine.search(text, options: fixture.options))
            }
        }
    }
}
