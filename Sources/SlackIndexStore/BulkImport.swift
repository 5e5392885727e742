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
    /// date's messages are sorted across its files; `SQLiteExportSession.write` stores each block once, by the
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

    /// Runs a bulk import: `body` hands the session batch after batch on the calling thread; the store owns the
    /// transactions, the WAL and its checkpoints, and finishes the import (workspace domain, pending events, reply
    /// counts) when `body` returns.
    ///
    /// Transactions of `commitMessages` messages (several batches): SQLite writes the touched pages at every
    /// commit, so bigger transactions write less (1M messages: 30.8 s with 2,000 per commit, 27.3 s with 20,000;
    /// the importer's default is measured in `Importer.exportCommitMessages`). FTS5 flushes its pending terms
    /// every megabyte of them regardless (its `hashsize` default; 4 to 64 MB at 200,000 a commit imported the 3M
    /// export in 41.9–47.0 s, within the spread of 1 MB's runs, for up to 36 MB more RSS).
    ///
    /// Checkpoints happen on their own thread (`Checkpointer`) instead of inside the writer's commits, which had
    /// cost the writer 5.4 s of the 27.3 s; the WAL starts over every `checkpointPages` pages (256 MB) and is
    /// truncated at the end. When `body` throws, the open transaction rolls back (committed batches stay: the
    /// import is idempotent and resumes by running again).
    /// - Throws: what `body` throws, or the store's error when a write fails.
    package func bulkImport(
        _ listings: ExportListingsResult, commitMessages: Int, _ body: (any ExportSession) throws -> Void
    ) throws {
        let wal = WALLength()
        pool.writeWithoutTransaction { db in wal.install(on: db) }
        // On the paths that throw: the import's own failure is what the user hears; the final checkpoint below is
        // checked on the path that succeeds.
        var checkpointed = false
        defer { if !checkpointed { try? finalCheckpoint(uninstalling: wal) } }
        // Declared after the deferred TRUNCATE, so stopped before it on every path.
        let checkpointer = try? Checkpointer(path: path)
        defer { _ = checkpointer?.stop() }
        var replyCounts = ReplyCountCheck()
        var domain: String?
        var stopped = false
        var committed = WriteCounts()
        try pool.writeWithoutTransaction { db in
            let session = SQLiteExportSession(
                db: db, wal: wal, checkpointer: checkpointer, commitMessages: commitMessages)
            do {
                try body(session)
                try session.commitIfOpen()
            } catch let error as DatabaseError {
                session.rollbackIfOpen()
                throw failure(error, committed: session.committed)
            } catch {
                session.rollbackIfOpen()
                throw error
            }
            replyCounts = session.replyCounts
            domain = session.domain
            stopped = session.isStopped
            committed = session.committed
        }
        try reportingFailure(committed: committed) { try pool.write { db in
            if let domain {
                _ = try SQLiteArchive.upsertWorkspace(teamID: listings.teamID, domain: domain, in: db)
            }
            _ = try SQLiteArchive.applyPendingEvents(in: db)
            // Replies that arrived earlier through sync pages count for the parents this export brought; in
            // conversations new to the archive, only threads whose replies outnumber their declared count.
            for rowID in listings.preexisting { try SQLiteArchive.refreshReplyCounts(conversationRowID: rowID, in: db) }
            for (rowID, keys) in replyCounts.threadsToRecount() where !listings.preexisting.contains(rowID) {
                try SQLiteArchive.refreshReplyCounts(conversationRowID: rowID, threadKeys: keys, in: db)
            }
        } }
        _ = checkpointer?.stop()
        checkpointed = true
        try finalCheckpoint(uninstalling: wal, committed: committed)
        // After the final checkpoint: every message is in the archive's file, and the merge's log starts empty
        // (before it, the merge's frames added to the import's in the log: 150,000 messages needed 36 MB more disk).
        if committed.added >= mergeIndexAfter, !stopped { mergeSearchIndex() }
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
        try? pool.write { db in try db.execute(sql: "INSERT INTO message_fts(message_fts) VALUES ('optimize')") }
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

/// The writer side of a bulk import, valid only inside `Archive.bulkImport`'s body.
///
/// Not `Sendable`: it holds the writer connection of the closure it was made in.
final class SQLiteExportSession: ExportSession {
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
    fileprivate var replyCounts = ReplyCountCheck()
    fileprivate var domain: String?
    package var isStopped = false
    /// The blocks of a split batch whose next part is still to come (`ImportBatch.continues`).
    private var carried: PackedBlocks?
    /// What that batch's parts so far add to `message_count`: flushed once, after its last part (per part, the
    /// 10M import upserted each conversation of a date three times, ~1.4M upserts more).
    private var carriedCounts: [Int64: MessageCountDelta] = [:]

    fileprivate init(db: Database, wal: WALLength, checkpointer: Checkpointer?, commitMessages: Int) {
        self.db = db
        self.wal = wal
        self.checkpointer = checkpointer
        self.commitMessages = max(1, commitMessages)
    }

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
    /// - Throws: a `DatabaseError` (SQLITE_MISUSE; `Archive.bulkImport` reports it as a `BulkImportFailure` and
    ///   rolls back) when a batch follows a part that continues and is not its next part.
    package func write(_ batch: ImportBatch) throws -> BatchWriteResult {
        var result = BatchWriteResult()
        if !inTransaction {
            try db.beginTransaction()
            inTransaction = true
        }
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

    /// Commits the open transaction; waits for the WAL to start over when it is long. Returns the seconds waited.
    private func commit() throws -> Double {
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
        try db.commit()
        inTransaction = false
        committed.add(uncommitted)
        uncommitted = WriteCounts()
    }

    fileprivate func rollbackIfOpen() {
        carried = nil
        carriedCounts = [:]
        guard inTransaction else { return }
        try? db.rollback()
        inTransaction = false
    }
}

/// The value, leaving an empty one in its place (moved, not copied).
private func take<Value>(_ value: inout [Int64: Value]) -> [Int64: Value] {
    var taken: [Int64: Value] = [:]
    swap(&taken, &value)
    return taken
}
