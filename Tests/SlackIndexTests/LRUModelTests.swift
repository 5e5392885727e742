import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// Obviously-correct array-based LRU; index 0 is the most recently used entry.
struct LRUReference {
    var entries: [(key: Int, value: Int, cost: Int)] = []
    let maxEntries: Int
    let maxBytes: Int
    var hits = 0
    var misses = 0
    var evictions = 0
    var insertions = 0
    var rejections = 0

    var totalCost: Int { entries.reduce(0) { $0 + $1.cost } }

    mutating func value(forKey key: Int) -> Int? {
        guard let index = entries.firstIndex(where: { $0.key == key }) else {
            misses += 1
            return nil
        }
        hits += 1
        let entry = entries.remove(at: index)
        entries.insert(entry, at: 0)
        return entry.value
    }

    func peek(_ key: Int) -> Int? {
        entries.first { $0.key == key }?.value
    }

    mutating func insert(_ value: Int, forKey key: Int, cost: Int) -> Bool {
        if cost > maxBytes || maxEntries == 0 {
            rejections += 1
            entries.removeAll { $0.key == key }
            return false
        }
        insertions += 1
        entries.removeAll { $0.key == key }
        entries.insert((key, value, cost), at: 0)
        while entries.count > maxEntries || totalCost > maxBytes {
            entries.removeLast()
            evictions += 1
        }
        return true
    }

    mutating func removeValue(forKey key: Int) -> Int? {
        guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
        return entries.remove(at: index).value
    }

    mutating func removeAll(where predicate: (Int, Int) -> Bool) -> Int {
        let before = entries.count
        entries.removeAll { predicate($0.key, $0.value) }
        return before - entries.count
    }

    mutating func resetCounters() {
        (hits, misses, evictions, insertions, rejections) = (0, 0, 0, 0, 0)
    }
}

struct LRUModelConfig: Sendable, CustomTestStringConvertible {
    var seed: UInt64
    var maxEntries: Int
    var maxBytes: Int
    var keySpace: Int
    var maxCost: Int

    var testDescription: String {
        "seed \(seed), entries \(maxEntries), bytes \(maxBytes), keys \(keySpace), cost ≤ \(maxCost)"
    }
}

@Suite struct LRUModelTests {
    static let configs: [LRUModelConfig] = [
        LRUModelConfig(seed: 1, maxEntries: 16, maxBytes: .max, keySpace: 40, maxCost: 10),
        LRUModelConfig(seed: 2, maxEntries: 64, maxBytes: 300, keySpace: 120, maxCost: 40),
        LRUModelConfig(seed: 3, maxEntries: 8, maxBytes: 50, keySpace: 12, maxCost: 60),
        LRUModelConfig(seed: 4, maxEntries: 1, maxBytes: 20, keySpace: 4, maxCost: 25),
        LRUModelConfig(seed: 5, maxEntries: 0, maxBytes: 10, keySpace: 4, maxCost: 5),
    ]

    @Test(arguments: configs)
    func matchesReferenceImplementation(_ config: LRUModelConfig) {
        var rng = SeededGenerator(seed: config.seed)
        var cache = LRUCache<Int, Int>(maxEntries: config.maxEntries, maxBytes: config.maxBytes)
        var model = LRUReference(maxEntries: config.maxEntries, maxBytes: config.maxBytes)

        for step in 0..<10_000 {
            let key = Int.random(in: 0..<config.keySpace, using: &rng)
            let roll = Int.random(in: 0..<100, using: &rng)
            let operation: String
            switch roll {
            case 0..<35:
                operation = "get \(key)"
                #expect(cache.value(forKey: key) == model.value(forKey: key), "step \(step): \(operation)")
            case 35..<45:
                operation = "peek \(key)"
                #expect(cache.peek(key) == model.peek(key), "step \(step): \(operation)")
            case 45..<85:
                let cost = Int.random(in: 0...config.maxCost, using: &rng)
                let value = Int.random(in: 0..<1_000_000, using: &rng)
                operation = "insert \(key) cost \(cost)"
                let cached = cache.insert(value, forKey: key, cost: cost)
                #expect(cached == model.insert(value, forKey: key, cost: cost), "step \(step): \(operation)")
            case 85..<93:
                operation = "remove \(key)"
                #expect(cache.removeValue(forKey: key) == model.removeValue(forKey: key), "step \(step)")
            case 93..<98:
                let modulus = Int.random(in: 2...5, using: &rng)
                let remainder = Int.random(in: 0..<modulus, using: &rng)
                operation = "removeAll key % \(modulus) == \(remainder)"
                let predicate: (Int, Int) -> Bool = { key, value in
                    key % modulus == remainder || value % 97 == 0
                }
                #expect(cache.removeAll(where: predicate) == model.removeAll(where: predicate), "step \(step)")
            case 98:
                operation = "removeAll"
                cache.removeAll()
                model.entries.removeAll()
            default:
                operation = "resetCounters"
                cache.resetCounters()
                model.resetCounters()
            }

            let modelKeys = model.entries.map(\.key)
            #expect(cache.keys == modelKeys, "step \(step): order after \(operation)")
            for entry in model.entries {
                #expect(cache.peek(entry.key) == entry.value, "step \(step): value of \(entry.key)")
                #expect(cache.cost(forKey: entry.key) == entry.cost, "step \(step): cost of \(entry.key)")
            }
            #expect(cache.count == model.entries.count)
            #expect(cache.totalCost == model.totalCost)
            #expect(cache.hits == model.hits && cache.misses == model.misses, "step \(step)")
            #expect(cache.evictions == model.evictions, "step \(step)")
            #expect(cache.insertions == model.insertions && cache.rejections == model.rejections, "step \(step)")
            let problem = cache.structuralProblem()
            #expect(problem == nil, "step \(step): \(operation)")
            if problem != nil || cache.keys != modelKeys {
                return  // the first divergence is the useful one
            }
        }
    }
}
