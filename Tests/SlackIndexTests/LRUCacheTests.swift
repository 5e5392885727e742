import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

@Suite struct LRUCacheTests {
    @Test func getPutReplace() {
        var cache = LRUCache<String, Int>(maxEntries: 4, maxBytes: 100)
        #expect(cache.isEmpty)
        #expect(cache.value(forKey: "a") == nil)
        cache.insert(1, forKey: "a", cost: 10)
        cache.insert(2, forKey: "b", cost: 20)
        #expect(cache.value(forKey: "a") == 1)
        #expect(cache.peek("b") == 2)
        #expect(cache.count == 2)
        #expect(cache.totalCost == 30)

        let replaced = cache.insert(3, forKey: "a", cost: 5)
        #expect(replaced)
        #expect(cache.peek("a") == 3)
        #expect(cache.cost(forKey: "a") == 5)
        #expect(cache.count == 2)
        #expect(cache.totalCost == 25)
        #expect(cache.keys == ["a", "b"])

        #expect(cache.removeValue(forKey: "a") == 3)
        #expect(cache.removeValue(forKey: "a") == nil)
        #expect(cache.keys == ["b"])
        #expect(cache.totalCost == 20)
        #expect(cache.structuralProblem() == nil)
    }

    @Test func peekDoesNotTouchRecency() {
        var cache = LRUCache<Int, Int>(maxEntries: 2)
        cache.insert(1, forKey: 1, cost: 0)
        cache.insert(2, forKey: 2, cost: 0)
        #expect(cache.peek(1) == 1)
        cache.insert(3, forKey: 3, cost: 0)
        #expect(cache.keys == [3, 2])
        #expect(cache.hits == 0 && cache.misses == 0)
    }

    @Test func evictsLeastRecentByCount() {
        var cache = LRUCache<Int, String>(maxEntries: 3)
        for key in 1...3 {
            cache.insert("\(key)", forKey: key, cost: 1)
        }
        #expect(cache.value(forKey: 1) == "1")  // order now 1, 3, 2
        cache.insert("4", forKey: 4, cost: 1)  // evicts 2
        #expect(cache.keys == [4, 1, 3])
        cache.insert("3'", forKey: 3, cost: 1)  // replace refreshes recency, no eviction
        #expect(cache.keys == [3, 4, 1])
        cache.insert("5", forKey: 5, cost: 1)  // evicts 1
        #expect(cache.keys == [5, 3, 4])
        #expect(cache.evictions == 2)
        #expect(cache.structuralProblem() == nil)
    }

    @Test func evictsLeastRecentByBytes() {
        var cache = LRUCache<Int, Int>(maxEntries: 100, maxBytes: 100)
        cache.insert(1, forKey: 1, cost: 40)
        cache.insert(2, forKey: 2, cost: 40)
        cache.insert(3, forKey: 3, cost: 20)
        #expect(cache.totalCost == 100)
        _ = cache.value(forKey: 1)  // order 1, 3, 2
        cache.insert(4, forKey: 4, cost: 30)  // needs 30 free: evicts 2 (40)
        #expect(cache.keys == [4, 1, 3])
        #expect(cache.totalCost == 90)
        cache.insert(5, forKey: 5, cost: 95)  // evicts everything else
        #expect(cache.keys == [5])
        #expect(cache.totalCost == 95)
        #expect(cache.evictions == 4)

        // Growing an existing entry evicts others, never itself.
        cache.insert(6, forKey: 6, cost: 5)
        cache.insert(55, forKey: 5, cost: 100)
        #expect(cache.keys == [5])
        #expect(cache.peek(5) == 55)
        #expect(cache.evictions == 5)
        #expect(cache.structuralProblem() == nil)
    }

