import Synchronization
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// A cached value tagged with the source version it was read at.
struct Versioned: Sendable, Equatable {
    var key: Int
    var version: Int
}

/// Shared state of the concurrency test; Mutexes are non-copyable, so they live in a Sendable class.
final class CacheWorld: Sendable {
    /// Source of truth: current version per key.
    let source: Mutex<[Int]>
    /// Highest version whose invalidation/insert has completed, per key.
    let floors: Mutex<[Int]>
    /// Serializes writers so that per-key cache updates happen in version order.
    let writerLock = Mutex(0)
    let violations = Mutex([String]())
    let readsDone = Mutex(0)

    init(keyCount: Int) {
        source = Mutex([Int](repeating: 0, count: keyCount))
        floors = Mutex([Int](repeating: 0, count: keyCount))
    }
}

@Suite struct MessageCacheTests {
    struct LoadFailed: Error {}

    @Test func basicOperationsAndStats() {
        let cache = MessageCache<Int, String>(maxEntries: 2, maxBytes: 100)
        #expect(cache.value(forKey: 1) == nil)
        #expect(cache.insert("one", forKey: 1, cost: 10))
        #expect(cache.insert("two", forKey: 2, cost: 10))
        #expect(cache.value(forKey: 1) == "one")
        #expect(cache.insert("three", forKey: 3, cost: 10))  // evicts 2
        #expect(cache.peek(2) == nil)
        #expect(!cache.insert("huge", forKey: 4, cost: 101))
        #expect(cache.contains(1) && cache.contains(3))

        let stats = cache.stats()
        #expect(stats.hits == 1)
        #expect(stats.misses == 1)
        #expect(stats.evictions == 1)
        #expect(stats.insertions == 3)
        #expect(stats.rejections == 1)
        #expect(stats.count == 2)
        #expect(stats.totalCost == 20)
        #expect(stats.maxEntries == 2 && stats.maxBytes == 100)
        #expect(stats.hitRate == 0.5)

        #expect(cache.removeAll { key, _ in key == 3 } == 1)
        #expect(cache.removeValue(forKey: 1) == "one")
        #expect(cache.count == 0 && cache.totalCost == 0)
        cache.resetCounters()
        #expect(cache.stats().hitRate == 0)
        #expect(cache.stats().insertions == 0)
    }

