import Benchmark

/// How far a run's p90 may move from the committed threshold (`Thresholds/*.p90.json`) before
/// `benchmark thresholds check` reports it.
public enum Tolerance {
    /// Per-metric tolerances for the metrics a suite records (the library warns about thresholds for others).
    ///
    /// Time on a shared 2-core machine moves by 10-20% run to run; allocation counts are nearly exact.
    public static func standard(for metrics: [BenchmarkMetric]) -> [BenchmarkMetric: BenchmarkThresholds] {
        let all: [BenchmarkMetric: BenchmarkThresholds] = [
            .wallClock: BenchmarkThresholds(relative: [.p90: 35]),
            .throughput: BenchmarkThresholds(relative: [.p90: 35]),
            // Relative only: the library reports a deviation past either bound, so the absolute 20 allocations that
            // stood here failed the 200k import on run-to-run noise (a few dozen of its 7 million mallocs).
            .mallocCountTotal: BenchmarkThresholds(relative: [.p90: 5]),
            .peakMemoryResident: BenchmarkThresholds(relative: [.p90: 25]),
        ]
        return all.filter { metrics.contains($0.key) }
    }
}
