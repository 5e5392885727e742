import GRDB
import GRDBSQLite
import Synchronization

/// A position in a conversation's history: keyset on (ts, row id).
public struct TimelinePosition: Sendable, Hashable, Codable {
    public var tsKey: Int64
    public var rowID: Int64

    public init(tsKey: Int64, rowID: Int64) {
        self.tsKey = tsKey
        self.rowID = rowID
    }
}

/// Reactions and files of a message, for detailed output.
public struct MessageDetails: Sendable, Hashable {
    public var reactions: [StoredReaction] = []
    public var files: [StoredFile] = []

    public init(reactions: [StoredReaction] = [], files: [StoredFile] = []) {
        self.reactions = reactions
        self.files = files
    }
}

/// A reaction as stored: the emoji name, how many reacted, and who.
public struct StoredReaction: Sendable, Hashable, Codable {
    public var name: String
    public var count: Int
    public var users: [String]

    public init(name: String, count: Int, users: [String]) {
        self.name = name
        self.count = count
        self.users = users
    }
}

/// File metadata as stored (URLs without tokens).
public struct StoredFile: Sendable, Hashable, Codable {
    public var id: String?
    public var name: String?
    public var title: String?
    public var mimetype: String?
    public var size: Int64?
    public var mode: String?
    public var urlPrivate: String?
    public var permalink: String?

    private enum CodingKeys: String, CodingKey {
        case id, name, title, mimetype, size, mode, permalink
        case urlPrivate = "url_private"
    }
}

extension Archive {
    /// Which side of a position a page reads.
    public enum PageDirection: String, Sendable, Codable {
        /// Messages strictly older than the position (or the newest messages when there is none).
        case before
        /// Messages strictly newer than the position (or the oldest messages when there is none).
        case after
    }

    /// Which messages a page shows.
    public enum PageScope: Sendable, Hashable {
        /// The channel view: top-level messages and thread broadcasts.
        case history
        /// One thread: the parent and its replies.
        case thread(threadKey: Int64)
    }
}

extension SQLiteArchive {
    /// A page of a conversation, oldest to newest.
    ///
    /// Keyset pagination on `(ts_key, id)` through the `message_key` / `message_thread` indexes: the cost is the
    /// same at any depth (no OFFSET). A position with `rowID == Int64.min`/`max` means "at this time".
    /// - Complexity: O(log n + limit).
    package func page(
        conversation: Conversation, scope: Archive.PageScope = .history, direction: Archive.PageDirection,
        from position: TimelinePosition?, limit: Int, includeDeleted: Bool = false
    ) throws -> [Message] {
        // No transaction around the read: one SELECT is atomic in SQLite, and the BEGIN/COMMIT pair GRDB's `read`
        // adds was a measurable share of a 50-message page. (The name lookup may see a newer snapshot: harmless.)
        try pool.unsafeRead { db in
            try self.page(
                conversation: conversation, scope: scope, direction: direction, from: position, limit: limit,
                includeDeleted: includeDeleted, in: db)
        }
    }

