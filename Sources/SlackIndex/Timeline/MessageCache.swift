import Synchronization

/// A snapshot of a ``MessageCache``'s counters and occupancy.
public struct CacheStats: Sendable, Hashable {
    /// Lookups that found a value.
    ///
    /// - Complexity: O(1)
    public var hits: Int

    /// Lookups that found nothing.
    ///
    /// - Complexity: O(1)
    public var misses: Int

    /// Entries dropped to stay within the budgets.
    ///
    /// - Complexity: O(1)
    public var evictions: Int

    /// Successful inserts, including replacements and get-or-load inserts.
    ///
    /// - Complexity: O(1)
    public var insertions: Int

    /// Inserts refused because the value could never fit.
    ///
    /// - Complexity: O(1)
    public var rejections: Int

    /// Loaded values not cached because an invalidation raced with the load.
    ///
    /// - Complexity: O(1)
    public var discardedLoads: Int

    /// Cached entries.
    ///
    /// - Complexity: O(1)
    public var count: Int

    /// Sum of the cached costs in bytes.
    ///
    /// - Complexity: O(1)
    public var totalCost: Int

    /// Entry budget.
    ///
    /// - Complexity: O(1)
    public var maxEntries: Int

    /// Byte budget.
    ///
    /// - Complexity: O(1)
    public var maxBytes: Int

    /// Creates a snapshot from explicit values.
    ///
    /// - Complexity: O(1)
    @inlinable
    public init(
        hits: Int,
        misses: Int,
        evictions: Int,
        insertions: Int,
        rejections: Int,
        discardedLoads: Int,
        count: Int,
        totalCost: Int,
        maxEntries: Int,
        maxBytes: Int
    ) {
        self.hits = hits
        self.misses = misses
        self.evictions = evictions
        self.insertions = insertions
        self.rejections = rejections
        self.discardedLoads = discardedLoads
        self.count = count
        self.totalCost = totalCost
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
    }

    /// `hits / (hits + misses)`, or `0` before the first lookup.
    ///
    /// - Complexity: O(1)
    @inlinable
    public var hitRate: Double {
        let lookups = hits + misses
        return lookups == 0 ? 0 : Double(hits) / Double(lookups)
    }
}

