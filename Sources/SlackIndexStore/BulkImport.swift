import Foundation
import GRDB

/// One batch of an export's day files, ready for the store.
package struct ImportBatch: Sendable {
    /// Messages in ts order (the order keeps every index append-only).
    package var messages: [PreparedMessage] = []
    package var deletions: [MessageDeletion] = []
    /// Users seen only in messages.
    package var placeholders: [User] = []
    /// The messages' raw JSON packed and compressed (`RawBlocks`); `PreparedMessage.rawLocation` points into it.
    package var rawBlocks: [[UInt8]] = []
    /// The next batch is the next part of this one (`split(maxMessages:)`): it shares `rawBlocks`, and the
    /// session writes both in one transaction.
    package var continues = false

    package init(messages: [PreparedMessage] = [], deletions: [MessageDeletion] = [], placeholders: [User] = []) {
        self.messages = messages
        self.deletions = deletions
        self.placeholders = placeholders
    }
}

/// What writing one batch did, and where its time went.
package struct BatchWriteResult: Sendable {
    package var counts = WriteCounts()
    /// Seconds spent adding to the full-text index.
    package var indexSeconds: Double = 0
    /// Seconds the writer waited for a WAL checkpoint after a commit.
    package var checkpointSeconds: Double = 0
}

/// A bulk import stopped by a failed write (the disk full, an I/O error): what had been committed before it, which
/// stays in the archive, and why.
package struct BulkImportFailure: Error {
    /// What the committed transactions wrote (the open transaction was rolled back).
    package var committed: WriteCounts
    /// The archive's path.
    package var path: String
    /// The disk holding the archive is full (SQLITE_FULL).
    package var isDiskFull: Bool
    /// Everything was committed, but the write-ahead log could not be copied into the archive at the end: the
    /// data is safe in the log (`PATH-wal`), which the next write that can checkpoint copies.
    package var inWAL = false
    /// Bytes free on that disk for this user, when known.
    package var freeBytes: Int64?
    /// SQLite's words.
    package var reason: String
}

/// What an export import starts from: the workspace and the conversations the listings created.
package struct ExportListingsResult: Sendable {
    package var usersAdded = 0
    package var usersUpdated = 0
    package var conversationsAdded = 0
    package var conversationsUpdated = 0
    package var conversationsUnchanged = 0
    /// Conversation row ids by export folder.
    package var rowIDsByFolder: [String: Int64] = [:]
    /// Conversations that held messages before this import (their reply counts are re-counted whole).
    package var preexisting: Set<Int64> = []
    /// The workspace the listings belong to.
    package var teamID: String
}

extension ImportBatch {
    /// Packs the raw JSON of `messages[start...]` (one conversation's day, in file order) into compressed blocks:
    /// the import's reader thread calls it, so the compression runs beside the writer.
    ///
    /// - Complexity: O(n) in the JSON's bytes.
    package mutating func packRaws(from start: Int) {
        RawBlocks.pack(&messages, from: start, into: &rawBlocks)
    }

    /// The batch in parts of at most `maxMessages` messages each, in order and of near-equal sizes, so that the
    /// import's writer holds a part rather than a batch, and the parts it has written can be freed while the rest
    /// wait (a batch is whole dates: 1,370 messages a date on average in the 1M export, 5,480 in the 10M one).
    ///
    /// Every part shares the blocks (`rawBlocks`, not copied), since a block holds one file's messages and a
    /// date's messages are sorted across its files; `SQLiteImportSession.write` stores each block once, by the
    /// first part with a new message in it, and commits only after the last part (`continues` is false there).
    /// The placeholders go with the first part, the deletions with the last (they apply after the messages).
    /// - Complexity: O(n) moves; no message is copied (`Array.reverse`, used before, copied every message it
    ///   swapped: ~1% of the 1M import's samples in `perf`, its retains and releases).
    package consuming func split(maxMessages: Int) -> [ImportBatch] {
        let count = messages.count
        let parts = (count + max(1, maxMessages) - 1) / max(1, maxMessages)
        guard parts > 1 else { return [self] }
        // Moved out of `messages` from the end (`popLast` moves), into their places in a buffer; each part then
        // moves its range out of the buffer, in order.
        let moved = UnsafeMutablePointer<PreparedMessage>.allocate(capacity: count)
        defer { moved.deallocate() }
        var index = count
        while let message = messages.popLast() {
            index -= 1
            (moved + index).initialize(to: consume message)
        }
        var result: [ImportBatch] = []
        result.reserveCapacity(parts)
        for part in 0..<parts {
            let start = part * count / parts
            let size = (part + 1) * count / parts - start
            var batch = ImportBatch()
            batch.messages = Array(unsafeUninitializedCapacity: size) { buffer, initialized in
                buffer.baseAddress?.moveInitialize(from: moved + start, count: size)
                initialized = size
            }
            batch.rawBlocks = rawBlocks
            batch.continues = true
            result.append(batch)
        }
        result[0].placeholders = placeholders
        result[parts - 1].deletions = deletions
        result[parts - 1].continues = continues
        return result
    }
}