    func page(
        conversation: Conversation, scope: Archive.PageScope, direction: Archive.PageDirection, from position: TimelinePosition?,
        limit: Int, includeDeleted: Bool, in db: Database
    ) throws -> [Message] {
        var arguments: StatementArguments = [conversation.rowID]
        let scopeSQL: String
        let index: String
        switch scope {
        case .history:
            // Written exactly as `message_history`'s WHERE clause, so SQLite can use that partial index.
            scopeSQL = "(m.flags & 96) != 0"
            index = includeDeleted ? "message_key" : "message_history"
        case .thread(let threadKey):
            scopeSQL = "m.thread_key = ?"
            arguments += [threadKey]
            index = "message_thread"
        }
        let deleted = includeDeleted ? "" : "AND m.is_deleted = 0"
        var bound = ""
        if let position {
            // The plain `ts_key <= ?` bound lets SQLite seek in the index; the second term only breaks the tie at
            // the position itself. (`a < ? OR (a = ? AND b < ?)` alone made SQLite scan from the end: the cost
            // grew with depth, 5.5 ms at 50k deep instead of ~0.1 ms.)
            bound =
                direction == .before
                ? "AND m.ts_key <= ? AND (m.ts_key < ? OR m.id < ?)"
                : "AND m.ts_key >= ? AND (m.ts_key > ? OR m.id > ?)"
            arguments += [position.tsKey, position.tsKey, position.rowID]
        }
        let order = direction == .before ? "DESC" : "ASC"
        arguments += [max(0, limit)]
        let statement = try db.cachedStatement(
            sql: """
                SELECT \(TimelineRows.columns)
                FROM message m INDEXED BY \(index)
                WHERE m.conversation_id = ? AND \(scopeSQL) \(deleted) \(bound)
                ORDER BY m.ts_key \(order), m.id \(order)
                LIMIT ?
                """)
        let names = try userNames(in: db)
        var messages: [Message] = []
        messages.reserveCapacity(limit)
        // Rows are read straight from the C API: GRDB's Row decoding doubled the cost of a 50-message page
        // (≈0.2 ms vs the sqlite3 shell's ≈0.06 ms for the same query on 1M messages).
        statement.setUncheckedArguments(arguments)  // resets the statement and binds
        let raw = statement.sqliteStatement
        defer { sqlite3_reset(raw) }
        while true {
            let code = sqlite3_step(raw)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else {
                throw DatabaseError(
                    resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
            }
            messages.append(TimelineRows.message(raw, conversation: conversation, names: names))
        }
        // Reversed in place through the buffer (no copy, no uniqueness check per swap): `reversed()` copied the
        // messages into a new array (~6% of a 50-message page's instructions), the array's own `reverse()` ~4%.
        if direction == .before { messages.withUnsafeMutableBufferPointer { $0.reverse() } }
        return messages
    }

    /// A thread's parent row (by its ts), for `thread` commands and permalinks to replies.
    package func message(conversation: Conversation, tsKey: Int64) throws -> Message? {
        try pool.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT \(TimelineRows.columns) FROM message m WHERE m.conversation_id = ? AND m.ts_key = ?
                    """, arguments: [conversation.rowID, tsKey])
            return try row.map { TimelineRows.message($0, conversation: conversation, names: try self.userNames(in: db)) }
        }
    }

    /// Reactions and files of the given messages.
    ///
    /// - Complexity: O(k log n) for k messages.
    package func details(of rowIDs: [Int64]) throws -> [Int64: MessageDetails] {
        guard !rowIDs.isEmpty else { return [:] }
        return try pool.read { db in
            var out: [Int64: MessageDetails] = [:]
            let list = "(" + rowIDs.map { _ in "?" }.joined(separator: ",") + ")"
            // Cursors, not `fetchAll`: a copied row finds a column by lowercasing every column's name (`rawMessages`).
            let reactions = try Row.fetchCursor(
                db, sql: "SELECT message_id, name, count, users FROM reaction WHERE message_id IN \(list)",
                arguments: StatementArguments(rowIDs))
            while let row = try reactions.next() {
                let users = JSONText.strings(row["users"] as String) ?? []
                out[row["message_id"], default: MessageDetails()].reactions.append(
                    StoredReaction(name: row["name"], count: row["count"], users: users))
            }
            let files = try Row.fetchCursor(
                db,
                sql: """
                    SELECT message_id, file_id, name, title, mimetype, size, mode, url_private, permalink
                    FROM file WHERE message_id IN \(list) ORDER BY message_id, position
                    """, arguments: StatementArguments(rowIDs))
            while let row = try files.next() {
                out[row["message_id"], default: MessageDetails()].files.append(
                    StoredFile(
                        id: row["file_id"], name: row["name"], title: row["title"], mimetype: row["mimetype"],
                        size: row["size"], mode: row["mode"], urlPrivate: row["url_private"],
                        permalink: row["permalink"]))
            }
            return out
        }
    }

    /// The `count` messages before position … for OFFSET comparison in benchmarks: the same page read with OFFSET.
    ///
    /// - Complexity: O(offset + limit): why timelines never use it.
    package func offsetPage(conversation: Conversation, offset: Int, limit: Int) throws -> [Message] {
        try pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(TimelineRows.columns) FROM message m INDEXED BY message_history
                    WHERE m.conversation_id = ? AND (m.flags & 96) != 0 AND m.is_deleted = 0
                    ORDER BY m.ts_key DESC, m.id DESC LIMIT ? OFFSET ?
                    """, arguments: [conversation.rowID, limit, offset])
            let names = try userNames(in: db)
            return rows.map { TimelineRows.message($0, conversation: conversation, names: names) }.reversed()
        }
    }
}

/// The lean column list of timeline reads: no joins; names come from `UserNameCache`.
enum TimelineRows {
    /// `search_text` is made a string only when it differs from `text` in a way that matters (`plainText`): most
    /// rows skip that string.
    static let columns = """
        m.id, m.ts, m.ts_key, m.user_id, m.username, m.text, m.search_text,
        m.subtype, m.thread_ts, m.reply_count, m.edited_ts, m.is_deleted, m.flags
        """

    /// Whether a row shows its stored `search_text` rather than its `text`: when the text is empty or holds markup
    /// or entities (`<`, `&`), and the search text is stored (empty, it equals the text: `SearchTextColumn`).
    ///
    /// Decided here on the bytes, not in the SELECT: with a `CASE` of `text = ''` and two `instr` calls per row, a
    /// 50-message history page took 757,000 instructions against 557,000 now (callgrind, `bench timeline --runs
    /// 200` on the 1M archive).
    static func showsSearchText(text: UnsafeBufferPointer<UInt8>, storedCount: Int) -> Bool {
        storedCount > 0 && (text.isEmpty || SearchTextColumn.holdsMarkup(text))
    }

