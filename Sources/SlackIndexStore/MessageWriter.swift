import Foundation
import GRDB
import GRDBSQLite

/// Bulk upserts keyed on (conversation, ts), keeping the FTS index in step with explicit statements.
///
/// Explicit FTS inserts instead of triggers: triggers measured 2.6× slower during bulk import on this machine kind.
/// The hot statements are prepared once per transaction and bound through SQLite's C API without copies
/// (SQLITE_STATIC: long strings where they are, short ones from `BindArena`), every bind's result checked.
struct MessageWriter {
    private let db: Database
    /// Seconds spent adding to the full-text index by this writer (for `bench import`'s phases).
    private(set) var indexSeconds: Double = 0
    private let insert: Statement
    private let ftsInsert: Statement
    private let reactionInsert: Statement
    private let fileInsert: Statement
    private let blockInsert: Statement
    /// The counts of the words of the messages added to the index (`WordCounts`), flushed by the transaction's
    /// owner.
    private let words: WordCounts
    /// Copies of the short strings bound to the statement being run (see `bind`).
    private let arena = BindArena()
    /// What the messages inserted so far add to `message_count`, by conversation row id (see `flushCounts`).
    private(set) var addedCounts: [Int64: MessageCountDelta] = [:]
    /// The packed JSON of the batch's messages and which blocks are stored (`PackedBlocks`).
    private(set) var packed = PackedBlocks()

    /// Prepares the hot statements once; make one writer per transaction (batch), not per message.
    ///
    /// Looking a cached statement up by its SQL text hashes the text every time: measurable at 1M rows.
    /// - Parameters:
    ///   - packed: the blocks of a split batch's earlier parts, as their writer left them (`packed`).
    ///   - counts: what those parts' messages add to `message_count`, not flushed yet (`addedCounts`).
    init(
        _ db: Database, continuing packed: PackedBlocks = PackedBlocks(), counts: [Int64: MessageCountDelta] = [:]
    ) throws {
        self.db = db
        self.packed = packed
        addedCounts = counts
        insert = try db.cachedStatement(
            sql: """
                INSERT INTO message (conversation_id, ts, ts_key, user_id, username, subtype, thread_ts, thread_key,
                    reply_count, edited_ts, edited_key, flags, text, search_text, search_extra, raw, hash, id,
                    raw_block, raw_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT DO NOTHING
                """)
        ftsInsert = try db.cachedStatement(sql: MessageWriter.indexInsertSQL)
        reactionInsert = try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO reaction (message_id, name, count, users) VALUES (?, ?, ?, ?)")
        fileInsert = try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO file (message_id, position, file_id, name, title, mimetype, filetype, size,
                    mode, url_private, url_download, permalink)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        blockInsert = try db.cachedStatement(sql: "INSERT INTO raw_block (id, data) VALUES (?, ?)")
        words = try WordCounts.of(db)
    }

    /// Adds `blocks` (one batch's or page's packed JSON) for the messages whose `rawLocation` points into them;
    /// returns the base to upsert those messages with.
    @discardableResult
    mutating func usePackedRaws(_ blocks: [[UInt8]]) -> Int {
        let base = packed.blocks.count
        // Taken whole when there are none yet: shared, not copied (`PackedBlocks.holds` compares the storage).
        if packed.blocks.isEmpty { packed.blocks = blocks } else { packed.blocks.append(contentsOf: blocks) }
        packed.ids.append(contentsOf: repeatElement(nil, count: blocks.count))
        return base
    }

    /// `upsert(at:rawBlockBase:)` of `messages[index]`, read in place.
    mutating func upsert(_ messages: [PreparedMessage], at index: Int, rawBlockBase: Int = 0) throws -> UpsertOutcome {
        precondition(messages.indices.contains(index), "message index out of range")
        return try messages.withUnsafeBufferPointer { buffer in
            guard let first = buffer.baseAddress else { preconditionFailure("a non-empty array has storage") }
            return try upsert(at: first + index, rawBlockBase: rawBlockBase)
        }
    }

