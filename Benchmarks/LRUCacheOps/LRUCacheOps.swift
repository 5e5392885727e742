import Benchmark
import BenchmarkSupport
@_spi(Benchmarks) import SlackIndex

/// Entries in the full cache.
private let capacity = 100_000

/// A full cache of keys `0..<capacity` (value = key), built before the benchmarks are registered.
private func fullCache() -> LRUCache<Int, Int> {
    var cache = LRUCache<Int, Int>(maxEntries: capacity)
    for key in 0..<capacity { cache.insert(key, forKey: key, cost: 8) }
    return cache
}

/// Visits every key of `0..<capacity` once per round, in a scattered order (7919 is prime, so coprime to it).
@inline(__always)
private func scattered(_ step: Int) -> Int { (step &* 7_919) % capacity }

let benchmarks: @Sendable () -> Void = {
    let metrics: [BenchmarkMetric] = [.wallClock, .throughput, .mallocCountTotal]
    // Each reported iteration is 1,000 operations (`scaledIterations`); figures are per operation.
    Benchmark.defaultConfiguration = .init(
        metrics: metrics,
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(1),
        maxIterations: 10_000,
        thresholds: Tolerance.standard(for: metrics)
    )

    do {
        var cache = fullCache()
        var step = 0
        Benchmark("get hit 100k entries") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(cache.value(forKey: scattered(step)))
                step &+= 1
            }
        }
    }

    do {
        var cache = fullCache()
        var step = 0
        Benchmark("get miss 100k entries") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(cache.value(forKey: capacity + scattered(step)))
                step &+= 1
            }
        }
    }

    do {
        // Every insert is a new key into the full cache, so every insert evicts the least recently used entry.
        var cache = fullCache()
        var next = capacity
        Benchmark("insert with evict 100k entries") { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(cache.insert(next, forKey: next, cost: 8))
                next &+= 1
            }
        }
    }
}