    @Test func getOrLoad() throws {
        let cache = MessageCache<Int, String>(maxEntries: 10)
        var loads = 0
        let first = cache.value(forKey: 7) {
            loads += 1
            return ("seven", cost: 5)
        }
        let second = cache.value(forKey: 7) {
            loads += 1
            return ("other", cost: 5)
        }
        #expect(first == "seven" && second == "seven")
        #expect(loads == 1)
        #expect(cache.stats().hits == 1 && cache.stats().misses == 1)

        #expect(cache.value(forKey: 8) { nil } == nil)
        #expect(!cache.contains(8))

        #expect(throws: LoadFailed.self) {
            try cache.value(forKey: 9) { throw LoadFailed() }
        }
        #expect(!cache.contains(9))
        #expect(cache.totalCost == 5)
    }

    @Test func loadRacingAnInvalidationIsNotCached() {
        let cache = MessageCache<Int, Versioned>(maxEntries: 10)
        let loaded = cache.value(forKey: 1) {
            // Simulates a writer that updates the source and invalidates while this load is in flight.
            cache.removeValue(forKey: 1)
            return (Versioned(key: 1, version: 0), cost: 1)
        }
        #expect(loaded == Versioned(key: 1, version: 0))
        #expect(!cache.contains(1))
        #expect(cache.stats().discardedLoads == 1)

        _ = cache.value(forKey: 2) {
            cache.removeAll { _, _ in false }  // even a no-op invalidation conservatively discards
            return (Versioned(key: 2, version: 0), cost: 1)
        }
        #expect(!cache.contains(2))

        _ = cache.value(forKey: 3) {
            cache.insert(Versioned(key: 3, version: 1), forKey: 3, cost: 1)
            return (Versioned(key: 3, version: 0), cost: 1)
        }
        #expect(cache.peek(3) == Versioned(key: 3, version: 1))  // the explicit newer insert wins

        // Loads of other keys that finish in between do not discard each other.
        _ = cache.value(forKey: 4) {
            _ = cache.value(forKey: 5) { (Versioned(key: 5, version: 0), cost: 1) }
            return (Versioned(key: 4, version: 0), cost: 1)
        }
        #expect(cache.contains(4) && cache.contains(5))
        #expect(cache.stats().discardedLoads == 3)
    }

    @Test func asyncGetOrLoad() async throws {
        let cache = MessageCache<Int, String>(maxEntries: 10)
        let value = await cache.value(forKey: 1) {
            await Task.yield()
            return ("one", cost: 1)
        }
        #expect(value == "one")
        #expect(cache.peek(1) == "one")
        await #expect(throws: LoadFailed.self) {
            try await cache.value(forKey: 2) { () async throws -> (String, cost: Int)? in throw LoadFailed() }
        }
        let racing = await cache.value(forKey: 3) {
            await Task.yield()
            cache.removeAll()
            return ("stale", cost: 1)
        }
        #expect(racing == "stale")
        #expect(!cache.contains(3))
    }

    /// Writers bump a key's version in the source of truth and then invalidate (or insert) it; readers load through
    /// the cache. After an invalidation has completed, no read that starts later may return an older version.
    @Test func noStaleReadsAfterInvalidation() async {
        let keyCount = 16
        let cache = MessageCache<Int, Versioned>(maxEntries: 8, maxBytes: 8 * 16)
        let world = CacheWorld(keyCount: keyCount)

        @Sendable func load(_ key: Int) -> (Versioned, cost: Int) {
            let version = world.source.withLock { $0[key] }
            return (Versioned(key: key, version: version), cost: 16)
        }

        @Sendable func check(_ value: Versioned?, key: Int, floor: Int, path: String) {
            guard let value else { return }
            if value.key != key || value.version < floor {
                world.violations.withLock { $0.append("\(path): key \(key) got v\(value.version), floor v\(floor)") }
            }
        }

        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<2 {
                group.addTask {
                    var rng = SeededGenerator(seed: 100 + UInt64(writer))
                    for _ in 0..<3_000 {
                        let key = Int.random(in: 0..<keyCount, using: &rng)
                        let kind = Int.random(in: 0..<4, using: &rng)
                        world.writerLock.withLock { _ in
                            let version = world.source.withLock { versions in
                                versions[key] += 1
                                return versions[key]
                            }
                            switch kind {
                            case 0:
                                cache.removeValue(forKey: key)
                            case 1:
                                cache.removeAll { candidate, _ in candidate == key }
                            case 2:
                                cache.removeAll { _, value in value.key == key || value.key % 7 == key % 7 }
                            default:
                                cache.insert(Versioned(key: key, version: version), forKey: key, cost: 16)
                            }
                            world.floors.withLock { $0[key] = version }
                        }
                        if kind == 0 {
                            await Task.yield()
                        }
                    }
                }
            }
            for reader in 0..<6 {
                group.addTask {
                    var rng = SeededGenerator(seed: 200 + UInt64(reader))
                    for _ in 0..<5_000 {
                        let key = Int.random(in: 0..<keyCount, using: &rng)
                        let floor = world.floors.withLock { $0[key] }
                        switch Int.random(in: 0..<4, using: &rng) {
                        case 0:
                            check(cache.value(forKey: key), key: key, floor: floor, path: "get")
                        case 1:
                            check(cache.peek(key), key: key, floor: floor, path: "peek")
                        case 2:
                            let value = await cache.value(forKey: key) {
                                let loaded = load(key)
                                await Task.yield()  // widen the window between reading the source and inserting
                                return loaded
                            }
                            check(value, key: key, floor: floor, path: "async load")
                        default:
                            let value = cache.value(forKey: key) {
                                let loaded = load(key)
                                var spin = 0
                                for step in 0..<Int.random(in: 0..<200, using: &rng) {
                                    spin &+= step
                                }
                                return spin < 0 ? nil : loaded
                            }
                            check(value, key: key, floor: floor, path: "sync load")
                        }
                        // A value read after the load must also be at least as new as the floor at that time.
                        let laterFloor = world.floors.withLock { $0[key] }
                        check(cache.peek(key), key: key, floor: laterFloor, path: "peek after load")
                    }
                    world.readsDone.withLock { $0 += 1 }
                }
            }
        }

        let staleReads = world.violations.withLock { $0.count }
        let sample = world.violations.withLock { Array($0.prefix(5)) }
        #expect(staleReads == 0, "first stale reads: \(sample)")
        #expect(world.readsDone.withLock { $0 } == 6)
        let stats = cache.stats()
        #expect(stats.count <= 8 && stats.totalCost <= 8 * 16)
        #expect(stats.hits > 0 && stats.misses > 0)
    }
}
