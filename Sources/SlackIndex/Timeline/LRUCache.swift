/// A least-recently-used cache bounded by an entry count and a total byte cost.
///
/// Entries live in one contiguous array of nodes that form an intrusive doubly linked list (ordered from most to
/// least recently used) addressed by `Int32` slot indices; freed slots are recycled through a free list, so there is
/// no per-entry class allocation. A `Dictionary` maps each key to its slot.
///
/// The cache is a value type with copy-on-write storage. It is deliberately not `Sendable`: wrap it in a lock (see
/// ``MessageCache``) to share it between concurrent tasks.
///
/// Counter semantics:
/// - `hits` / `misses` are counted by ``value(forKey:)`` only; ``peek(_:)`` and ``contains(_:)`` never count.
/// - `insertions` counts successful ``insert(_:forKey:cost:)`` calls, including replacements.
/// - `rejections` counts inserts that were not cached (cost above `maxBytes`, or `maxEntries == 0`).
/// - `evictions` counts entries dropped to satisfy the budgets; explicit removals are not evictions.
@_spi(Benchmarks) public struct LRUCache<Key: Hashable, Value> {
    // Storage is `@usableFromInline` and the methods `@inlinable` so that clients in other modules get code
    // specialized for their concrete `Key`/`Value`; unspecialized generic code is 3-10x slower here.

    @usableFromInline
    struct Node {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        /// Neighbour towards the most recent end, or `-1`.
        @usableFromInline var prev: Int32
        /// Neighbour towards the least recent end, or `-1`; links the free list for unused slots.
        @usableFromInline var next: Int32

        @inlinable
        init(key: Key?, value: Value?, cost: Int, prev: Int32, next: Int32) {
            self.key = key
            self.value = value
            self.cost = cost
            self.prev = prev
            self.next = next
        }
    }

    @inlinable
    static var none: Int32 { -1 }

    @usableFromInline var nodes: [Node] = []
    @usableFromInline var slots: [Key: Int32] = [:]
    /// Most recently used slot.
    @usableFromInline var head: Int32 = -1
    /// Least recently used slot.
    @usableFromInline var tail: Int32 = -1
    @usableFromInline var freeHead: Int32 = -1
    @usableFromInline var storedTotalCost: Int = 0
    @usableFromInline var counters = Counters()

    @usableFromInline
    struct Counters {
        @usableFromInline var hits = 0
        @usableFromInline var misses = 0
        @usableFromInline var evictions = 0
        @usableFromInline var insertions = 0
        @usableFromInline var rejections = 0

        @inlinable
        init() {}
    }

    /// Maximum number of entries kept.
    ///
    /// - Complexity: O(1)
    public let maxEntries: Int

    /// Maximum sum of the per-entry costs (in bytes) kept.
    ///
    /// - Complexity: O(1)
    public let maxBytes: Int

    /// Sum of the costs of the cached entries.
    ///
    /// - Complexity: O(1)
    @inlinable
    public var totalCost: Int { storedTotalCost }

    /// Number of ``value(forKey:)`` calls that found a value.
    ///
    /// - Complexity: O(1)
    @inlinable
    public var hits: Int { counters.hits }

    /// Number of ``value(forKey:)`` calls that found nothing.
    ///
    /// - Complexity: O(1)
    @inlinable
    public var misses: Int { counters.misses }

    /// Number of entries dropped to stay within `maxEntries` / `maxBytes`.
    ///
    /// - Complexity: O(1)
    @inlinable
    public var evictions: Int { counters.evictions }

    /// Number of successful inserts (new keys and replacements).
    ///
    /// - Complexity: O(1)
    @inlinable
    public var insertions: Int { counters.insertions }

    /// Number of inserts that were refused because the value could never fit.
    ///
    /// - Complexity: O(1)
    @inlinable
    public var rejections: Int { counters.rejections }

    /// Creates an empty cache.
    ///
    /// - Parameters:
    ///   - maxEntries: Entry budget, `0..<Int(Int32.max)`. With `0` every insert is rejected.
    ///   - maxBytes: Cost budget, `>= 0`.
    /// - Complexity: O(1)
    @inlinable
    public init(maxEntries: Int, maxBytes: Int = .max) {
        precondition(maxEntries >= 0 && maxEntries < Int(Int32.max), "maxEntries out of range")
        precondition(maxBytes >= 0, "maxBytes must not be negative")
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
    }