/// A thread-safe LRU cache: an ``LRUCache`` guarded by a `Synchronization.Mutex`.
///
/// Every operation takes the lock once for O(1) work (except ``removeAll(where:)``). Values are returned by copy, so
/// `Value` should be cheap to copy (a struct of arrays/strings, or a final class).
///
/// ### Staleness protection
/// The cache keeps a global `generation` that every *external* mutation bumps: ``insert(_:forKey:cost:)``,
/// ``removeValue(forKey:)``, ``removeAll(where:)`` and ``removeAll()``. The get-or-load methods
/// (``value(forKey:orInsert:)``) remember the generation at the miss, run the loader **outside the lock**, and insert
/// the loaded value only if the generation is unchanged. Writers must update the source of truth first and then
/// invalidate (or insert); any load that may have read the old data then started before the invalidation and is
/// discarded, so once an invalidation returns no later lookup can observe data older than it.
///
/// The check is global rather than per key, so a burst of invalidations can discard unrelated loads (counted in
/// ``CacheStats/discardedLoads``); that only costs hit rate, never correctness. Concurrent misses for the same key
/// are not coalesced: each caller runs its own loader.
package final class MessageCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// `@unchecked Sendable` is sound: `LRUCache` is a value type whose only contents are `Sendable` keys and values
    /// plus integers. It is declared so that region-based isolation checking does not treat the mutex-protected state
    /// as merged with the caller's non-`Sendable` predicate in ``removeAll(where:)``; that predicate is only invoked
    /// synchronously under the lock and never retained.
    @usableFromInline
    struct State: @unchecked Sendable {
        @usableFromInline var cache: LRUCache<Key, Value>
        @usableFromInline var generation: UInt64 = 0
        @usableFromInline var discardedLoads: Int = 0

        @inlinable
        init(cache: LRUCache<Key, Value>) {
            self.cache = cache
        }
    }

    // `@usableFromInline` + `@inlinable` methods let client modules specialize for concrete Key/Value (see LRUCache).
    @usableFromInline let state: Mutex<State>

    /// Maximum number of entries kept.
    ///
    /// - Complexity: O(1)
    package let maxEntries: Int

    /// Maximum sum of the per-entry costs (in bytes) kept.
    ///
    /// - Complexity: O(1)
    package let maxBytes: Int

    /// Creates an empty cache; see ``LRUCache/init(maxEntries:maxBytes:)`` for the valid ranges.
    ///
    /// - Complexity: O(1)
    @inlinable
    package init(maxEntries: Int, maxBytes: Int = .max) {
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
        self.state = Mutex(State(cache: LRUCache(maxEntries: maxEntries, maxBytes: maxBytes)))
    }

    /// Number of cached entries.
    ///
    /// - Complexity: O(1)
    @inlinable
    package var count: Int { state.withLock { $0.cache.count } }

    /// Sum of the costs of the cached entries.
    ///
    /// - Complexity: O(1)
    @inlinable
    package var totalCost: Int { state.withLock { $0.cache.totalCost } }

    /// Number of ``value(forKey:)`` lookups that found a value (get-or-load lookups included).
    ///
    /// - Complexity: O(1)
    @inlinable
    package var hits: Int { state.withLock { $0.cache.hits } }

    /// Number of lookups that found nothing (get-or-load lookups included).
    ///
    /// - Complexity: O(1)
    @inlinable
    package var misses: Int { state.withLock { $0.cache.misses } }

    /// Number of entries dropped to stay within the budgets.
    ///
    /// - Complexity: O(1)
    @inlinable
    package var evictions: Int { state.withLock { $0.cache.evictions } }

    /// Number of successful inserts, including replacements and get-or-load inserts.
    ///
    /// - Complexity: O(1)
    @inlinable
    package var insertions: Int { state.withLock { $0.cache.insertions } }

    /// Number of inserts refused because the value could never fit.
    ///
    /// - Complexity: O(1)
    @inlinable
    package var rejections: Int { state.withLock { $0.cache.rejections } }

    /// Invalidation counter, bumped by every external mutation. Exposed for diagnostics.
    ///
    /// - Complexity: O(1)
    @inlinable
    package var generation: UInt64 { state.withLock { $0.generation } }

    /// Returns a consistent snapshot of all counters.
    ///
    /// - Complexity: O(1)
    @inlinable
    package func stats() -> CacheStats {
        state.withLock { state in
            CacheStats(
                hits: state.cache.hits,
                misses: state.cache.misses,
                evictions: state.cache.evictions,
                insertions: state.cache.insertions,
                rejections: state.cache.rejections,
                discardedLoads: state.discardedLoads,
                count: state.cache.count,
                totalCost: state.cache.totalCost,
                maxEntries: maxEntries,
                maxBytes: maxBytes
            )
        }
    }

    /// Returns the value for `key` and marks it most recently used; counts a hit or a miss.
    ///
    /// - Complexity: O(1)
    @inlinable
    package func value(forKey key: Key) -> Value? {
        state.withLock { $0.cache.value(forKey: key) }
    }

    /// Returns the value for `key` without changing recency or counters.
    ///
    /// - Complexity: O(1)
    @inlinable
    package func peek(_ key: Key) -> Value? {
        state.withLock { $0.cache.peek(key) }
    }

    /// Whether `key` is cached; does not change recency or counters.
    ///
    /// - Complexity: O(1)
    @inlinable
    package func contains(_ key: Key) -> Bool {
        state.withLock { $0.cache.contains(key) }
    }

    /// Inserts or replaces the value for `key` (see ``LRUCache/insert(_:forKey:cost:)``) and bumps the generation,
    /// so in-flight loads that started earlier are not cached over it.
    ///
    /// - Returns: `true` if the value is now cached, `false` if it was rejected as oversize.
    /// - Complexity: O(1) amortized, plus O(1) per evicted entry.
    @inlinable
    @discardableResult
    package func insert(_ value: Value, forKey key: Key, cost: Int) -> Bool {
        state.withLock { state in
            state.generation &+= 1
            return state.cache.insert(value, forKey: key, cost: cost)
        }
    }

    /// Removes and returns the value for `key` and bumps the generation.
    ///
    /// - Complexity: O(1)
    @inlinable
    @discardableResult
    package func removeValue(forKey key: Key) -> Value? {
        state.withLock { state in
            state.generation &+= 1
            return state.cache.removeValue(forKey: key)
        }
    }

    /// Removes every entry matching `shouldBeRemoved` and bumps the generation.
    ///
    /// The predicate runs synchronously on the caller's thread while the lock is held: keep it cheap and never call
    /// back into this cache from it (the mutex is not recursive). If it throws, the entries removed so far stay
    /// removed (the generation is bumped either way).
    ///
    /// - Returns: The number of removed entries.
    /// - Complexity: O(n)
    @inlinable
    @discardableResult
    package func removeAll(where shouldBeRemoved: (Key, Value) throws -> Bool) rethrows -> Int {
        try state.withLock { state in
            state.generation &+= 1
            return try state.cache.removeAll(where: shouldBeRemoved)
        }
    }

    /// Removes every entry and bumps the generation; counters are kept.
    ///
    /// - Complexity: O(n)
    @inlinable
    package func removeAll() {
        state.withLock { state in
            state.generation &+= 1
            state.cache.removeAll()
        }
    }

    /// Sets the hit/miss/eviction/insertion/rejection/discarded-load counters to zero.
    ///
    /// - Complexity: O(1)
    @inlinable
    package func resetCounters() {
        state.withLock { state in
            state.cache.resetCounters()
            state.discardedLoads = 0
        }
    }

    /// Returns the cached value for `key`, or runs `make` and caches its result.
    ///
    /// `make` runs **outside the lock**, on the caller's thread: loaders do SQLite I/O that would otherwise serialize
    /// every reader behind one slow load, and a loader that touches this cache would deadlock on the non-recursive
    /// mutex. Correctness is kept by the generation check described on ``MessageCache``: the loaded value is cached
    /// only if no external mutation happened since the miss; otherwise it is returned to this caller but not cached.
    /// Get-or-load inserts do not bump the generation, so concurrent loads of different keys do not discard each
    /// other.
    ///
    /// - Parameter make: Loads the value and its cost in bytes, or returns `nil` if it does not exist (nothing is
    ///   cached; negative results are not cached).
    /// - Returns: The cached or loaded value, or `nil` if `make` returned `nil`.
    /// - Complexity: O(1) plus the cost of `make` on a miss.
    @inlinable
    package func value(
        forKey key: Key,
        orInsert make: () throws -> (Value, cost: Int)?
    ) rethrows -> Value? {
        let generation: UInt64
        switch lookup(key) {
        case .hit(let value):
            return value
        case .miss(let missGeneration):
            generation = missGeneration
        }
        guard let (value, cost) = try make() else { return nil }
        store(value, forKey: key, cost: cost, ifGeneration: generation)
        return value
    }

    /// Async variant of ``value(forKey:orInsert:)`` for loaders that must `await` (e.g. a database actor).
    ///
    /// Runs on the caller's executor (`nonisolated(nonsending)`), so `make` may be a non-`Sendable` closure. Same
    /// locking and staleness rules: the lock is never held across `await`.
    ///
    /// - Complexity: O(1) plus the cost of `make` on a miss.
    @inlinable
    nonisolated(nonsending)
    package func value(
        forKey key: Key,
        orInsert make: () async throws -> (Value, cost: Int)?
    ) async rethrows -> Value? {
        let generation: UInt64
        switch lookup(key) {
        case .hit(let value):
            return value
        case .miss(let missGeneration):
            generation = missGeneration
        }
        guard let (value, cost) = try await make() else { return nil }
        store(value, forKey: key, cost: cost, ifGeneration: generation)
        return value
    }

    // MARK: - Get-or-load helpers

    @usableFromInline
    enum Lookup {
        case hit(Value)
        case miss(generation: UInt64)
    }

    @inlinable
    func lookup(_ key: Key) -> Lookup {
        state.withLock { state in
            if let value = state.cache.value(forKey: key) {
                return .hit(value)
            }
            return .miss(generation: state.generation)
        }
    }

    @inlinable
    func store(_ value: Value, forKey key: Key, cost: Int, ifGeneration generation: UInt64) {
        state.withLock { state in
            if state.generation == generation {
                state.cache.insert(value, forKey: key, cost: cost)
            } else {
                state.discardedLoads += 1
            }
        }
    }
}
