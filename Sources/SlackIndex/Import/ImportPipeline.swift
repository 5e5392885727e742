import Foundation

/// The one pipeline of every import and sync: the calling thread reads and prepares (an export's day files, a
/// dump's pages and JSON lines, a slackdump database's rows, a sync's answers) and hands the work to a writer thread
/// that owns the sink's one import session (`ImportSink.importSession`), so reading and writing overlap on two
/// cores.
///
/// Writes the reader makes on the way (a conversation first met in a page, a users file in a dump) go through the
/// writer too (`perform`): the session holds the sink's only writer, and it commits what is open before such a
/// write, so the reader reads the result when `perform` returns. After a failed write the writer drains the queue
/// without writing (the open transaction is rolled back; what was committed stays) and `send` returns false.
///
/// `@unchecked Sendable`: `written`, `failure` and `finished` are accessed while holding `lock`; the session is
/// used by the writer thread only.
final class ImportPipeline: @unchecked Sendable {
    /// An export's bookkeeping: its totals, for progress reports, and the stop the writer honours after a batch's
    /// last part (its dates are committed whole).
    struct ExportProgress: Sendable {
        var bytesTotal: Int64
        var filesTotal: Int
        var started: Date
        var handler: Importer.ProgressHandler?
        var stop: StopSignal?
    }

    /// What the writer has written since the reader last asked (`takeWritten`, `finish`).
    struct Written {
        /// Counts, phases, skips and interruption of the batches and pages written (the counts of the open
        /// transaction's writes included).
        var summary = ImportSummary()
        /// What stopped the writer (`finish` only): a `BulkImportFailure` whose `committed` is what the session
        /// committed beyond the counts handed out before (negative where those held writes rolled back), so that
        /// the counts handed out plus these are what stays in the archive.
        var failure: (any Error)?
    }

    private enum Work: Sendable {
        case batch(ReaderBatch)
        case pages([PageWrite])
        /// Runs on the writer thread with the session (nil when the writer has stopped on a failure); returns the
        /// error that stops the writer.
        case call(@Sendable ((any ImportSession)?) -> (any Error)?)
    }

    /// Batches spent by the writer, freed by the reader that allocated them (`DeferredRelease`).
    let spent = DeferredRelease<ReaderBatch>()
    private let queue: BoundedQueue<Work>
    private let export: ExportProgress?
    private let commitMessages: Int
    private let lock = NSLock()
    private let done = DispatchSemaphore(value: 0)
    private var written = Written()
    /// The counts handed out by `takeWritten` and `finish` (see `Written.failure`).
    private var taken = WriteCounts()
    /// Totals for progress reports (never taken).
    private var bytesDone: Int64 = 0
    private var filesDone = 0
    private var messagesDone = 0
    /// What ended the session with an error (set by the writer thread before it signals `done`).
    private var failure: (any Error)?
    private var finished = false

