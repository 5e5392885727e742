import Benchmark
import BenchmarkSupport
import SlackIndex
@_spi(Benchmarks) import SlackIndexStore

/// Messages in the generated and imported export (seed `Fixtures.seed`), the same archive as SearchLatency.
private let messages = 50_000
private let pageSize = 50

/// The busiest conversation (most history messages) and the keyset position that starts its deepest page.
private struct TimelineFixture: Sendable {
    var archive: Archive
    var conversation: Conversation
    /// History messages in the conversation.
    var visible: Int
    /// Messages skipped from the newest to reach the deepest page: `visible - pageSize`.
    var deepest: Int
    /// The last message of the page before the deepest one; `.before` it reads the same page as OFFSET `deepest`.
    var deepestPosition: TimelinePosition
    var timeline: Timeline

    init() throws {
        archive = try Fixtures.archive(messages: messages)
        // Public API only: walk every conversation's history with keyset pages (untimed setup).
        var best: (Conversation, [TimelinePosition])?
        for conversation in try archive.conversations() {
            var positions: [TimelinePosition] = []
            var from: TimelinePosition?
            while true {
                let page = try archive.historyPage(conversation: conversation, direction: .after, from: from, limit: 5_000)
                positions += page.map { TimelinePosition(tsKey: $0.tsKey, rowID: $0.rowID) }
                guard page.count == 5_000, let last = positions.last else { break }
                from = last
            }
            if positions.count > (best?.1.count ?? 0) { best = (conversation, positions) }
        }
        guard let (conversation, oldestFirst) = best, oldestFirst.count > pageSize else {
            throw FixtureError.noConversation
        }
        self.conversation = conversation
        visible = oldestFirst.count
        deepest = visible - pageSize
        // Newest-first index `deepest - 1` is oldest-first index `visible - deepest` = `pageSize`.
        deepestPosition = oldestFirst[visible - deepest]
        timeline = Timeline(archive: archive)
        _ = try timeline.history(conversation, limit: pageSize)  // warm the cache
    }
}

let benchmarks: @Sendable () -> Void = {
    // As `slackindex` does before anything opens an archive.
    Archive.disableSQLiteMemoryStatistics()
    let metrics: [BenchmarkMetric] = [.wallClock, .mallocCountTotal]
    Benchmark.defaultConfiguration = .init(
        metrics: metrics,
        warmupIterations: 10,
        maxDuration: .seconds(2),
        maxIterations: 5_000,
        thresholds: Tolerance.standard(for: metrics)
    )

    let fixture = SetupValue<TimelineFixture>()
    let configuration = Benchmark.Configuration(setup: { fixture.set(try TimelineFixture()) })

    Benchmark("Keyset page 50 at depth 0", configuration: configuration) { benchmark in
        let fixture = fixture.value
        for _ in benchmark.scaledIterations {
            blackHole(
                try fixture.archive.historyPage(
                    conversation: fixture.conversation, direction: .before, from: nil, limit: pageSize))
        }
    }

    Benchmark("Keyset page 50 at deepest", configuration: configuration) { benchmark in
        let fixture = fixture.value
        for _ in benchmark.scaledIterations {
            blackHole(
                try fixture.archive.historyPage(
                    conversation: fixture.conversation, direction: .before, from: fixture.deepestPosition,
                    limit: pageSize))
        }
    }

    Benchmark("OFFSET page 50 at deepest", configuration: configuration) { benchmark in
        let fixture = fixture.value
        for _ in benchmark.scaledIterations {
            blackHole(
                try fixture.archive.offsetPage(
                    conversation: fixture.conversation, offset: fixture.deepest, limit: pageSize))
        }
    }

    Benchmark("Timeline.history 50 warm cache", configuration: configuration) { benchmark in
        let fixture = fixture.value
        for _ in benchmark.scaledIterations {
            blackHole(try fixture.timeline.history(fixture.conversation, limit: pageSize))
        }
    }
}
