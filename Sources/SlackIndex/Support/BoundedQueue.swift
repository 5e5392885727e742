import Foundation

/// A blocking first-in first-out queue with a capacity, to overlap a producer thread and a consumer thread.
///
/// Optionally bounded by weight too (e.g. messages): a push waits while the elements waiting weigh `maxWeight` or
/// more with it, unless the queue is empty (a heavy element still goes through, alone).
///
/// `@unchecked Sendable`: every access to `items` and `closed` happens while holding `condition`.
final class BoundedQueue<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [(element: Element, weight: Int)?] = []
    private var head = 0
    private var closed = false
    private let capacity: Int
    private let maxWeight: Int
    private var weight = 0

    init(capacity: Int, maxWeight: Int = .max) {
        self.capacity = max(1, capacity)
        self.maxWeight = max(1, maxWeight)
    }

    /// Appends an element, waiting while the queue is full. Returns false if the queue was closed.
    ///
    /// - Parameter limit: a weight the queue may reach for this push when it is larger than `maxWeight` (the parts
    ///   of one batch may all wait, so that the producer can start its next batch).
    /// - Complexity: O(1) amortized.
    @discardableResult
    func push(_ element: Element, weight elementWeight: Int = 1, limit: Int = 0) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let maxWeight = max(self.maxWeight, limit)
        let elementWeight = max(0, elementWeight)
        while !closed && items.count > head
            && (items.count - head >= capacity || weight > maxWeight - min(elementWeight, maxWeight))
        {
            condition.wait()
        }
        guard !closed else { return false }
        weight += elementWeight
        items.append((element, elementWeight))
        condition.broadcast()
        return true
    }

    /// Removes the oldest element, waiting while the queue is empty; nil once it is closed and drained.
    ///
    /// - Complexity: O(1) amortized.
    func pop() -> Element? {
        condition.lock()
        defer { condition.unlock() }
        while items.count == head && !closed { condition.wait() }
        guard items.count > head else { return nil }
        let item = items[head]
        items[head] = nil  // release it now, not at the next compaction
        weight -= item?.weight ?? 0
        head += 1
        if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        condition.broadcast()
        return item?.element
    }

    /// Wakes everyone; later pushes are refused, pops drain what is left.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}