    /// Starts the writer thread on a session of `sink`. Call `finish()` on every path: the thread holds the
    /// pipeline until its queue closes.
    ///
    /// - Parameters:
    ///   - capacity: work items that may wait for the writer; `maxWeight`: messages they may hold (see
    ///     `BoundedQueue`).
    ///   - export: an export's progress and stop, when the work is an export's batches.
    init(
        sink: any ImportSink, plan: ImportPlan, capacity: Int, maxWeight: Int = .max, export: ExportProgress? = nil
    ) {
        queue = BoundedQueue(capacity: capacity, maxWeight: maxWeight)
        self.export = export
        commitMessages = plan.commitMessages(on: sink)
        // The thread holds the sink only while it writes: a closure capturing it would keep the archive open until
        // the thread is torn down, after `done` lets the command finish, and an archive still open when the process
        // exits leaves its -wal and -shm files behind.
        let held = HeldSink(sink)
        let thread = Thread { [self] in
            run(sink: held.take(), plan: plan)
            done.signal()
        }
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// The bytes of the export batches written so far.
    var bytesWritten: Int64 { lock.withLock { bytesDone } }

    /// Hands the writer an export batch (or a part of one: `ImportBatch.continues`). False when the writer has
    /// stopped (a failed write, a stop after a batch): read no further.
    ///
    /// - Parameter limit: the messages the queue may hold for this push (the parts of one batch may all wait).
    func send(_ batch: consuming ReaderBatch, limit: Int) -> Bool {
        let weight = batch.store.messages.count
        return queue.push(.batch(batch), weight: weight, limit: limit)
    }

    /// Hands the writer pages, written into the session's open transaction. False when the writer has stopped.
    @discardableResult
    func send(pages: [PageWrite]) -> Bool {
        queue.push(.pages(pages), weight: pages.reduce(0) { $0 + $1.messages.count })
    }

    /// Runs `write` on the writer thread with the session, after everything sent before it, and waits for it.
    ///
    /// - Throws: what `write` throws (which also stops the writer: the session's writes are the archive's writes,
    ///   and a failed one rolls the open transaction back), or the failure that stopped the writer before.
    func perform<T: Sendable>(_ write: @escaping @Sendable (any ImportSession) throws -> T) throws -> T {
        let answered = DispatchSemaphore(value: 0)
        let box = ResultBox<T>()
        let sent = queue.push(
            .call { session in
                defer { answered.signal() }
                guard let session else { return nil }
                let result = Result { try write(session) }
                box.result = result
                if case .failure(let error) = result { return error }
                return nil
            })
        // Refused when the writer has stopped: the call never runs, and nothing answers.
        if sent { answered.wait() }
        guard sent, let result = box.result else { throw stoppedError() }
        return try result.get()
    }

    /// Writes one page now (a sync's, durable with its progress when the session commits every write) and returns
    /// its counts.
    ///
    /// - Throws: as `perform`.
    func write(page: PageWrite) throws -> WriteCounts {
        let counts = try perform { session in try session.write(pages: [page]) }
        lock.withLock { taken.add(counts) }
        return counts
    }

    /// What was written since the last call (its counts may include the open transaction's).
    ///
    /// - Throws: once the writer has stopped on a failed write, `BulkImportFailure` counting what was committed
    ///   beyond the counts handed out before (see `Written.failure`), once; then nothing more is handed out.
    func takeWritten() throws -> Written {
        guard lock.withLock({ failure }) != nil else { return lock.withLock { handOut() } }
        throw stoppedError()
    }

    /// Once the writer has stopped (the queue refused work, or a failure is known): waits for the session to end and
    /// returns what stopped it (see `takeWritten`), or `CancellationError` after a stop (Ctrl-C).
    private func stoppedError() -> any Error {
        done.wait()
        done.signal()  // for `finish`
        return lock.withLock { () -> any Error in
            guard let failure else { return CancellationError() }
            written = Written()
            return reported(failure)
        }
    }

    /// Closes the queue, waits for the writer to write what it holds and end the session; returns what was written
    /// since the last `takeWritten`, and what stopped the writer (`Written.failure`). Later calls return nothing.
    func finish() -> Written {
        let first = lock.withLock {
            defer { finished = true }
            return !finished
        }
        guard first else { return Written() }
        queue.close()
        done.wait()
        return lock.withLock {
            var result = handOut()
            result.failure = failure.map(reported)
            failure = nil
            return result
        }
    }

    /// `finish()` into `summary`: what was written merged, and what the session committed beyond the counts handed
    /// out (`Written.failure`) added, so that `summary`'s counts are what stays in the archive. Returns what stopped
    /// the writer, its committed counts then zero (they are in `summary`).
    func finish(into summary: inout ImportSummary) -> (any Error)? {
        let written = finish()
        summary.merge(written.summary)
        guard var stopped = written.failure as? BulkImportFailure else { return written.failure }
        summary.add(stopped.committed)
        stopped.committed = WriteCounts()
        return stopped
    }

    /// `written`, handed out and reset. Call holding `lock`.
    private func handOut() -> Written {
        defer { written = Written() }
        taken.add(written.summary.writeCounts)
        return written
    }

    /// `failure` with its committed counts less those handed out (`Written.failure`); later reports count nothing
    /// more. Call holding `lock`.
    private func reported(_ failure: any Error) -> any Error {
        guard var stopped = failure as? BulkImportFailure else { return failure }
        let committed = stopped.committed
        stopped.committed.subtract(taken)
        taken = committed
        return stopped
    }

    /// The writer thread's body; `done` is signalled after it returns (and has let the sink go).
    private func run(sink: consuming (any ImportSink)?, plan: ImportPlan) {
        guard let sink = sink.take() else { return }
        var writeError: (any Error)?
        do {
            try sink.importSession(plan) { session in
                var messagesSinceTrim = 0
                // After a failed write or a stop, what is left in the queue is drained, not written.
                var stopped = false
                while let work = queue.pop() {
                    if writeError != nil || stopped {
                        if case .call(let call) = work { _ = call(nil) }
                        continue
                    }
                    do {
                        switch work {
                        case .batch(let batch):
                            messagesSinceTrim += batch.store.messages.count
                            stopped = try write(batch, to: session)
                        case .pages(let pages):
                            let counts = try session.write(pages: pages)
                            messagesSinceTrim += pages.reduce(0) { $0 + $1.messages.count }
                            lock.withLock { written.summary.add(counts) }
                        case .call(let call):
                            if let failed = call(session) { throw failed }
                        }
                    } catch {
                        writeError = error
                        queue.close()
                        continue
                    }
                    if messagesSinceTrim >= commitMessages {
                        FreeMemory.returnToSystem()
                        messagesSinceTrim = 0
                    }
                }
                // The batches written after the reader's last release: nobody else will free them (freed here,
                // before the import's final commit and checkpoint).
                spent.releaseAll()
                if let writeError { throw writeError }
            }
        } catch {
            lock.withLock { failure = error }
        }
        queue.close()
        // A session that failed to start never drained the queue: answer its calls, or their callers wait forever.
        while let work = queue.pop() {
            if case .call(let call) = work { _ = call(nil) }
        }
        spent.releaseAll()
    }

    /// Writes one reader batch through the session and records what happened; after a batch's last part, honours
    /// a stop (Ctrl-C) and reports progress. Returns whether the import stops here.
    private func write(_ batch: consuming ReaderBatch, to session: any ImportSession) throws -> Bool {
        let writeStart = ContinuousClock.now
        if let domain = batch.domain { session.workspaceDomain = domain }
        let result = try session.write(batch.store)
        let seconds = writeStart.duration(to: .now).seconds
        let partOfMore = batch.store.continues
        // A stop takes effect after the last part of a batch: its dates are committed whole.
        let stopping = export?.stop?.isRequested == true && !partOfMore
        let progress = lock.withLock {
            written.summary.phases.add(batch.phases)
            written.summary.add(result.counts)
            written.summary.phases.index += result.indexSeconds
            written.summary.phases.checkpoint += result.checkpointSeconds
            written.summary.phases.write += seconds - result.indexSeconds - result.checkpointSeconds
            for (reason, count) in batch.skipReasons { written.summary.skipMessage(reason, count: count) }
            written.summary.skippedFiles += batch.skippedFiles
            written.summary.messagesRepaired += batch.textRepaired
            if stopping { written.summary.interrupted = true }
            bytesDone += batch.bytes
            filesDone += batch.files
            messagesDone += result.counts.added + result.counts.updated + result.counts.unchanged
            return (bytesDone, filesDone, messagesDone)
        }
        // Freed by the reader, which allocated it (`DeferredRelease`); the batch's last use.
        spent.add(consume batch)
        if stopping {
            // Commit what is written; the reader stops at its next send.
            session.isStopped = true
            queue.close()
        }
        guard let export, let handler = export.handler else { return stopping }
        handler(
            ImportProgress(
                bytesDone: progress.0, bytesTotal: export.bytesTotal, messagesDone: progress.2,
                filesDone: progress.1, filesTotal: export.filesTotal,
                elapsed: Date().timeIntervalSince(export.started)))
        return stopping
    }
}

/// The sink, handed to the writer thread once (`take`), so that nothing keeps it after the thread's work.
///
/// `@unchecked Sendable`: written in `init`, emptied once by the writer thread before anyone else could look.
private final class HeldSink: @unchecked Sendable {
    private var sink: (any ImportSink)?

