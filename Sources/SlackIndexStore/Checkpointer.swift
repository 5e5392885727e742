import Foundation
import GRDB

/// Copies an import's committed WAL frames into the database file on its own thread and connection, so the
/// writer thread goes on writing meanwhile.
///
/// Checkpoints were a quarter of the writer's time on the 1M-message import (5.4 s of ~22 s) while the reader
/// thread idled a third of the time. PASSIVE checkpoints run beside a writer without blocking it; the writer
/// only waits when it wants the WAL to start over (`waitForCheckpoint`), and then only for the frames of its last
/// transaction, the earlier ones having been copied meanwhile.
///
/// `@unchecked Sendable`: `requested`, `completed`, `stopping`, `failure` and `seconds` are only touched while
/// holding `condition`; `connection` is only used by the checkpoint thread.
final class Checkpointer: @unchecked Sendable {
    private let condition = NSCondition()
    private var requested = 0
    private var completed = 0
    private var stopping = false
    private var finished = false
    private var failure: (any Error)?
    private var busySeconds: Double = 0
    private let connection: DatabaseQueue

    /// Opens a second connection to the archive at `path` and starts the checkpoint thread.
    init(path: String) throws {
        connection = try DatabaseQueue(path: path)
        let thread = Thread { [self] in run() }
        thread.name = "slackindex checkpoint"
        thread.start()
    }

    /// Asks for a checkpoint of everything committed so far and returns its ticket.
    @discardableResult
    func request() -> Int {
        condition.lock()
        defer { condition.unlock() }
        requested += 1
        condition.broadcast()
        return requested
    }

    /// Waits until the checkpoint with `ticket` (or a later one) is done.
    ///
    /// - Throws: the error a checkpoint met, if any (the archive is still consistent: the WAL keeps the frames).
    func wait(for ticket: Int) throws {
        condition.lock()
        defer { condition.unlock() }
        while completed < ticket && failure == nil && !finished { condition.wait() }
        if let failure { throw failure }
    }

    /// Stops the thread after the checkpoints already requested; returns the seconds it spent checkpointing.
    func stop() -> Double {
        condition.lock()
        defer { condition.unlock() }
        stopping = true
        condition.broadcast()
        while !finished { condition.wait() }
        return busySeconds
    }

    private func run() {
        condition.lock()
        defer {
            finished = true
            condition.broadcast()
            condition.unlock()
        }
        while true {
            while completed == requested && !stopping { condition.wait() }
            if completed == requested || failure != nil { return }
            let target = requested
            condition.unlock()
            let start = ContinuousClock.now
            var caught: (any Error)?
            do {
                // PASSIVE never waits for locks; a busy checkpoint lock (another process checkpointing) leaves the
                // frames for the next request.
                try connection.writeWithoutTransaction { db in try WALLength.checkpoint(db) }
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            } catch {
                caught = error
            }
            let elapsed = start.duration(to: .now)
            condition.lock()
            busySeconds += elapsed.seconds
            completed = target
            if let caught { failure = caught }
            condition.broadcast()
        }
    }
}