    /// Inserts the message `m` points to, or updates the stored one when this version is different and not older.
    ///
    /// A deleted message stays deleted (its text is updated but it does not return to search). The message is read
    /// in place: passed by value it is copied first (Swift cannot prove unsafe or array memory unchanged across the
    /// call), which retained and released its dozen strings and arrays twice per message, ~4% of the writer
    /// thread's samples on the 1M import.
    /// - Complexity: O(log n) in the archive's size, plus the message's reactions and files.
    /// - Parameter rawBlockBase: where the message's batch or page starts in the blocks `usePackedRaws` added.
    mutating func upsert(at m: UnsafePointer<PreparedMessage>, rawBlockBase: Int = 0) throws -> UpsertOutcome {
        // The id holds the ts's second and its fraction in 1,024ths (`MessageID`); another message may hold it.
        let preferred = MessageID(preferredFor: m.pointee.tsKey).rawValue
        if try insertNew(m, id: preferred, rawBlockBase: rawBlockBase) { return .added }
        // Either this message is stored already, or another message (another conversation's at the same ts, or
        // one of the same millisecond) holds the id.
        if let outcome = try update(m.pointee, raw: { try json(of: m, base: rawBlockBase) }) { return outcome }
        let second = MessageID.second(of: m.pointee.tsKey)
        let free =
            try firstFreeID(in: preferred...second.upperBound) ?? firstFreeID(in: second)
            ?? firstFreeID(in: (second.upperBound + 1)...(Int64.max - 1))
        guard let free, try insertNew(m, id: free, rawBlockBase: rawBlockBase) else {
            throw DatabaseError(resultCode: .SQLITE_CONSTRAINT, message: "no free id for ts \(m.pointee.ts)")
        }
        return .added
    }

    /// Inserts the message at `id` with its block, count, index entry and attachments; false when the id or the
    /// message's (conversation, ts) is taken (nothing written).
    private mutating func insertNew(_ m: UnsafePointer<PreparedMessage>, id: Int64, rawBlockBase: Int) throws -> Bool {
        let block = try rawBlockID(for: m, base: rawBlockBase)
        try insertRow(m, id: id, rawBlock: block)
        guard sqlite3_changes(db.sqliteConnection) == 1 else { return false }
        try storeRawBlock(for: m, base: rawBlockBase)
        addedCounts[m.pointee.conversationRowID, default: MessageCountDelta()].add(flags: m.pointee.flags)
        let start = ContinuousClock.now
        try insertIndex(id: id, m)
        indexSeconds += start.duration(to: .now).seconds
        try writeAttachments(id: id, m)
        return true
    }