    init(_ sink: any ImportSink) { self.sink = sink }

    func take() -> (any ImportSink)? {
        defer { sink = nil }
        return sink
    }
}

/// One answer of the writer thread to `ImportPipeline.perform`.
///
/// `@unchecked Sendable`: written by the writer thread before it signals, read by the reader after it waits.
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}

extension ImportPipeline {
    /// Stores listings met on the way (a dump's users and conversations files) through the writer, after what was
    /// sent before them; they are committed, and readable, when this returns.
    func storeListings(users: [UserInput], conversations: [ConversationInput], workspace: WorkspaceInput?) throws
        -> ListingCounts
    {
        try perform { session in
            try session.storeListings(users: users, conversations: conversations, workspace: workspace)
        }
    }

    /// Stores id → name maps through the writer (see `storeListings`).
    func storeNames(users: [String: String], conversations: [String: (name: String, kind: ConversationKind)]) throws
        -> NameCounts
    {
        let conversations = conversations.mapValues { NamedConversation(name: $0.name, kind: $0.kind) }
        return try perform { session in
            try session.storeNames(users: users, conversations: conversations.mapValues { ($0.name, $0.kind) })
        }
    }

    /// Creates a conversation first met in a page through the writer (see `storeListings`); returns whether it was
    /// added.
    func addConversationIfMissing(_ input: ConversationInput, workspace: WorkspaceInput?) throws -> Bool {
        try perform { session in try session.addConversationIfMissing(input, workspace: workspace) }
    }
}

/// A name and kind from an id map, as a `Sendable` value (a labelled tuple in a dictionary is not one).
private struct NamedConversation: Sendable {
    var name: String
    var kind: ConversationKind
}
