import Foundation

/// A blocking first-in first-out queue with a capacity, to overlap a producer thread and a consumer thread.
///
/// `@unchecked Sendable`: every access to `items` and `closed` happens while holding `condition`.
final class BoundedQueue<Element: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var items: [Element?] = []
    private var head = 0
    private var closed = false
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Appends an element, waiting while the queue is full. Returns false if the queue was closed.
    ///
    /// - Complexity: O(1) amortized.
    @discardableResult
    func push(_ element: Element) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while items.count - head >= capacity && !closed { condition.wait() }
        guard !closed else { return false }
        items.append(element)
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
        let element = items[head]
        items[head] = nil  // release it now, not at the next compaction
        head += 1
        if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        condition.broadcast()
        return element
    }

    /// Wakes everyone; later pushes are refused, pops drain what is left.
    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}