    /// Reads the current row of a statement selecting `columns`.
    static func message(_ s: OpaquePointer, conversation: Conversation, names: [String: String]) -> Message {
        func bytes(_ i: Int32) -> UnsafeBufferPointer<UInt8>? {
            guard sqlite3_column_type(s, i) != SQLITE_NULL, let bytes = sqlite3_column_text(s, i) else { return nil }
            return UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(s, i)))
        }
        func text(_ i: Int32) -> String? { bytes(i).map { String(decoding: $0, as: UTF8.self) } }
        let id = sqlite3_column_int64(s, 0)
        let userID = text(3)
        let username = text(4)
        // A column's bytes stay valid until the next step or reset (each column has its own value in the row).
        let bodyBytes = bytes(5) ?? UnsafeBufferPointer(start: nil, count: 0)
        let body = String(decoding: bodyBytes, as: UTF8.self)
        var plain = body
        if let stored = bytes(6), showsSearchText(text: bodyBytes, storedCount: stored.count) {
            plain = String(decoding: stored, as: UTF8.self)
        }
        return Message(
            rowID: id, conversationID: conversation.id, conversation: conversation.displayName, ts: text(1) ?? "",
            tsKey: sqlite3_column_int64(s, 2), userID: userID,
            user: userID.flatMap { names[$0] } ?? username ?? userID, text: body, plainText: plain,
            subtype: text(7), threadTS: text(8), replyCount: Int(sqlite3_column_int64(s, 9)), editedTS: text(10),
            isDeleted: sqlite3_column_int64(s, 11) != 0, flags: MessageFlags(rawValue: sqlite3_column_int64(s, 12)), workspaceDomain: conversation.workspaceDomain)
    }

    static func message(_ row: Row, conversation: Conversation, names: [String: String]) -> Message {
        let userID: String? = row["user_id"]
        let username: String? = row["username"]
        var text: String = row["text"]
        let stored: String? = row["search_text"]
        let showsStored = text.withUTF8 { showsSearchText(text: $0, storedCount: stored?.utf8.count ?? 0) }
        return Message(
            rowID: row["id"], conversationID: conversation.id, conversation: conversation.displayName, ts: row["ts"],
            tsKey: row["ts_key"], userID: userID, user: userID.flatMap { names[$0] } ?? username ?? userID,
            text: text, plainText: showsStored ? stored ?? text : text, subtype: row["subtype"],
            threadTS: row["thread_ts"], replyCount: row["reply_count"], editedTS: row["edited_ts"],
            isDeleted: row["is_deleted"],
            flags: MessageFlags(rawValue: row["flags"]), workspaceDomain: conversation.workspaceDomain)
    }
}

extension SQLiteArchive {
    /// User id → shown name, re-read only when the user table changed (`meta.users_version`, bumped in the same
    /// transaction as every user write, so other processes' writes are seen too).
    ///
    /// - Complexity: O(1) when unchanged; O(users) after a change.
    func userNames(in db: Database) throws -> [String: String] {
        // Every page asks: a cached statement read through the C API. Prepared anew and read through GRDB's generic
        // fetch, this took ~84,000 of a 50-message history page's ~860,000 instructions (callgrind, 1M messages);
        // now ~15,000.
        let statement = try db.cachedStatement(sql: "SELECT value FROM meta WHERE key = 'users_version'")
        let version = try Self.firstText(of: statement.sqliteStatement, in: db) ?? ""
        if let cached = nameCache.withLock({ $0 }), cached.version == version { return cached.names }
        var names: [String: String] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT id, handle, real_name, display_name FROM user") {
            let user = User(
                id: row["id"], handle: row["handle"], realName: row["real_name"], displayName: row["display_name"])
            names[user.id] = user.bestName
        }
        nameCache.withLock { $0 = (version, names) }
        return names
    }

    /// The first column of the statement's first row as text (nil when there is no row or it is NULL).
    ///
    /// Stepped through the C API as `page` steps its rows: GRDB's statement observation and cancellation are
    /// skipped on purpose (a read of one meta row, on every page).
    private static func firstText(of statement: OpaquePointer, in db: Database) throws -> String? {
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        if code == SQLITE_DONE { return nil }
        guard code == SQLITE_ROW else {
            throw DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
        }
        guard let bytes = sqlite3_column_text(statement, 0) else { return nil }
        return String(cString: bytes)
    }

    /// Records that users changed (call inside the writing transaction).
    static func bumpUsersVersion(in db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO meta (key, value) VALUES ('users_version', '1')
                ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1
                """)
    }
}

extension SQLiteArchive {
    /// Every message row of a conversation above `afterKey`, oldest first, at most `limit` (`message_key`).
    ///
    /// - Complexity: O(log n + limit).
    package func storedRows(conversation: Conversation, after afterKey: Int64?, limit: Int) throws -> [StoredRow] {
        try pool.read { db in
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT id, ts_key, is_deleted, flags FROM message INDEXED BY message_key
                    WHERE conversation_id = ? AND ts_key > ? ORDER BY ts_key LIMIT ?
                    """, arguments: [conversation.rowID, afterKey ?? Int64.min, max(0, limit)])
            var out: [StoredRow] = []
            while let row = try rows.next() {
                out.append(
                    StoredRow(
                        rowID: row["id"], tsKey: row["ts_key"], isDeleted: row["is_deleted"],
                        flags: MessageFlags(rawValue: row["flags"])))
            }
            return out
        }
    }
}