    /// Number of cached entries.
    ///
    /// - Complexity: O(1)
    @inlinable
    public var count: Int { slots.count }

    /// Whether the cache holds no entries.
    ///
    /// - Complexity: O(1)
    @inlinable
    public var isEmpty: Bool { slots.isEmpty }

    /// The cached keys ordered from most to least recently used.
    ///
    /// - Complexity: O(n)
    @inlinable
    public var keys: [Key] {
        var result: [Key] = []
        result.reserveCapacity(count)
        var slot = head
        while slot != Self.none {
            if let key = nodes[Int(slot)].key {
                result.append(key)
            }
            slot = nodes[Int(slot)].next
        }
        return result
    }

    /// Returns the value for `key` and marks it most recently used; counts a hit or a miss.
    ///
    /// - Complexity: O(1)
    @inlinable
    public mutating func value(forKey key: Key) -> Value? {
        guard let slot = slots[key] else {
            counters.misses += 1
            return nil
        }
        counters.hits += 1
        moveToFront(slot)
        return nodes[Int(slot)].value
    }

    /// Returns the value for `key` without changing recency or counters.
    ///
    /// - Complexity: O(1)
    @inlinable
    public func peek(_ key: Key) -> Value? {
        guard let slot = slots[key] else { return nil }
        return nodes[Int(slot)].value
    }

    /// Whether `key` is cached; does not change recency or counters.
    ///
    /// - Complexity: O(1)
    @inlinable
    public func contains(_ key: Key) -> Bool {
        slots[key] != nil
    }

    /// The cost recorded for `key`, if cached; does not change recency or counters.
    ///
    /// - Complexity: O(1)
    @inlinable
    public func cost(forKey key: Key) -> Int? {
        guard let slot = slots[key] else { return nil }
        return nodes[Int(slot)].cost
    }

    /// Inserts or replaces the value for `key` as the most recently used entry, then evicts least recently used
    /// entries until both budgets hold.
    ///
    /// A value whose `cost` exceeds `maxBytes` (or any value when `maxEntries == 0`) is not cached: it counts as a
    /// rejection and any previous value for `key` is removed, so the cache never serves a superseded value.
    ///
    /// - Parameters:
    ///   - value: The value to cache.
    ///   - key: Its key.
    ///   - cost: Its size in bytes, `>= 0`.
    /// - Returns: `true` if the value is now cached, `false` if it was rejected.
    /// - Complexity: O(1) amortized, plus O(1) per evicted entry.
    @inlinable
    @discardableResult
    public mutating func insert(_ value: Value, forKey key: Key, cost: Int) -> Bool {
        precondition(cost >= 0, "cost must not be negative")
        guard cost <= maxBytes, maxEntries > 0 else {
            counters.rejections += 1
            if let slot = slots.removeValue(forKey: key) {
                freeSlot(slot)
            }
            return false
        }
        counters.insertions += 1
        // One hash for the common new-key path: claim the slot `allocate` will return, then undo on a replace.
        let newSlot = freeHead != Self.none ? freeHead : Int32(truncatingIfNeeded: nodes.count)
        if let slot = slots.updateValue(newSlot, forKey: key) {
            slots[key] = slot
            storedTotalCost += cost - nodes[Int(slot)].cost
            nodes[Int(slot)].value = value
            nodes[Int(slot)].cost = cost
            moveToFront(slot)
        } else {
            let slot = allocate(key: key, value: value, cost: cost)
            assert(slot == newSlot, "allocate must hand out the claimed slot")
            storedTotalCost += cost
            linkAtHead(slot)
        }
        // The new head has cost <= maxBytes and maxEntries >= 1, so it is never evicted itself.
        evict()
        return true
    }

