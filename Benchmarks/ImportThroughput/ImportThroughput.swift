import Benchmark
import BenchmarkSupport
import Foundation
import SlackIndex
@_spi(Benchmarks) import SlackIndexStore

/// Messages in the generated exports (zip, seed `Fixtures.seed`): a small one for throughput, a larger one whose
/// peak memory shows memory that grows with the export (the 20k import's peak is mostly fixed costs).
private let small = 20_000
private let large = 200_000

/// Messages imported per second, recorded once per iteration (`.throughput` counts whole imports per second).
private let messagesPerSecond = BenchmarkMetric.custom(
    "Messages / s", polarity: .prefersLarger, useScalingFactor: false)

/// The archive's bytes after the import (its pages: the same for the same export and version, so a small tolerance
/// catches a format that stores more).
private let archiveBytes = BenchmarkMetric.custom("Archive bytes", polarity: .prefersSmaller, useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    // As `slackindex` does before anything opens an archive (~4% of the import's writer thread).
    Archive.disableSQLiteMemoryStatistics()
    let metrics: [BenchmarkMetric] = [
        .wallClock, .throughput, .mallocCountTotal, .peakMemoryResident, messagesPerSecond, archiveBytes,
    ]
    Benchmark.defaultConfiguration = .init(
        metrics: metrics,
        warmupIterations: 1,
        maxDuration: .seconds(10),
        maxIterations: 12,
        // `.throughput` is whole imports per second (1 or 2 here): allow one either way, judge by messages / s.
        // Peak memory does not drift with the VM's speed (200k: 93–97 MB across a run's iterations), so ±10%: an
        // import that holds a tenth more fails. Its CPU work is checked by `scripts/import-instructions.sh`.
        thresholds: Tolerance.standard(for: metrics).merging([
            .throughput: BenchmarkThresholds(absolute: [.p90: 1]),
            .peakMemoryResident: BenchmarkThresholds(relative: [.p90: 10]),
            messagesPerSecond: BenchmarkThresholds(relative: [.p90: 35]),
            archiveBytes: BenchmarkThresholds(relative: [.p90: 2]),
        ]) { $1 }
    )

    importBenchmark("Import 20k messages from zip", messages: small, iterations: 12)
    importBenchmark("Import 200k messages from zip", messages: large, iterations: 3)
}

/// One iteration: open a fresh empty archive (untimed), import the whole zip into it (timed), delete it (untimed).
private func importBenchmark(_ name: String, messages: Int, iterations: Int) {
    let zip = SetupValue<String>()
    Benchmark(
        name,
        configuration: .init(
            maxIterations: iterations, setup: { zip.set(try Fixtures.exportZip(messages: messages)) })
    ) { benchmark in
        let folder = try Fixtures.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            let archives = try benchmark.scaledIterations.map {
                try Archive(path: folder.appendingPathComponent("import-\($0).sqlite").path)
            }
            let path = zip.value
            var imported = 0
            let start = ContinuousClock.now
            benchmark.startMeasurement()
            for archive in archives {
                let summary = try Importer(archive: archive).importExport(at: path)
                imported += summary.messagesRead
                blackHole(summary)
            }
            benchmark.stopMeasurement()
            let elapsed = start.duration(to: .now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            benchmark.measurement(messagesPerSecond, Int((Double(imported) / max(seconds, 1e-9)).rounded()))
            if let archive = archives.first { benchmark.measurement(archiveBytes, Int(try archive.fileBytes())) }
        }
    }
}
