import Foundation
@_spi(Benchmarks) import SlackIndexStore

/// Timeline benchmark: keyset pages at several depths beside OFFSET, cache hits, and a scroll workload.
package struct TimelineBench: Sendable {
    /// One depth's figures (milliseconds, p50 over the runs).
    package struct Depth: Sendable, Codable {
        package var conversation: String
        package var depth: Int
        package var keysetMs: Double
        package var offsetMs: Double

        private enum CodingKeys: String, CodingKey {
            case conversation, depth
            case keysetMs = "keyset_ms"
            case offsetMs = "offset_ms"
        }
    }

    /// The whole result.
    package struct Result: Sendable, Codable {
        package var pageSize: Int
        package var depths: [Depth]
        /// A page from the warm cache, p50 in milliseconds.
        package var cacheHitMs: Double
        /// The scroll workload: hit rate and latency.
        package var hitRate: Double
        package var scroll: LatencySummary
        package var scrollSteps: Int

        private enum CodingKeys: String, CodingKey {
            case depths, scroll
            case pageSize = "page_size"
            case cacheHitMs = "cache_hit_ms"
            case hitRate = "hit_rate"
            case scrollSteps = "scroll_steps"
        }
    }

    package var archive: any Timelines & Directory
    package var pageSize = 50
    package var runs = 200
    package var depths = [0, 1_000, 10_000, 50_000, 150_000]
    package var conversations = 1
    package var scrollSteps = 2_000

    package init(archive: Archive) {
        self.archive = archive.store
    }

    /// Runs the benchmark.
    /// Over 60 lines: the three workloads (depths, warm cache, scroll) share one seeded generator whose draws
    /// must stay in this order for runs to be comparable.
    package func run() throws -> Result {
        let busiest = try archive.busiestConversations(limit: conversations)
        var depthResults: [Depth] = []
        for (conversation, visible) in busiest {
            // The listed depths that fit, and the deepest page.
            let fitting = depths.filter { $0 < visible - pageSize } + [max(0, visible - pageSize)]
            for depth in Set(fitting).sorted() {
                guard let position = try archive.position(in: conversation, depth: depth) else { continue }
                var keyset: [Double] = []
                var offset: [Double] = []
                for _ in 0..<runs {
                    keyset.append(
                        try measure {
                            _ = try archive.page(
                                conversation: conversation, direction: .before, from: position, limit: pageSize)
                        })
                }
                for _ in 0..<max(3, runs / 20) {
                    offset.append(
                        try measure { _ = try archive.offsetPage(conversation: conversation, offset: depth, limit: pageSize) })
                }
                depthResults.append(
                    Depth(
                        conversation: conversation.displayName, depth: depth,
                        keysetMs: LatencySummary(seconds: keyset).p50, offsetMs: LatencySummary(seconds: offset).p50))
            }
        }
        guard let (main, visible) = busiest.first else {
            return Result(
                pageSize: pageSize, depths: [], cacheHitMs: 0, hitRate: 0, scroll: LatencySummary(seconds: []),
                scrollSteps: 0)
        }
        // Warm cache: the same page again and again.
        let timeline = Timeline(store: archive)
        _ = try timeline.history(main, limit: pageSize)
        var hits: [Double] = []
        for _ in 0..<runs { hits.append(try measure { _ = try timeline.history(main, limit: pageSize) }) }
        // Scroll: back and forth, and jumps to a random date, like a person reading.
        let scrolling = Timeline(store: archive)
        var rng = SystemRandomNumberGenerator()
        var page = try scrolling.history(main, limit: pageSize)
        var samples: [Double] = []
        let (first, last) = try archive.timeRange(of: main)
        for _ in 0..<scrollSteps {
            let roll = Int.random(in: 0..<100, using: &rng)
            samples.append(
                try measure {
                    if roll < 55, let previous = page.previous {
                        page = try scrolling.page(previous, limit: pageSize)
                    } else if roll < 90, let next = page.next {
                        page = try scrolling.page(next, limit: pageSize)
                    } else if roll < 95 {
                        page = try scrolling.history(main, limit: pageSize)
                    } else {
                        page = try scrolling.history(
                            main, at: .around(Int64.random(in: first...max(first, last), using: &rng)), limit: pageSize)
                    }
                })
        }
        _ = visible
        let stats = scrolling.stats()
        return Result(
            pageSize: pageSize, depths: depthResults, cacheHitMs: LatencySummary(seconds: hits).p50,
            hitRate: stats.hitRate, scroll: LatencySummary(seconds: samples), scrollSteps: scrollSteps)
    }
}
