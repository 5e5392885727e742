import Benchmark
import BenchmarkSupport
import Foundation
import SlackIndex

/// Messages in the generated export (zip, seed `Fixtures.seed`).
private let messages = 20_000

let benchmarks: @Sendable () -> Void = {
    let metrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident]
    Benchmark.defaultConfiguration = .init(
        metrics: metrics,
        warmupIterations: 1,
        maxDuration: .seconds(10),
        maxIterations: 12,
        thresholds: Tolerance.standard(for: metrics)
    )

    let zip = SetupValue<String>()

    // One iteration: open a fresh empty archive (untimed), import the whole zip into it (timed), delete it (untimed).
    Benchmark(
        "Import 20k messages (zip)",
        configuration: .init(setup: { zip.set(try Fixtures.exportZip(messages: messages)) })
    ) { benchmark in
        let folder = try Fixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let archives = try benchmark.scaledIterations.map {
                try Archive(path: folder.appendingPathComponent("import-\($0).sqlite").path)
            }
            let path = zip.value
            benchmark.startMeasurement()
            for archive in archives {
                blackHole(try Importer(archive: archive).importExport(at: path))
            }
            benchmark.stopMeasurement()
        }
    }
}
