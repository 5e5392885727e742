import Foundation
import Metrics
import NIOPosix
import Prometheus
import SlackIndex
import Synchronization

/// What `serve --metrics` counts, kept through swift-metrics' API in a Prometheus registry of this server's own,
/// and written out at `GET /metrics` in Prometheus' text format (docs/serve.md lists every metric).
///
/// Every metric is made with this server's `factory`, never through `MetricsSystem`'s global one, so tests may start
/// several servers in one process, each with its own counts. `bootstrapProcess()` also makes the factory the
/// process's (once), so that any library counting through swift-metrics lands in the same `/metrics`.
///
/// Labels hold the API method's name from the served set, an HTTP status or a limit's name: never a token, a path,
/// a query or anything from the archive, so their number is bounded whatever clients send.
public final class ServeMetrics: Sendable {
    /// Where the metrics live; `/metrics` writes it out.
    let registry: PrometheusCollectorRegistry
    /// Makes every metric of this server (swift-metrics' `Counter`, `Timer`, `Gauge`) in `registry`.
    public let factory: PrometheusMetricsFactory

    /// Request durations' histogram buckets, 1 ms to 5 s: a page from the archive takes a few ms, a search tens of
    /// ms to a second on 1M messages (docs/performance.md), and a search waits at most 2 s for a thread.
    static let latencyBuckets: [Duration] = [
        .milliseconds(1), .microseconds(2_500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
        .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        .milliseconds(2_500), .seconds(5),
    ]

    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.latencyBuckets
        self.factory = factory
    }

    /// Makes this server's factory the process's swift-metrics backend, the first time only (swift-metrics traps on a
    /// second bootstrap): `serve` runs one server per process, so the first is the one.
    public func bootstrapProcess() {
        Self.bootstrapped.withLock { done in
            guard !done else { return }
            MetricsSystem.bootstrap(factory)
            done = true
        }
    }

    private static let bootstrapped = Mutex(false)

    /// One request answered: `slackindex_requests_total{method,status}` and
    /// `slackindex_request_duration_seconds{method}`.
    /// - Complexity: O(1): a lookup of the labelled series in the registry, under its lock; measured 16 µs a call
    ///   in a debug build (100,000 calls over 4 methods), against a few ms for the cheapest page from the archive.
    func requestAnswered(route: String, status: Int, after duration: Duration) {
        Counter(
            label: "slackindex_requests_total", dimensions: [("method", route), ("status", String(status))],
            factory: factory
        ).increment()
        Timer(label: "slackindex_request_duration_seconds", dimensions: [("method", route)], factory: factory)
            .recordNanoseconds(Self.nanoseconds(duration))
    }

    /// A request refused by a limit: `slackindex_ratelimited_total{limit}`.
    func rateLimited(_ limit: Limit) {
        Counter(label: "slackindex_ratelimited_total", dimensions: [("limit", limit.rawValue)], factory: factory)
            .increment()
    }

    /// The limits that answer 429.
    enum Limit: String {
        /// Requests per token (`--rate-limit`), for the API and files.
        case token
        /// Searches one token may have running or waiting (`SlackAPIConfiguration.searchesPerToken`).
        case searchesPerToken = "searches_per_token"
        /// Web UI sign-ins per client address, and per token.
        case signInAddress = "signin_address"
        case signInToken = "signin_token"
    }

    /// A search given a search thread after waiting `wait` for it: `slackindex_searches_total` and
    /// `slackindex_search_wait_seconds`.
    func searchStarted(afterWaiting wait: Duration) {
        Counter(label: "slackindex_searches_total", factory: factory).increment()
        Timer(label: "slackindex_search_wait_seconds", factory: factory).recordNanoseconds(Self.nanoseconds(wait))
    }

    /// A search told to come back (HTTP 503): the queue was full or its wait ran out.
    func searchUnavailable() {
        Counter(label: "slackindex_search_unavailable_total", factory: factory).increment()
    }

    /// The registry as Prometheus' text format, after reading the gauges that are read at scrape time: searches
    /// waiting, and the archive's connections and progress (one blocking read of the archive, on NIO's thread pool).
    /// A failed read of the archive sets `slackindex_archive_up` to 0 and leaves its other gauges as they were.
    func scrape(api: SlackAPI) async -> String {
        gauge("slackindex_searches_waiting", api.slots.waiting)
        let store = api.archive
        let use = store.connectionUse()
        gauge("slackindex_db_connections_max", use.limit)
        if let open = use.open { gauge("slackindex_db_connections_open", open) }
        if let inUse = use.inUse { gauge("slackindex_db_connections_in_use", inUse) }
        let progress = try? await NIOThreadPool.singleton.runIfActive { try store.archiveProgress() }
        gauge("slackindex_archive_up", progress == nil ? 0 : 1)
        if let progress {
            gauge("slackindex_archive_messages", progress.messages)
            gauge("slackindex_sync_runs_open", progress.syncRunsOpen)
            gauge("slackindex_sync_run_pages", progress.syncRunPages)
            gauge("slackindex_sync_threads_pending", progress.syncThreadsPending)
            if let seconds = progress.newestSyncedSeconds {
                Gauge(label: "slackindex_sync_newest_synced_seconds", factory: factory).record(seconds)
            }
        }
        return registry.emitToString()
    }

    private func gauge(_ name: String, _ value: Int) {
        Gauge(label: name, factory: factory).record(value)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