    @Test func rejectsOversizeValues() {
        var cache = LRUCache<Int, Int>(maxEntries: 10, maxBytes: 60)
        cache.insert(1, forKey: 1, cost: 10)
        cache.insert(2, forKey: 2, cost: 50)
        let tooBig = cache.insert(3, forKey: 3, cost: 61)
        #expect(!tooBig)
        #expect(cache.keys == [2, 1])  // nothing evicted for a rejected value
        #expect(cache.rejections == 1)
        #expect(cache.evictions == 0)

        // An oversize replacement drops the superseded value instead of serving it.
        let tooBigReplacement = cache.insert(10, forKey: 1, cost: 1000)
        #expect(!tooBigReplacement)
        #expect(cache.peek(1) == nil)
        #expect(cache.keys == [2])
        #expect(cache.rejections == 2)
        #expect(cache.insertions == 2)

        var empty = LRUCache<Int, Int>(maxEntries: 0)
        let intoEmpty = empty.insert(1, forKey: 1, cost: 0)
        #expect(!intoEmpty)
        #expect(empty.isEmpty)
        #expect(empty.rejections == 1)
        #expect(cache.structuralProblem() == nil)
    }

    @Test func countersAndReset() {
        var cache = LRUCache<Int, Int>(maxEntries: 2)
        cache.insert(1, forKey: 1, cost: 0)
        cache.insert(2, forKey: 2, cost: 0)
        cache.insert(3, forKey: 3, cost: 0)
        cache.insert(33, forKey: 3, cost: 0)
        _ = cache.value(forKey: 3)
        _ = cache.value(forKey: 2)
        _ = cache.value(forKey: 1)
        _ = cache.peek(1)
        cache.removeValue(forKey: 3)
        #expect(cache.hits == 2)
        #expect(cache.misses == 1)
        #expect(cache.insertions == 4)
        #expect(cache.evictions == 1)
        #expect(cache.rejections == 0)
        cache.resetCounters()
        #expect(cache.hits == 0 && cache.misses == 0 && cache.insertions == 0 && cache.evictions == 0)
        #expect(cache.count == 1)
    }

    @Test func removeAllWherePreservesOrderAndReusesSlots() {
        var cache = LRUCache<Int, String>(maxEntries: 10)
        for key in 0..<10 {
            cache.insert("v\(key)", forKey: key, cost: key)
        }
        let removed = cache.removeAll { key, _ in key.isMultiple(of: 2) }
        #expect(removed == 5)
        #expect(cache.keys == [9, 7, 5, 3, 1])
        #expect(cache.totalCost == 25)
        #expect(cache.evictions == 0)
        let byValue = cache.removeAll { _, value in value == "v7" }
        #expect(byValue == 1)
        #expect(cache.keys == [9, 5, 3, 1])
        #expect(cache.structuralProblem() == nil)

        for key in 20..<26 {
            cache.insert("v\(key)", forKey: key, cost: 0)
        }
        #expect(cache.count == 10)
        #expect(cache.evictions == 0)
        #expect(cache.structuralProblem() == nil)

        cache.removeAll()
        #expect(cache.isEmpty)
        #expect(cache.totalCost == 0)
        #expect(cache.keys.isEmpty)
        cache.insert("x", forKey: 1, cost: 1)
        #expect(cache.keys == [1])
        #expect(cache.structuralProblem() == nil)
    }

    struct Boom: Error {}

    @Test func throwingPredicateLeavesCacheConsistent() {
        var cache = LRUCache<Int, Int>(maxEntries: 10)
        for key in 0..<6 {
            cache.insert(key, forKey: key, cost: 1)
        }
        #expect(throws: Boom.self) {
            try cache.removeAll { key, _ in
                if key == 2 { throw Boom() }
                return key > 2
            }
        }
        #expect(cache.keys == [2, 1, 0])
        #expect(cache.structuralProblem() == nil)
    }

    @Test func valueSemantics() {
        var original = LRUCache<Int, Int>(maxEntries: 3)
        original.insert(1, forKey: 1, cost: 0)
        var copy = original
        copy.insert(2, forKey: 2, cost: 0)
        _ = copy.value(forKey: 1)
        #expect(original.keys == [1])
        #expect(copy.keys == [1, 2])
        #expect(original.structuralProblem() == nil && copy.structuralProblem() == nil)
    }
}
