/// How many requests a token may make in an interval.
public struct RateLimit: Sendable, Hashable, CustomStringConvertible {
    public var requests: Int
    public var interval: Duration

    /// 100 requests every 10 seconds.
    public static let standard = RateLimit(requests: 100, interval: .seconds(10))

    public init(requests: Int, interval: Duration) {
        self.requests = max(1, requests)
        self.interval = interval > .zero ? interval : .seconds(1)
    }

    /// Reads `N/SECONDS` (`100/10`, `100/10s`, `20/60`); nil for anything else.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let requests = Int(parts[0]), requests > 0 else { return nil }
        var seconds = parts[1]
        if seconds.hasSuffix("s") { seconds = seconds.dropLast() }
        guard let value = Double(seconds), value > 0, value.isFinite else { return nil }
        self.init(requests: requests, interval: .milliseconds(Int64((value * 1000).rounded())))
    }

    public var description: String {
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        let text = seconds == seconds.rounded() ? String(Int64(seconds)) : String(seconds)
        return "\(requests)/\(text)s"
    }
}

/// A token bucket per key (per token): `requests` fit in a burst, refilled evenly over `interval`.
///
/// An actor because many requests check it concurrently. Time comes from an injected clock, so tests move it by
/// hand. Buckets that are full again are dropped when the table grows past `maxKeys` (bad tokens cannot grow it
/// without bound).
package actor RateLimiter {
    private let limit: RateLimit
    private let now: @Sendable () -> Duration
    private var buckets: [String: (tokens: Double, at: Duration)] = [:]
    private let maxKeys = 10_000

    /// - Parameter now: time elapsed since any fixed origin; must not go backwards.
    package init(limit: RateLimit, now: @escaping @Sendable () -> Duration) {
        self.limit = limit
        self.now = now
    }

    /// A limiter that reads `clock` (default: the continuous clock).
    package init<C: Clock>(limit: RateLimit, clock: C) where C.Duration == Duration {
        self.init(limit: limit, now: RateLimiter.elapsed(on: clock))
    }

    package init(limit: RateLimit) {
        self.init(limit: limit, now: RateLimiter.continuousTime())
    }

    /// Time elapsed on `clock` since this call: the `now` the server's limits and expiries read.
    package static func elapsed<C: Clock>(on clock: C) -> @Sendable () -> Duration where C.Duration == Duration {
        let origin = clock.now
        return { origin.duration(to: clock.now) }
    }

    /// Time elapsed on the continuous clock since this call.
    package static func continuousTime() -> @Sendable () -> Duration {
        elapsed(on: ContinuousClock())
    }

    /// Takes one request from `key`'s bucket. Returns nil when allowed, else how long until one is.
    ///
    /// - Complexity: O(1) amortized.
    package func acquire(_ key: String) -> Duration? {
        let time = now()
        let capacity = Double(limit.requests)
        let perSecond = capacity / RateLimiter.seconds(limit.interval)
        var bucket = buckets[key] ?? (capacity, time)
        bucket.tokens = min(capacity, bucket.tokens + RateLimiter.seconds(time - bucket.at) * perSecond)
        bucket.at = time
        defer {
            buckets[key] = bucket
            if buckets.count > maxKeys { prune(at: time, perSecond: perSecond) }
        }
        if bucket.tokens >= 1 {
            bucket.tokens -= 1
            return nil
        }
        let wait = (1 - bucket.tokens) / perSecond
        return .milliseconds(Int64((wait * 1000).rounded(.up)))
    }

    private func prune(at time: Duration, perSecond: Double) {
        let capacity = Double(limit.requests)
        buckets = buckets.filter { _, bucket in
            bucket.tokens + RateLimiter.seconds(time - bucket.at) * perSecond < capacity
        }
    }

    /// A wait as `Retry-After` gives it: whole seconds, rounded up, at least 1.
    static func retryAfter(_ wait: Duration) -> Int {
        max(1, Int(seconds(wait).rounded(.up)))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