    /// Removes and returns the value for `key`; not counted as an eviction.
    ///
    /// - Complexity: O(1)
    @inlinable
    @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        guard let slot = slots.removeValue(forKey: key) else { return nil }
        return freeSlot(slot)
    }

    /// Removes every entry for which `shouldBeRemoved` returns `true`; not counted as evictions.
    ///
    /// Entries are visited from most to least recently used. If the predicate throws, the entries removed so far stay
    /// removed and the cache remains consistent.
    ///
    /// - Returns: The number of removed entries.
    /// - Complexity: O(n)
    @inlinable
    @discardableResult
    public mutating func removeAll(where shouldBeRemoved: (Key, Value) throws -> Bool) rethrows -> Int {
        var removed = 0
        var slot = head
        while slot != Self.none {
            let next = nodes[Int(slot)].next
            if let key = nodes[Int(slot)].key, let value = nodes[Int(slot)].value, try shouldBeRemoved(key, value) {
                slots.removeValue(forKey: key)
                freeSlot(slot)
                removed += 1
            }
            slot = next
        }
        return removed
    }

    /// Removes every entry and releases the storage; counters are kept (see ``resetCounters()``).
    ///
    /// - Complexity: O(n)
    @inlinable
    public mutating func removeAll() {
        nodes = []
        slots = [:]
        head = Self.none
        tail = Self.none
        freeHead = Self.none
        storedTotalCost = 0
    }

    /// Sets `hits`, `misses`, `evictions`, `insertions` and `rejections` to zero.
    ///
    /// - Complexity: O(1)
    @inlinable
    public mutating func resetCounters() {
        counters = Counters()
    }

    // MARK: - Linked list

    /// Evicts from the tail until both budgets hold.
    @inlinable
    mutating func evict() {
        while tail != Self.none && (slots.count > maxEntries || storedTotalCost > maxBytes) {
            let victim = tail
            if let key = nodes[Int(victim)].key {
                slots.removeValue(forKey: key)
            }
            freeSlot(victim)
            counters.evictions += 1
        }
    }

    @inlinable
    mutating func allocate(key: Key, value: Value, cost: Int) -> Int32 {
        let node = Node(key: key, value: value, cost: cost, prev: Self.none, next: Self.none)
        if freeHead != Self.none {
            let slot = freeHead
            freeHead = nodes[Int(slot)].next
            nodes[Int(slot)] = node
            return slot
        }
        nodes.append(node)
        return Int32(truncatingIfNeeded: nodes.count - 1)
    }

    /// Unlinks `slot`, subtracts its cost, clears it and pushes it on the free list. The caller removes the key from
    /// `slots`.
    @inlinable
    @discardableResult
    mutating func freeSlot(_ slot: Int32) -> Value? {
        unlink(slot)
        let index = Int(slot)
        storedTotalCost -= nodes[index].cost
        let value = nodes[index].value
        nodes[index].key = nil
        nodes[index].value = nil
        nodes[index].cost = 0
        nodes[index].prev = Self.none
        nodes[index].next = freeHead
        freeHead = slot
        return value
    }

    @inlinable
    mutating func unlink(_ slot: Int32) {
        let prev = nodes[Int(slot)].prev
        let next = nodes[Int(slot)].next
        if prev != Self.none {
            nodes[Int(prev)].next = next
        } else {
            head = next
        }
        if next != Self.none {
            nodes[Int(next)].prev = prev
        } else {
            tail = prev
        }
    }

    @inlinable
    mutating func linkAtHead(_ slot: Int32) {
        nodes[Int(slot)].prev = Self.none
        nodes[Int(slot)].next = head
        if head != Self.none {
            nodes[Int(head)].prev = slot
        } else {
            tail = slot
        }
        head = slot
    }

    @inlinable
    mutating func moveToFront(_ slot: Int32) {
        guard slot != head else { return }
        unlink(slot)
        linkAtHead(slot)
    }

    // MARK: - Testing support

    /// Verifies the internal structure; returns a description of the first problem found, or `nil`.
    func structuralProblem() -> String? {
        var seen = 0
        var cost = 0
        var prev = Self.none
        var slot = head
        while slot != Self.none {
            guard seen <= nodes.count else { return "cycle in list" }
            let node = nodes[Int(slot)]
            guard node.prev == prev else { return "bad prev link at \(slot)" }
            guard let key = node.key, node.value != nil else { return "empty node in list at \(slot)" }
            guard slots[key] == slot else { return "index mismatch at \(slot)" }
            seen += 1
            cost += node.cost
            prev = slot
            slot = node.next
        }
        guard tail == prev else { return "bad tail" }
        guard seen == slots.count else { return "count mismatch: list \(seen), index \(slots.count)" }
        guard cost == totalCost else { return "cost mismatch: list \(cost), totalCost \(totalCost)" }
        var free = 0
        slot = freeHead
        while slot != Self.none {
            guard free <= nodes.count else { return "cycle in free list" }
            guard nodes[Int(slot)].key == nil else { return "occupied node in free list" }
            free += 1
            slot = nodes[Int(slot)].next
        }
        guard free + seen == nodes.count else { return "leaked slots" }
        guard count <= maxEntries, totalCost <= maxBytes else { return "over budget" }
        return nil
    }
}
