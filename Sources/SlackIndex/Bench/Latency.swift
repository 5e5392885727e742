import Foundation

/// Latency samples and their percentiles, in milliseconds.
@_spi(Benchmarks) public struct LatencySummary: Sendable, Codable {
    public var count: Int
    public var p50: Double
    public var p95: Double
    public var p99: Double
    public var max: Double
    public var mean: Double

    /// Summarises samples given in seconds.
    ///
    /// - Complexity: O(n log n).
    public init(seconds samples: [Double]) {
        let sorted = samples.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = Int((p * Double(sorted.count - 1)).rounded())
            return sorted[Swift.min(sorted.count - 1, Swift.max(0, index))] * 1000
        }
        count = sorted.count
        p50 = percentile(0.50)
        p95 = percentile(0.95)
        p99 = percentile(0.99)
        max = (sorted.last ?? 0) * 1000
        mean = sorted.isEmpty ? 0 : sorted.reduce(0, +) / Double(sorted.count) * 1000
    }
}

/// Times a closure: seconds taken.
@inline(__always)
func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    return start.duration(to: .now).seconds
}