    /// Adds the inserted messages to `message_count`; call it before the transaction commits, once the last
    /// message is upserted (updates and deletions are counted by the archive's triggers).
    ///
    /// - Complexity: O(c) for the c conversations written.
    mutating func flushCounts() throws {
        guard !addedCounts.isEmpty else { return }
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO message_count (conversation_id, messages, threads, replies) VALUES (?, ?, ?, ?)
                ON CONFLICT (conversation_id) DO UPDATE SET messages = messages + excluded.messages,
                    threads = threads + excluded.threads, replies = replies + excluded.replies
                """)
        // In conversation order: a dictionary's order changes from process to process (Swift seeds its hashing
        // per process), and with it the layout of message_count's pages, so two imports of one export gave
        // archives with the same rows but different bytes.
        for (conversation, delta) in addedCounts.sorted(by: { $0.key < $1.key }) {
            try statement.execute(arguments: [conversation, delta.messages, delta.threads, delta.replies])
        }
        addedCounts = [:]
    }

    /// The row id of the block holding `m`'s packed JSON (reserved, stored once a message of it is inserted), or nil
    /// when its JSON is stored inline.
    private mutating func rawBlockID(for m: UnsafePointer<PreparedMessage>, base: Int) throws -> Int64? {
        guard let location = m.pointee.rawLocation else { return nil }
        // A packed message keeps no JSON of its own: a location outside the blocks would store it empty. Refused,
        // which rolls the transaction back (issue 47's D1 stored such rows).
        guard location.block >= 0, packed.ids.indices.contains(base + location.block) else {
            throw PackingError(ts: m.pointee.ts, block: location.block)
        }
        let index = base + location.block
        if let known = packed.ids[index] { return known.id }
        let id: Int64
        if let next = packed.nextID {
            id = next
        } else {
            id = try Int64.fetchOne(db, sql: "SELECT coalesce(max(id), 0) + 1 FROM raw_block") ?? 1
        }
        packed.nextID = id + 1
        packed.ids[index] = (id, false)
        return id
    }

    /// Stores the block of an inserted message's packed JSON, the first time one of its messages is inserted.
    private mutating func storeRawBlock(for m: UnsafePointer<PreparedMessage>, base: Int) throws {
        guard let location = m.pointee.rawLocation, packed.ids.indices.contains(base + location.block),
            let block = packed.ids[base + location.block], !block.stored
        else { return }
        // Through the C API, the block's bytes bound where they are: GRDB's arguments (a `Data` copy, conformance
        // lookups per value) were ~10,000 instructions per block, 2.3% of the writer thread on the 100k import.
        let s = Self.ready(blockInsert)
        defer { sqlite3_reset(s) }
        try Self.bindFirst(s, block.id, on: db.sqliteConnection)
        let connection = db.sqliteConnection
        try packed.blocks[base + location.block].withUnsafeBytes { bytes in
            let code = sqlite3_bind_blob64(
                s, 2, bytes.baseAddress ?? UnsafeRawPointer(MessageWriter.empty), sqlite3_uint64(bytes.count), nil)
            try Self.check(code, s, on: connection)
            try Self.step(s, on: connection)
        }
        packed.ids[base + location.block] = (block.id, true)
    }

    /// The smallest id in `range` no message holds, or nil when every one is held.
    ///
    /// - Complexity: O(k log n) for the k held ids from `range.lowerBound` to the first gap.
    private func firstFreeID(in range: ClosedRange<Int64>) throws -> Int64? {
        let sql = """
            SELECT min(free) FROM (
                SELECT ?1 AS free WHERE NOT EXISTS (SELECT 1 FROM message WHERE id = ?1)
                UNION ALL
                SELECT * FROM (
                    SELECT m.id + 1 FROM message m
                    WHERE m.id >= ?1 AND m.id < ?2 AND NOT EXISTS (SELECT 1 FROM message n WHERE n.id = m.id + 1)
                    ORDER BY m.id LIMIT 1
                )
            )
            """
        // Cached: about one message in 80 of the generated exports shares its preferred id (replies in bursts).
        let statement = try db.cachedStatement(sql: sql)
        return try Int64.fetchOne(statement, arguments: [range.lowerBound, range.upperBound])
    }

    // The two statements every imported message runs are bound and stepped through SQLite's C API directly:
    // GRDB's generic argument handling (StatementArguments, DatabaseValue boxing, hooks) measured about a third
    // of the writer thread's CPU on the 1M-message import. Same statements, same transaction, same connection.

    /// Binds the message's JSON inline, or empty with its location in block `rawBlock`.
    private func insertRow(_ m: UnsafePointer<PreparedMessage>, id: Int64, rawBlock: Int64?) throws {
        let s = Self.ready(insert)
        defer { sqlite3_reset(s) }
        // The copies bound for the previous message (its row, reactions and files) are no longer read: every
        // statement that bound them has stepped, and each binds all its parameters again before it steps.
        arena.reset()
        try Self.bindFirst(s, m.pointee.conversationRowID, on: db.sqliteConnection)
        try bind(s, 2, m.pointee.ts)
        sqlite3_bind_int64(s, 3, m.pointee.tsKey)
        try bind(s, 4, m.pointee.userID)
        try bind(s, 5, m.pointee.username)
        try bind(s, 6, m.pointee.subtype)
        try bind(s, 7, m.pointee.threadTS)
        if let threadKey = m.pointee.threadKey { sqlite3_bind_int64(s, 8, threadKey) } else { sqlite3_bind_null(s, 8) }
        sqlite3_bind_int64(s, 9, m.pointee.replyCount)
        try bind(s, 10, m.pointee.editedTS)
        sqlite3_bind_int64(s, 11, m.pointee.editedKey)
        sqlite3_bind_int64(s, 12, m.pointee.flags)
        try bind(s, 15, m.pointee.searchExtra)
        sqlite3_bind_int64(s, 17, m.pointee.hash)
        sqlite3_bind_int64(s, 18, id)
        let location = rawBlock == nil ? nil : m.pointee.rawLocation
        if let rawBlock, let location {
            sqlite3_bind_int64(s, 19, rawBlock)
            sqlite3_bind_int64(s, 20, location.packed)
        } else {
            sqlite3_bind_null(s, 19)
            sqlite3_bind_null(s, 20)
        }
        // The three long strings (raw JSON, text, search text: ~830 bytes of a message's ~1.2 KB) are bound
        // without SQLite copying them (SQLITE_STATIC), valid while the statement steps inside these closures.
        // The closures use no member of `self` (capturing it copied the writer: ~1.5% of the writer's samples).
        let connection = db.sqliteConnection
        try Self.withBytes(m.pointee.text) { text in
            try Self.withBytes(SearchTextColumn.stored(m.pointee.searchText, text: m.pointee.text)) { searchText in
                try Self.withBytes(location == nil ? m.pointee.raw : "") { raw in
                    try Self.bindStatic(s, 13, text, on: connection)
                    try Self.bindStatic(s, 14, searchText, on: connection)
                    try Self.bindStatic(s, 16, raw, on: connection)
                    try Self.step(s, on: connection)
                }
            }
        }
    }

    /// The statement's SQLite handle, reset and so ready to bind. GRDB does not reset a statement after running it,
    /// and it runs some of these: its cache gives `indexInsert` (an edit's new entry) the very statement
    /// `ftsInsert` is. Binding a statement that is not reset fails (SQLITE_MISUSE); before this, the binds' codes
    /// went unchecked and the step ran with the parameters GRDB had cleared: the next message got no entry and
    /// the index an empty document (migration v14 repairs such archives).
    private static func ready(_ statement: Statement) -> OpaquePointer {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        return handle
    }

    /// Binds the statement's first parameter, and throws when SQLite refuses it (the statement is not ready): the
    /// other binds of the same statement then fail alike, and stepping it would write other values.
    private static func bindFirst(_ statement: OpaquePointer, _ value: Int64, on connection: OpaquePointer?) throws {
        try check(sqlite3_bind_int64(statement, 1, value), statement, on: connection)
    }

    /// Throws unless a bind's `code` is SQLITE_OK: a refused value (past SQLite's length limit) would leave the
    /// value bound before it, and the statement would step with another message's value.
    private static func check(_ code: Int32, _ statement: OpaquePointer, on connection: OpaquePointer?) throws {
        guard code == SQLITE_OK else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)),
                sql: String(cString: sqlite3_sql(statement)))
        }
    }

    /// Binds `bytes` as text that SQLite reads in place (SQLITE_STATIC): they must stay until the statement steps.
    private static func bindStatic(
        _ statement: OpaquePointer, _ index: Int32, _ bytes: UnsafeBufferPointer<UInt8>, on connection: OpaquePointer?
    ) throws {
        let code = bytes.withMemoryRebound(to: CChar.self) { chars in
            sqlite3_bind_text64(
                statement, index, chars.baseAddress ?? MessageWriter.empty, sqlite3_uint64(chars.count), nil,
                UInt8(SQLITE_UTF8))
        }
        try check(code, statement, on: connection)
    }

    private func insertIndex(id: Int64, _ m: UnsafePointer<PreparedMessage>) throws {
        let s = Self.ready(ftsInsert)
        defer { sqlite3_reset(s) }
        try Self.bindFirst(s, id, on: db.sqliteConnection)
        let connection = db.sqliteConnection
        let words = words
        try Self.withBytes(m.pointee.searchText) { text in
            try Self.withBytes(m.pointee.searchExtra) { extra in
                try IndexScope.withText(conversation: m.pointee.conversationRowID, user: m.pointee.userID) { scope in
                    try Self.bindStatic(s, 2, text, on: connection)
                    try Self.bindStatic(s, 3, extra, on: connection)
                    try Self.bindStatic(s, 4, scope, on: connection)
                    try words.counting(1) { try Self.step(s, on: connection) }
                }
            }
        }
    }

    /// The string's UTF-8 bytes without copying or retaining it (native strings are contiguous; others are copied).
    @inline(__always)
    private static func withBytes<R>(_ string: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        if let result = try string.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = string
        return try copy.withUTF8(body)
    }

    /// Binds a copy of `value` made in `arena`, which keeps it until `insertRow` starts the next message: with
    /// SQLITE_TRANSIENT, SQLite's own copy was a malloc and a free per string, ~2% of the writer thread.
    private func bind(_ statement: OpaquePointer, _ index: Int32, _ value: String?) throws {
        guard let value else {
            sqlite3_bind_null(statement, index)
            return
        }
        let copy = Self.withBytes(value) { arena.copy($0) }
        try Self.bindStatic(statement, index, copy, on: db.sqliteConnection)
    }

    private func step(_ statement: OpaquePointer) throws {
        try Self.step(statement, on: db.sqliteConnection)
    }

    private static func step(_ statement: OpaquePointer, on connection: OpaquePointer?) throws {
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code),
                message: String(cString: sqlite3_errmsg(connection)), sql: String(cString: sqlite3_sql(statement)))
        }
    }

    /// A valid pointer for empty strings (a nil pointer would bind NULL).
    /// `nonisolated(unsafe)`: written once here, never mutated after.
    nonisolated(unsafe) private static let empty: UnsafePointer<CChar> = {
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: 1)
        pointer.initialize(to: 0)
        return UnsafePointer(pointer)
    }()

    /// The JSON of `m`: `raw`, or rebuilt from its packed block (a packed message keeps no copy).
    private func json(of m: UnsafePointer<PreparedMessage>, base: Int) throws -> String {
        guard let location = m.pointee.rawLocation else { return m.pointee.raw }
        let fields = RepeatedFields(
            text: m.pointee.text, ts: m.pointee.ts, userID: m.pointee.userID, threadTS: m.pointee.threadTS)
        guard packed.blocks.indices.contains(base + location.block),
            let text = RawBlocks.inflate(packed.blocks[base + location.block]),
            let json = RawBlocks.slice(text, location, fields: fields)
        else {
            throw DatabaseError(
                resultCode: .SQLITE_INTERNAL, message: "the packed JSON of message \(m.pointee.ts) cannot be read back")
        }
        return json
    }

    /// The slow path of `upsert`: updates the stored message, its JSON (`raw`, asked for only then) stored inline;
    /// nil when it is not stored.
    private func update(_ m: PreparedMessage, raw: () throws -> String) throws -> UpsertOutcome? {
        let existing = try db.cachedStatement(
            sql: """
                SELECT id, hash, edited_key, is_deleted, text, search_text, search_extra, user_id FROM message
                WHERE conversation_id = ? AND ts_key = ?
                """)
        existing.setUncheckedArguments([m.conversationRowID, m.tsKey])
        guard let row = try Row.fetchOne(existing) else { return nil }
        let id: Int64 = row["id"]
        let hash: Int64 = row["hash"]
        let editedKey: Int64 = row["edited_key"]
        let deleted: Bool = row["is_deleted"]
        if hash == m.hash || m.editedKey < editedKey { return .unchanged }
        let raw = try raw()
        let update = try db.cachedStatement(
            sql: """
                UPDATE message SET ts = ?, user_id = ?, username = ?, subtype = ?, thread_ts = ?, thread_key = ?,
                    reply_count = ?, edited_ts = ?, edited_key = ?, flags = ?, text = ?, search_text = ?,
                    search_extra = ?, raw = ?, hash = ?, raw_block = NULL, raw_at = NULL
                WHERE id = ?
                """)
        update.setUncheckedArguments([
            m.ts, m.userID, m.username, m.subtype, m.threadTS, m.threadKey, m.replyCount, m.editedTS, m.editedKey,
            m.flags, m.text, SearchTextColumn.stored(m.searchText, text: m.text), m.searchExtra, raw, m.hash, id,
        ])
        try update.execute()
        if !deleted {
            let oldText = SearchTextColumn.value(stored: row["search_text"], text: row["text"])
            let oldExtra: String = row["search_extra"]
            let oldUser: String? = row["user_id"]
            if oldText != m.searchText || oldExtra != m.searchExtra || oldUser != m.userID {
                try MessageWriter.indexDelete(
                    id: id, oldText, oldExtra, scope: (m.conversationRowID, oldUser), in: db)
                try MessageWriter.indexInsert(
                    id: id, m.searchText, m.searchExtra, scope: (m.conversationRowID, m.userID), in: db)
            }
        }
        try db.cachedStatement(sql: "DELETE FROM reaction WHERE message_id = ?").execute(arguments: [id])
        try db.cachedStatement(sql: "DELETE FROM file WHERE message_id = ?").execute(arguments: [id])
        try withUnsafePointer(to: m) { try writeAttachments(id: id, $0) }
        return .updated
    }

    /// A message's conversation row id and author id: what its scope words say (`IndexScope`).
    typealias Scope = (conversation: Int64, user: String?)

    /// Adds a message (id, texts, scope text) to the index.
    static let indexInsertSQL =
        "INSERT INTO message_fts (rowid, search_text, search_extra, \(IndexScope.column)) VALUES (?, ?, ?, ?)"

    /// Adds a message's text to the index, its words to the transaction's `WordCounts` (flushed by its owner).
    static func indexInsert(id: Int64, _ text: String, _ extra: String, scope: Scope, in db: Database) throws {
        let statement = try db.cachedStatement(sql: indexInsertSQL)
        let scope = IndexScope.text(conversation: scope.conversation, user: scope.user)
        try WordCounts.of(db).counting(1) { try statement.execute(arguments: [id, text, extra, scope]) }
    }

    /// Removes a row from the external-content index; the values must be exactly the ones indexed (the scope the
    /// row had: an author changed by an edit is removed with the old one). Its words count one message less
    /// (`WordCounts`, flushed by the transaction's owner).
    static func indexDelete(id: Int64, _ text: String, _ extra: String, scope: Scope, in db: Database) throws {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO message_fts (message_fts, rowid, search_text, search_extra, \(IndexScope.column))
                VALUES ('delete', ?, ?, ?, ?)
                """)
        let scope = IndexScope.text(conversation: scope.conversation, user: scope.user)
        try WordCounts.of(db).counting(-1) { try statement.execute(arguments: [id, text, extra, scope]) }
    }

    /// Reactions and files of a new or updated message, bound through the C API like the row (GRDB's argument
    /// arrays and building the users' JSON here were ~0.7 s of the writer's time per 1M messages).
    private func writeAttachments(id: Int64, _ m: UnsafePointer<PreparedMessage>) throws {
        if !m.pointee.reactions.isEmpty {
            let s = Self.ready(reactionInsert)
            for reaction in m.pointee.reactions {
                defer { sqlite3_reset(s) }
                try Self.bindFirst(s, id, on: db.sqliteConnection)
                try bind(s, 2, reaction.name)
                sqlite3_bind_int64(s, 3, reaction.count)
                try bind(s, 4, reaction.usersJSON)
                try step(s)
            }
        }
        if !m.pointee.files.isEmpty {
            let s = Self.ready(fileInsert)
            for (position, file) in m.pointee.files.enumerated() {
                defer { sqlite3_reset(s) }
                try Self.bindFirst(s, id, on: db.sqliteConnection)
                sqlite3_bind_int64(s, 2, Int64(position))
                try bind(s, 3, file.id)
                try bind(s, 4, file.name)
                try bind(s, 5, file.title)
                try bind(s, 6, file.mimetype)
                try bind(s, 7, file.filetype)
                if let size = file.size { sqlite3_bind_int64(s, 8, size) } else { sqlite3_bind_null(s, 8) }
                try bind(s, 9, file.mode)
                try bind(s, 10, file.urlPrivate)
                try bind(s, 11, file.urlPrivateDownload)
                try bind(s, 12, file.permalink)
                try step(s)
            }
        }
    }
}

