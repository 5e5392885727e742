import Foundation
import Synchronization
import Testing

@testable import SlackIndex
@testable import SlackIndexTestSupport

/// Values one thread is done with, released on the thread that calls `releaseAll` (the import's reader).
@Suite struct DeferredReleaseTests {
    /// The roles of the threads instances of `Tracked` were released on, in order (`Thread.name` does not name the
    /// running thread on Linux, so each thread keeps its role in its thread dictionary).
    final class ReleaseLog: Sendable {
        let threads = Mutex<[String]>([])
    }

    /// Logs the name of the thread it is released on.
    final class Tracked: Sendable {
        let log: ReleaseLog
        init(_ log: ReleaseLog) { self.log = log }
        deinit {
            let name = Thread.current.threadDictionary["role"] as? String ?? "another thread"
            log.threads.withLock { $0.append(name) }
        }
    }

    /// Runs `body` on a new thread called `name` and waits for it.
    static func run(on name: String, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            Thread.current.threadDictionary["role"] = name
            body()
            done.signal()
        }
        thread.start()
        done.wait()
    }

    @Test func valuesAddedOnOneThreadAreReleasedOnTheThreadThatReleasesThem() {
        let log = ReleaseLog()
        let release = DeferredRelease<Tracked>()
        DeferredReleaseTests.run(on: "writer") {
            for _ in 0..<5 { release.add(Tracked(log)) }
        }
        // The writer kept no reference, yet nothing was released: the values wait.
        #expect(log.threads.withLock { $0 }.isEmpty)
        #expect(release.count == 5)
        DeferredReleaseTests.run(on: "reader") { release.releaseAll() }
        #expect(log.threads.withLock { $0 } == Array(repeating: "reader", count: 5))
        #expect(release.count == 0)
        // Released once: a second call has nothing left.
        DeferredReleaseTests.run(on: "reader") { release.releaseAll() }
        #expect(log.threads.withLock { $0 }.count == 5)
    }

    @Test func addingWhileAnotherThreadReleasesLosesNothing() {
        let log = ReleaseLog()
        let release = DeferredRelease<Tracked>()
        let total = 10_000
        let adding = DispatchSemaphore(value: 0)
        let thread = Thread {
            Thread.current.threadDictionary["role"] = "writer"
            for _ in 0..<total { release.add(Tracked(log)) }
            adding.signal()
        }
        thread.start()
        var finished = false
        while !finished {
            finished = adding.wait(timeout: .now()) == .success
            DeferredReleaseTests.run(on: "reader") { release.releaseAll() }
        }
        let threads = log.threads.withLock { $0 }
        #expect(threads.count == total)
        #expect(threads.allSatisfy { $0 == "reader" })
    }
}
