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
            .mallocCountTotal: BenchmarkThresholds(relative: [.p90: 5], absolute: [.p90: 20]),
            .peakMemoryResident: BenchmarkThresholds(relative: [.p90: 25]),
        ]
        return all.filter { metrics.contains($0.key) }
    }
}
