import CSlackTokenizer
import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// How many messages hold each word of the index, kept in `message_word` (migration v21) as the index is written,
/// so that a prefix search reads its words' counts instead of FTS5's vocabulary walking their doclists (`clas*` on
/// the 10M archive: 44–47 ms of the vocabulary for 6 words and 1.46M entries).
///
/// The tokenizer counts a message's words while FTS5 tokenizes it (`Sources/CSlackTokenizer/slack_words.c`): every
/// statement that adds a message to the index or removes one runs inside `counting(_:_:)`, and whoever owns the
/// transaction calls `flush(_:)` before it commits. A transaction that would commit with counts not flushed fails
/// (`databaseWillCommit`), so a write path that forgets cannot leave the table wrong; a rollback forgets them.
/// One per writer connection (`of(_:)`).
final class WordCounts: TransactionObserver, @unchecked Sendable {
    // @unchecked Sendable: used only on its connection's writer, which GRDB serialises.
    private let counts: OpaquePointer
    /// A message's words were counted since the last flush.
    private var pending = false

    private init() throws {
        guard let counts = slackindex_words_new() else {
            throw DatabaseError(resultCode: .SQLITE_NOMEM, message: "no memory to count the index's words")
        }
        self.counts = counts
    }

    deinit { slackindex_words_free(counts) }

    /// The counts of `db`'s writes, observing its transactions from the first call on.
    static func of(_ db: Database) throws -> WordCounts {
        let key = UInt(bitPattern: db.sqliteConnection)
        if let known = registry.withLock({ $0[key] }), known.database === db { return known.counts }
        let counts = try WordCounts()
        db.add(transactionObserver: counts, extent: .databaseLifetime)
        registry.withLock { registered in
            // Closed connections' counters go (a test process opens hundreds of archives).
            registered = registered.filter { $0.value.database != nil }
            registered[key] = Registered(database: db, counts: counts)
        }
        return counts
    }

    /// @unchecked Sendable: `database` is only compared, never used, outside its writer.
    private struct Registered: @unchecked Sendable {
        weak var database: Database?
        var counts: WordCounts
    }

    /// By connection: a closed connection's entry is replaced when its address comes again (`database` is nil).
    private static let registry = Mutex<[UInt: Registered]>([:])

    /// Runs `body`, one statement adding (`sign` 1) or removing (-1) one message in the index, counting its words.
    func counting<T>(_ sign: Int32, _ body: () throws -> T) rethrows -> T {
        pending = true
        slackindex_words_start(counts, sign)
        defer { slackindex_words_stop() }
        return try body()
    }

    /// Adds the counted changes to `message_word`, in the open transaction.
    ///
    /// - Complexity: one upsert per word whose count changed (a 200,000-message transaction of the generated
    ///   exports: ~25,000 words).
    func flush(_ db: Database) throws {
        guard pending else { return }
        guard slackindex_words_failed(counts) == 0 else {
            throw DatabaseError(resultCode: .SQLITE_NOMEM, message: "no memory to count the index's words")
        }
        let upsert = try db.cachedStatement(
            sql: """
                INSERT INTO message_word (word, messages) VALUES (?, ?)
                ON CONFLICT (word) DO UPDATE SET messages = messages + excluded.messages
                """)
        let remove = try db.cachedStatement(sql: "DELETE FROM message_word WHERE word = ? AND messages <= 0")
        var context = FlushContext(
            upsert: upsert.sqliteStatement, remove: remove.sqliteStatement, connection: db.sqliteConnection)
        let code = withUnsafeMutablePointer(to: &context) { pointer in
            slackindex_words_each(counts, pointer) { raw, word, length, delta in
                guard let raw, let word else { return SQLITE_MISUSE }
                let context = raw.assumingMemoryBound(to: FlushContext.self)
                return context.pointee.store(word, length, delta)
            }
        }
        if code != 0 {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
        slackindex_words_clear(counts)
        pending = false
    }

    /// The two statements of a flush, run through the C API: a word is bytes (a token cut at 64 bytes may end
    /// inside a character), bound as they are, as FTS5 stores them.
    private struct FlushContext {
        var upsert: OpaquePointer
        var remove: OpaquePointer
        var connection: OpaquePointer?

        func store(_ word: UnsafePointer<CChar>, _ length: Int32, _ delta: Int64) -> Int32 {
            let code = run(upsert, word, length, delta: delta)
            guard code == SQLITE_DONE else { return code }
            guard delta < 0 else { return 0 }
            let removed = run(remove, word, length, delta: nil)
            return removed == SQLITE_DONE ? 0 : removed
        }

        private func run(_ statement: OpaquePointer, _ word: UnsafePointer<CChar>, _ length: Int32, delta: Int64?)
            -> Int32
        {
            sqlite3_reset(statement)
            defer { sqlite3_reset(statement) }
            // SQLITE_TRANSIENT: the word's bytes belong to the counter, which the next flush clears.
            var code = sqlite3_bind_text(statement, 1, word, length, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
            if code == SQLITE_OK, let delta { code = sqlite3_bind_int64(statement, 2, delta) }
            guard code == SQLITE_OK else { return code }
            return sqlite3_step(statement)
        }
    }

    /// Runs `body`, a transaction's writes that add or remove messages in the index, and stores their counts
    /// after it; counts left by an earlier transaction that ended without committing are discarded first, and
    /// these when `body` (or the storing) fails: SQLite may have rolled the transaction back on its own.
    func owning<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        discard()
        do {
            let result = try body()
            try flush(db)
            return result
        } catch {
            discard()
            throw error
        }
    }

    /// Forgets the counts: the transaction that made them rolled back. GRDB tells a rollback it ran itself
    /// (`databaseDidRollback`), but not always one SQLite made on its own inside a statement stepped through the C
    /// API (a full disk in the writer's insert): an import resumed after a full disk counted the stopped
    /// transaction's messages twice. So every owner of counts discards at its transaction's start and when it fails
    /// (the import session; `owning(_:_:)`). A `ROLLBACK TO` a savepoint does not discard: no writer of the index
    /// uses savepoints.
    func discard() {
        slackindex_words_clear(counts)
        pending = false
    }

    // MARK: TransactionObserver

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
    func databaseDidChange(with event: DatabaseEvent) {}

    func databaseWillCommit() throws {
        guard !pending else {
            throw DatabaseError(
                resultCode: .SQLITE_INTERNAL,
                message: "Internal error: the index's word counts were not stored with its messages; nothing of "
                    + "this transaction was written. Please report it.")
        }
    }

    func databaseDidCommit(_ db: Database) {}

    func databaseDidRollback(_ db: Database) { discard() }
}

/// Where the messages holding each word are read: `message_word` (v21), or in an archive before it (opened
/// read-only) FTS5's vocabulary, which walks each word's doclist. One choice for prefixes, suggestions and the
/// bench's words.
struct WordTable {
    let name: String
    let word: String
    let messages: String

    static func of(_ db: Database) throws -> WordTable {
        try db.tableExists("message_word")
            ? WordTable(name: "message_word", word: "word", messages: "messages")
            : WordTable(name: "message_vocab", word: "term", messages: "doc")
    }

    /// The vocabulary's words and counts as `message_word` keeps them: stem (U+0001), pair (U+0002) and scope (U+0003) tokens left
    /// out, as the tokenizer's counter leaves them (`slack_words.c`).
    static let vocabularyWords = "SELECT term, doc FROM message_vocab WHERE term >= char(4) AND doc > 0"
}