/// A message points into a packed block its batch or page does not hold: a defect of the import, refused before
/// anything is written so that no message is stored without its JSON.
package struct PackingError: Error, CustomStringConvertible {
    package var ts: String
    package var block: Int

    package var description: String {
        "Internal error: message \(ts) points into packed block \(block), which its batch does not hold; nothing of "
            + "this batch was written. Please report it."
    }
}

/// The packed JSON blocks a writer stores (`PreparedMessage.rawLocation` indexes `blocks`), each as a `raw_block`
/// row when the first of its messages is inserted: a re-import of messages the archive has writes no block. Carried
/// from one part of a split batch to the next (`ImportBatch.split`), so a block is stored once.
struct PackedBlocks {
    var blocks: [[UInt8]] = []
    /// The row id each of `blocks` has or will have, and whether it is stored.
    var ids: [(id: Int64, stored: Bool)?] = []
    /// The id the next reserved block takes; nil: not asked yet (`max(id) + 1` of the table).
    var nextID: Int64?

    /// Whether `blocks` is `other` itself (the same storage), as the parts of one split batch share it.
    func holds(_ other: [[UInt8]]) -> Bool {
        guard blocks.count == other.count else { return false }
        guard !other.isEmpty else { return true }
        return blocks.withUnsafeBufferPointer { mine in
            other.withUnsafeBufferPointer { theirs in mine.baseAddress == theirs.baseAddress }
        }
    }
}