extension SQLiteArchive {
    /// Merges the search index into one segment (FTS5's `optimize`) written in leaves of `mergedLeafSize` bytes;
    /// later writes go on in leaves of `writeLeafSize` (migration v4's `pgsz`), which imports append fastest.
    ///
    /// Small leaves for the merged index, where nearly every search reads: FTS5 walks a doclist newest first by
    /// reading each leaf it lands on whole, so a `NOT` or `AND` with a very common word (each match of the other
    /// word looks the common one up, landing on a new leaf each time) read ~16,000 bytes of `the` per match. On the
    /// generated 1M archive, leaves of 16,000 / 4,000 / 1,000 bytes: `success -the` 17.5 / 12.9 / 7.3 ms,
    /// `locale -the` 17.1 / 12.3 / 6.5 ms, `success -the before:2023-09-23` 9.6 / 7.0 / 4.0 ms; whole-doclist
    /// reads (`the`, 538,007 messages, in the sqlite3 shell) 30 / 30 / 32 ms; the archive 562.9 MB against 560.0.
    static func optimizeIndex(_ db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO message_fts (message_fts, rank) VALUES ('pgsz', \(mergedLeafSize));
                INSERT INTO message_fts (message_fts) VALUES ('optimize');
                INSERT INTO message_fts (message_fts, rank) VALUES ('pgsz', \(writeLeafSize));
                """)
    }

    /// The search index's tokenizer and its arguments (migration v20): "pairs" adds the word pairs of "the"
    /// (`Sources/CSlackTokenizer/slack_tokenizer.c`).
    package static let indexTokenizer = "slackindex pairs"

    /// The search index's leaf size for what `optimizeIndex` merges.
    static let mergedLeafSize = 1_000
    /// The search index's leaf size for other writes (imports, syncs, FTS5's automerge).
    static let writeLeafSize = 16_000

    /// Stores an export's workspace, users and conversations in one transaction.
    ///
    /// - Complexity: O(users + conversations) primary-key lookups.
    package func storeExportListings(
        teamID: String, users: [UserInput], conversations: [ConversationInput]
    ) throws -> ExportListingsResult {
        try pool.write { db in
            var result = ExportListingsResult(teamID: teamID)
            let workspaceID = try SQLiteArchive.upsertWorkspace(teamID: teamID, domain: nil, in: db)
            (result.usersAdded, result.usersUpdated) = try SQLiteArchive.upsertUsers(users, in: db)
            for input in conversations {
                let (rowID, outcome) = try SQLiteArchive.upsertConversation(input, workspaceID: workspaceID, in: db)
                if let folder = input.folder { result.rowIDsByFolder[folder] = rowID }
                switch outcome {
                case .added: result.conversationsAdded += 1
                case .updated: result.conversationsUpdated += 1
                case .unchanged: result.conversationsUnchanged += 1
                }
            }
            result.preexisting = try SQLiteArchive.conversationsWithMessages(Set(result.rowIDsByFolder.values), in: db)
            return result
        }
    }

    /// Messages to a transaction of an export's import. Every commit writes the pages the transaction touched to
    /// the WAL (the full-text index's newest segments and structure, the indexes' last leaves, again and again),
    /// and the checkpoint thread copies them: the 3M export imported in 49.0–49.9 s with 20,000 (12.3 s of system
    /// time), 43.9–44.7 s with 200,000 (6.3 s; 100,000: 46.2 s, 500,000: 47.3 s), peak RSS the same (~94 MB: SQLite
    /// spills the transaction's pages past its cache to the WAL). An import stopped by `kill -9` loses at most this
    /// many messages' work, redone when it runs again. Pages (dumps) are held in memory until written
    /// (`PageBuffer`), so they go 20,000 at a time.
    package var commitMessages: (export: Int, pages: Int) { (200_000, 20_000) }

    /// Packs the raw JSON of one file's messages into compressed blocks (`RawBlocks`): on the reader's thread, so
    /// the compression runs beside the writer.
    package func prepareForWrite(_ batch: inout ImportBatch, from start: Int) { batch.packRaws(from: start) }

    package func prepareForWrite(_ page: inout PageWrite) { page.packRaws() }

    /// Runs an import session (`ImportSink.importSession`): `body` hands the session export batches or pages on
    /// the calling thread; the store owns the transactions, the WAL and its checkpoints, and ends the import
    /// (workspace domain, pending events, reply counts) when `body` returns.
    ///
    /// Transactions of `plan.commitMessages` messages (several batches or pages; by default `commitMessages`):
    /// SQLite writes the touched pages at every commit, so bigger transactions write less (1M messages: 30.8 s with
    /// 2,000 per commit, 27.3 s with 20,000). FTS5 flushes its pending terms
    /// every megabyte of them regardless (its `hashsize` default; 4 to 64 MB at 200,000 a commit imported the 3M
    /// export in 41.9–47.0 s, within the spread of 1 MB's runs, for up to 36 MB more RSS).
    ///
    /// Checkpoints happen on their own thread (`Checkpointer`) instead of inside the writer's commits, which had
    /// cost the writer 5.4 s of the 27.3 s (a dump's pages with SQLite's automatic checkpoint: 56% of the 1M
    /// import's time was I/O wait); the WAL starts over every `checkpointPages` pages (256 MB) and is truncated at
    /// the end. When `body` throws, the open transaction rolls back (committed writes stay: the import is idempotent
    /// and resumes by running again).
    /// - Throws: what `body` throws, or `BulkImportFailure` when a write fails.
    package func importSession(_ plan: ImportPlan, _ body: (any ImportSession) throws -> Void) throws {
        let wal = WALLength()
        pool.writeWithoutTransaction { db in wal.install(on: db) }
        // On the paths that throw: the import's own failure is what the user hears; the final checkpoint below is
        // checked on the path that succeeds.
        var checkpointed = false
        defer { if !checkpointed { try? finalCheckpoint(uninstalling: wal) } }
        // Declared after the deferred TRUNCATE, so stopped before it on every path.
        let checkpointer = try? Checkpointer(path: path)
        defer { _ = checkpointer?.stop() }
        var ended: SQLiteImportSession.Ending?
        try pool.writeWithoutTransaction { db in
            let session = SQLiteImportSession(
                db: db, wal: wal, checkpointer: checkpointer, plan: plan, exportCommit: commitMessages.export,
                pagesCommit: commitMessages.pages)
            do {
                try body(session)
                try session.commitIfOpen()
                ended = session.ending
                try session.end(export: plan.export)
            } catch let error as DatabaseError {
                session.rollbackIfOpen()
                throw failure(error, committed: session.committed)
            } catch {
                session.rollbackIfOpen()
                throw error
            }
        }
        _ = checkpointer?.stop()
        checkpointed = true
        let committed = ended?.committed ?? WriteCounts()
        try finalCheckpoint(uninstalling: wal, committed: committed)
        // After the final checkpoint: every message is in the archive's file, and the merge's log starts empty
        // (before it, the merge's frames added to the import's in the log: 150,000 messages needed 36 MB more disk).
        // An export's import only: dumps and syncs rely on FTS5's automerge.
        if plan.export != nil, committed.added >= mergeIndexAfter, ended?.stopped == false { mergeSearchIndex() }
    }

    /// Merges the full-text index's segments into one (FTS5's `optimize`), in a transaction of its own after every
    /// message is committed.
    ///
    /// A bulk import leaves the index in many segments (30 after the generated 1M export, with automerge 16), and
    /// every term of a query is looked up in each, every `NOT` checked in each: merged, `bench search` on that
    /// archive went p50 1.08 / 1.19 → 0.82 / 0.84 ms and p99 14.8 / 20.6 → 13.0 / 12.9 ms, for 1.7 s of merging
    /// (16.3 s at 10M, 19 segments). It rewrites the index, so it runs after the import's final checkpoint (the
    /// log then holds only the merge: about the index's size) and truncates the log after it. On a failure (a
    /// full disk) it rolls back and the index stays as it was: searches give the same hits either way, so nothing
    /// is reported.
    func mergeSearchIndex() {
        try? pool.write { db in try SQLiteArchive.optimizeIndex(db) }
        // The log back to empty, whether the merge committed or rolled back (its frames stay in the file).
        try? pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    }
}

extension SQLiteArchive {
    /// A failed write told as a `BulkImportFailure`: the archive's path, whether the disk is full, the space free.
    package func failure(_ error: DatabaseError, committed: WriteCounts) -> BulkImportFailure {
        BulkImportFailure(
            committed: committed, path: path, isDiskFull: error.resultCode == .SQLITE_FULL,
            freeBytes: SQLiteArchive.freeBytes(besides: path), reason: error.message ?? "\(error.resultCode)")
    }

    /// Gives the connection back to automatic checkpoints and copies the WAL into the archive, truncating it.
    ///
    /// A checkpoint that readers hold back (`serve` reading) is left to a later one; one that fails (a full disk:
    /// the archive's file cannot grow) throws.
    /// - Throws: `BulkImportFailure` with `inWAL`, counting `committed` as written.
    func finalCheckpoint(uninstalling wal: WALLength, committed: WriteCounts = WriteCounts()) throws {
        do {
            try pool.writeWithoutTransaction { db in
                try wal.uninstall(from: db)
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
        } catch let error as DatabaseError {
            var stopped = failure(error, committed: committed)
            stopped.inWAL = true
            throw stopped
        }
    }

    /// `error` as a `BulkImportFailure` when it is a failed write of the store's (committing nothing), else nil.
    package func writeFailure(from error: any Error) -> BulkImportFailure? {
        if let failure = error as? BulkImportFailure { return failure }
        guard let error = error as? DatabaseError else { return nil }
        return failure(error, committed: WriteCounts())
    }

    /// Runs a write, telling a failed one as a `BulkImportFailure` (listings, reply recounts, a sync's state: each
    /// one transaction).
    /// - Parameter committed: what was committed before `write` (a bulk import's messages), told with the failure.
    package func reportingFailure<T>(committed: WriteCounts = WriteCounts(), _ write: () throws -> T) throws -> T {
        do {
            return try write()
        } catch let error as DatabaseError {
            throw failure(error, committed: committed)
        }
    }

    /// Bytes free for this user on the file system holding `path`, or nil when it cannot be asked.
    static func freeBytes(besides path: String) -> Int64? {
        var info = statvfs()
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard statvfs(folder, &info) == 0 else { return nil }
        let (bytes, overflow) = Int64(clamping: info.f_bavail).multipliedReportingOverflow(by: Int64(clamping: info.f_frsize))
        return overflow ? Int64.max : bytes
    }

    /// Test support: the database's size in pages, as the writer sees it (WAL included).
    package func pageCount() throws -> Int {
        try pool.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0 }
    }

    /// Test support: caps the writer connection's database size at `pages` pages, so that writes past it fail as
    /// on a full disk (SQLITE_FULL). `nil` lifts the cap.
    package func limitSizeForTesting(pages: Int?) throws {
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA max_page_count = \(pages ?? 1_073_741_823)")
        }
    }
}

/// The writer side of an import or a sync, valid only inside `SQLiteArchive.importSession`'s body: export batches
/// and pages into transactions of `plan.commitMessages` messages, listings met on the way in between.
///
/// Not `Sendable`: it holds the writer connection of the closure it was made in.
final class SQLiteImportSession: ImportSession {
    /// What the session did, for the end of the import.
    struct Ending {
        var committed: WriteCounts
        var stopped: Bool
    }

    private let db: Database
    private let wal: WALLength
    private let checkpointer: Checkpointer?
    private let commitMessages: Int
    /// WAL pages after which the writer waits for the WAL to start over (256 MB of 16 KiB pages).
    private let checkpointPages: Int32 = 16_000
    private var inTransaction = false
    private var pending = 0
    /// What the open transaction wrote, and what committed ones did.
    private var uncommitted = WriteCounts()
    fileprivate private(set) var committed = WriteCounts()
    /// An export's threads whose replies outnumber their declared count (`ReplyCountCheck`).
    private var replyCounts = ReplyCountCheck()
    /// Conversations whose reply counts are raised when the session ends (`recountReplies`).
    private var recount = Set<Int64>()
    /// The messages counted so far that later pages may hold again (`RepeatedCopies`).
    private var copies = RepeatedCopies()
    private var domain: String?
    package var isStopped = false
    /// The blocks of a split batch whose next part is still to come (`ImportBatch.continues`).
    private var carried: PackedBlocks?
    /// What that batch's parts so far add to `message_count`: flushed once, after its last part (per part, the
    /// 10M import upserted each conversation of a date three times, ~1.4M upserts more).
    private var carriedCounts: [Int64: MessageCountDelta] = [:]

    fileprivate init(
        db: Database, wal: WALLength, checkpointer: Checkpointer?, plan: ImportPlan, exportCommit: Int, pagesCommit: Int
    ) {
        self.db = db
        self.wal = wal
        self.checkpointer = checkpointer
        self.commitMessages = plan.commitMessages ?? (plan.export == nil ? pagesCommit : exportCommit)
    }

    fileprivate var ending: Ending { Ending(committed: committed, stopped: isStopped) }

    /// The workspace's Slack domain, once the import has learned it (stored when the import finishes).
    package var workspaceDomain: String? {
        get { domain }
        set { domain = domain ?? newValue }
    }

    /// Writes one batch: placeholders, messages (upserted on conversation and ts), deletions. Commits when the
    /// open transaction holds `commitMessages` messages and the batch is not a part with more to come
    /// (`ImportBatch.continues`): the parts of a split batch are written in one transaction, in order.
    ///
    /// - Complexity: O(m log n) for m messages in an archive of n.
    /// - Throws: a `DatabaseError` (SQLITE_MISUSE; `importSession` reports it as a `BulkImportFailure` and rolls
    ///   back) when a batch follows a part that continues and is not its next part.
    package func write(_ batch: ImportBatch) throws -> BatchWriteResult {
        var result = BatchWriteResult()
        try beginIfNeeded()
        // A part's messages point into the blocks its earlier parts had; other blocks would give them other JSON.
        if let carried, !carried.holds(batch.rawBlocks) {
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE, message: "a batch part that does not follow its earlier part")
        }
        result.counts.placeholders = try SQLiteArchive.insertPlaceholders(batch.placeholders, in: db)
        // Taken out, so that the writer's changes to the block ids do not copy them.
        let continuing = carried.take()
        var writer = try MessageWriter(db, continuing: continuing ?? PackedBlocks(), counts: take(&carriedCounts))
        if continuing == nil { writer.usePackedRaws(batch.rawBlocks) }
        // Read in place through pointers (`MessageWriter.upsert(at:)`): a message passed by value, even from a
        // buffer pointer, is copied (twice per message here: ~4% of the writer thread's samples at 1M).
        try batch.messages.withUnsafeBufferPointer { messages in
            guard let first = messages.baseAddress else { return }
            for index in messages.indices {
                let message = first + index
                let outcome = try writer.upsert(at: message)
                replyCounts.note(message, outcome)
                result.counts.count(outcome)
            }
        }
        if batch.continues {
            carried = writer.packed
            carriedCounts = writer.addedCounts
        } else {
            try writer.flushCounts()
        }
        result.indexSeconds = writer.indexSeconds
        uncommitted.add(result.counts)
        for deletion in batch.deletions {
            try SQLiteArchive.delete(conversationRowID: deletion.conversationRowID, tsKey: deletion.tsKey, in: db)
        }
        pending += batch.messages.count + batch.deletions.count
        if pending >= commitMessages && !batch.continues { result.checkpointSeconds = try commit() }
        return result
    }

    /// Writes pages into the open transaction (`SQLiteArchive.write(pages:copies:in:)`); commits once it holds
    /// `commitMessages` messages.
    ///
    /// - Throws: a `DatabaseError` (SQLITE_MISUSE) after a batch part with more to come.
    package func write(pages: [PageWrite]) throws -> WriteCounts {
        try notInsideASplitBatch()
        try beginIfNeeded()
        let counts = try SQLiteArchive.write(pages: pages, copies: &copies, in: db)
        uncommitted.add(counts)
        pending += pages.reduce(1) { $0 + $1.messages.count + $1.deletions.count }
        if pending >= commitMessages { _ = try commit() }
        return counts
    }

    package func storeListings(
        users: [UserInput], conversations: [ConversationInput], workspace: WorkspaceInput?
    ) throws -> ListingCounts {
        try committing {
            try SQLiteArchive.storeListings(users: users, conversations: conversations, workspace: workspace, in: db)
        }
    }

    package func storeNames(
        users: [String: String], conversations: [String: (name: String, kind: ConversationKind)]
    ) throws -> NameCounts {
        try committing { try SQLiteArchive.storeNames(users: users, conversations: conversations, in: db) }
    }

    package func addConversationIfMissing(_ input: ConversationInput, workspace: WorkspaceInput?) throws -> Bool {
        try committing { try SQLiteArchive.addConversationIfMissing(input, workspace: workspace, in: db) }
    }

    package func recountReplies(conversations rowIDs: [Int64]) {
        recount.formUnion(rowIDs)
    }

    /// Runs `write` in the open transaction and commits it with what the transaction holds, so that readers see
    /// it when this returns (a listing met on the way: the reader then resolves names through it).
    private func committing<T>(_ write: () throws -> T) throws -> T {
        try notInsideASplitBatch()
        try beginIfNeeded()
        let result = try write()
        _ = try commit()
        return result
    }

    private func beginIfNeeded() throws {
        guard !inTransaction else { return }
        // Counts left by a transaction that ended without committing are not this one's (`WordCounts.discard`).
        try WordCounts.of(db).discard()
        try db.beginTransaction()
        inTransaction = true
    }

    /// Pages and listings never come between the parts of a split batch (they share its transaction's blocks).
    private func notInsideASplitBatch() throws {
        guard carried == nil else {
            throw DatabaseError(resultCode: .SQLITE_MISUSE, message: "a write between the parts of a batch")
        }
    }

    /// Commits the open transaction; waits for the WAL to start over when it is long. Returns the seconds waited.
    private func commit() throws -> Double {
        try WordCounts.of(db).flush(db)
        try db.commit()
        inTransaction = false
        pending = 0
        committed.add(uncommitted)
        uncommitted = WriteCounts()
        // The WAL starts over at the next transaction when every frame has been copied: wait for that once it is
        // long; otherwise let the checkpoint thread copy in the background. Without a checkpoint thread (its
        // connection could not open), the writer copies.
        let ticket = checkpointer?.request()
        guard wal.current >= checkpointPages else { return 0 }
        let clock = ContinuousClock.now
        if let checkpointer, let ticket {
            try checkpointer.wait(for: ticket)
        } else {
            try WALLength.checkpoint(db)
        }
        return clock.duration(to: .now).seconds
    }

    /// Commits what is written, the parts of a split batch whose last part never came included (nothing the
    /// import does leaves one: it stops only after a batch's last part).
    fileprivate func commitIfOpen() throws {
        if carried.take() != nil, !carriedCounts.isEmpty {
            var writer = try MessageWriter(db, counts: take(&carriedCounts))
            try writer.flushCounts()
        }
        guard inTransaction else { return }
        try WordCounts.of(db).flush(db)
        try db.commit()
        inTransaction = false
        committed.add(uncommitted)
        uncommitted = WriteCounts()
    }

    fileprivate func rollbackIfOpen() {
        carried = nil
        carriedCounts = [:]
        try? WordCounts.of(db).discard()
        guard inTransaction else { return }
        try? db.rollback()
        inTransaction = false
    }

    /// The import's last transaction: an export's workspace domain, the deletions and reactions whose messages
    /// have arrived, and reply counts: replies that arrived earlier through sync pages count for the parents an
    /// export brought (in conversations new to the archive, only threads whose replies outnumber their declared
    /// count), and the conversations given to `recountReplies`.
    fileprivate func end(export: ExportListingsResult?) throws {
        try db.inTransaction {
            if let export, let domain {
                _ = try SQLiteArchive.upsertWorkspace(teamID: export.teamID, domain: domain, in: db)
            }
            _ = try SQLiteArchive.applyPendingEvents(in: db)
            try WordCounts.of(db).flush(db)
            let whole = recount.union(export?.preexisting ?? [])
            for rowID in whole.sorted() { try SQLiteArchive.refreshReplyCounts(conversationRowID: rowID, in: db) }
            guard export != nil else { return .commit }
            for (rowID, keys) in replyCounts.threadsToRecount() where !whole.contains(rowID) {
                try SQLiteArchive.refreshReplyCounts(conversationRowID: rowID, threadKeys: keys, in: db)
            }
            return .commit
        }
    }
}

/// The value, leaving an empty one in its place (moved, not copied).
private func take<Value>(_ value: inout [Int64: Value]) -> [Int64: Value] {
    var taken: [Int64: Value] = [:]
    swap(&taken, &value)
    return taken
}
