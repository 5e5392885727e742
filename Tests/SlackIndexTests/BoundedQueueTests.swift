import Foundation
import Synchronization
import Testing

@testable import SlackIndex
@testable import SlackIndexTestSupport

/// The reader-to-writer queue: bounded by elements and by weight (messages), first in first out.
@Suite struct BoundedQueueTests {
    /// A push running on another thread.
    final class BackgroundPush: Sendable {
        let returned = Mutex(false)
        /// Signalled when the push returns.
        let done = DispatchSemaphore(value: 0)
    }

    static func pushInBackground(_ queue: BoundedQueue<Int>, _ value: Int, weight: Int) -> BackgroundPush {
        let state = BackgroundPush()
        let thread = Thread {
            queue.push(value, weight: weight)
            state.returned.withLock { $0 = true }
            state.done.signal()
        }
        thread.start()
        return state
    }

    @Test func aPushWaitsWhileTheWaitingWeightWouldPassTheBound() {
        let queue = BoundedQueue<Int>(capacity: 10, maxWeight: 100)
        #expect(queue.push(1, weight: 60))
        #expect(queue.push(2, weight: 40))
        let third = Self.pushInBackground(queue, 3, weight: 1)
        // Nothing can let it through but a pop: if it returned now, the bound did not hold.
        usleep(50_000)
        #expect(third.returned.withLock { $0 } == false)
        #expect(queue.pop() == 1)
        third.done.wait()
        #expect(queue.pop() == 2)
        #expect(queue.pop() == 3)
    }

    @Test func aHeavyElementGoesThroughAloneAndTheCountStillBounds() {
        let queue = BoundedQueue<Int>(capacity: 2, maxWeight: 100)
        #expect(queue.push(1, weight: 500), "alone in an empty queue")
        let second = Self.pushInBackground(queue, 2, weight: 1)
        usleep(50_000)
        #expect(second.returned.withLock { $0 } == false, "behind a heavy one, even a light one waits")
        #expect(queue.pop() == 1)
        second.done.wait()
        #expect(queue.push(3))
        let fourth = Self.pushInBackground(queue, 4, weight: 0)
        usleep(50_000)
        #expect(fourth.returned.withLock { $0 } == false, "two elements: the count bound")
        #expect(queue.pop() == 2)
        fourth.done.wait()
        queue.close()
        #expect(queue.push(5) == false)
        #expect(queue.pop() == 3)
        #expect(queue.pop() == 4)
        #expect(queue.pop() == nil)
    }

    /// Producer and consumer threads with random weights: every element arrives once, in order.
    @Test func elementsArriveInOrderThroughTwoThreads() {
        let queue = BoundedQueue<Int>(capacity: 4, maxWeight: 50)
        var rng = SeededGenerator(seed: 7)
        let weights = (0..<5_000).map { _ in Int.random(in: 0...80, using: &rng) }
        let producer = Thread {
            for (value, weight) in weights.enumerated() { queue.push(value, weight: weight) }
            queue.close()
        }
        producer.start()
        var received: [Int] = []
        while let value = queue.pop() { received.append(value) }
        #expect(received == Array(0..<5_000))
    }
}