/// Messages a writer inserted into one conversation, as `message_count` counts them (inserted messages are never
/// deleted ones).
struct MessageCountDelta {
    var messages = 0
    var threads = 0
    var replies = 0

    mutating func add(flags: Int64) {
        messages += 1
        if flags & MessageFlags.threadParent.rawValue != 0 { threads += 1 }
        if flags & MessageFlags.topLevel.rawValue == 0 { replies += 1 }
    }
}

/// Copies of strings for SQLite to read in place (bound SQLITE_STATIC), kept until `reset()`: a bump allocator whose
/// chunks are kept and reused, so that binding a string costs a `memcpy`, not a `malloc` and a `free`.
final class BindArena {
    private var chunks: [UnsafeMutableRawBufferPointer] = []
    /// The chunk being filled and the bytes used in it.
    private var current = 0
    private var used = 0

    deinit {
        for chunk in chunks { chunk.deallocate() }
    }

    /// A copy of `bytes`, valid until the next `reset()`.
    func copy(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        while current < chunks.count && chunks[current].count - used < bytes.count {
            current += 1
            used = 0
        }
        if current == chunks.count {
            chunks.append(.allocate(byteCount: max(16_384, bytes.count), alignment: 1))
            used = 0
        }
        let start = chunks[current].baseAddress.map { $0 + used }
        if let start, let source = bytes.baseAddress { start.copyMemory(from: source, byteCount: bytes.count) }
        used += bytes.count
        return UnsafeBufferPointer(start: start?.assumingMemoryBound(to: UInt8.self), count: bytes.count)
    }

    /// Makes every chunk free again (the copies made so far must no longer be read).
    func reset() {
        current = 0
        used = 0
    }
}
