import Foundation
import GRDB

/// A message's stored JSON as `slackindex check` reads it back, with the row fields it must agree with.
package struct StoredMessage: Sendable {
    package var id: Int64
    /// The conversation's Slack id.
    package var conversation: String
    package var ts: String
    package var userID: String?
    package var text: String
    package var subtype: String?
    package var editedTS: String?
    /// The ids of its files in order (an empty string for a file without one), when it has files.
    package var fileIDs: [String]?
    package var isDeleted: Bool
    /// The JSON as `serve` would give it back, or why it cannot be read.
    package var json: Result<String, ArchiveDamage>
}

/// What the walk over stored messages found in the packed blocks themselves.
package struct RawBlockSummary: Sendable {
    package var blocks = 0
    /// Blocks messages point into whose bytes do not inflate (damaged or not written by this code).
    package var damaged: [Int64] = []
    /// Blocks no message points into: space only (a block is never read without a message pointing into it).
    package var unreferenced: [Int64] = []
}

/// How the search index compares with the text it should hold (`slackindex_text_hash`, slack_check.c).
package struct IndexAgreement: Sendable {
    /// The index's entries, summed.
    package var indexSum: Int64
    /// What indexing every message that is not deleted gives, summed.
    package var textSum: Int64
    package var agrees: Bool { indexSum == textSum }
}

/// A conversation whose kept counts (`message_count`, what `stats` reports) differ from a recount.
package struct CountMismatch: Sendable, Equatable {
    package var conversation: String
    package var kept: [Int64]
    package var recounted: [Int64]
}

extension SQLiteArchive {
    /// SQLite's `PRAGMA integrity_check`: at most `limit` lines of what is wrong, none when the file is sound.
    ///
    /// - Complexity: a pass over every page and index of the file.
    package func storageProblems(limit: Int = 20) throws -> [String] {
        try pool.read { db in
            let lines = try String.fetchAll(db, sql: "PRAGMA integrity_check(\(max(1, limit)))")
            return lines == ["ok"] ? [] : lines
        }
    }

    /// Reads back every message's JSON as `serve` does (inline, or restored from its packed block), in id order,
    /// and reports the blocks that do not inflate and those nothing points into.
    ///
    /// Messages in id order move through time across conversations, so each conversation's current day block is
    /// in use at once: inflated blocks are kept in a bounded cache (`InflatedBlocks`) rather than the one-block
    /// cache a history page uses.
    /// - Complexity: O(n) messages and O(b) blocks, each block inflated about once.
    package func walkStoredMessages(_ body: (StoredMessage) throws -> Void) throws -> RawBlockSummary {
        try pool.read { db in
            var summary = RawBlockSummary()
            var cache = InflatedBlocks(capacity: 1_024)
            var referenced = Set<Int64>()
            var damaged = Set<Int64>()
            let blockStatement = try db.makeStatement(sql: "SELECT data FROM raw_block WHERE id = ?")
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT m.id, c.slack_id, m.ts, m.user_id, m.text, m.thread_ts, m.is_deleted, m.raw, m.raw_block,
                        m.raw_at, m.subtype, m.edited_ts,
                        CASE WHEN (m.flags & \(MessageFlags.hasFile.rawValue)) != 0 THEN (
                            SELECT group_concat(coalesce(f.file_id, ''), char(10)) FROM (
                                SELECT file_id FROM file WHERE message_id = m.id ORDER BY position) AS f)
                        END AS files
                    FROM message m JOIN conversation c ON c.id = m.conversation_id
                    ORDER BY m.id
                    """)
            while let row = try rows.next() {
                let fields = RepeatedFields(text: row[4], ts: row[2], userID: row[3], threadTS: row[5])
                let files = (row[12] as String?).map {
                    $0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                }
                var message = StoredMessage(
                    id: row[0], conversation: row[1], ts: row[2], userID: row[3], text: row[4], subtype: row[10],
                    editedTS: row[11], fileIDs: files, isDeleted: row[6], json: .success(row[7]))
                if let block: Int64 = row[8] {
                    referenced.insert(block)
                    message.json = try Self.restore(
                        block: block, at: row[9], fields: fields, cache: &cache, damaged: &damaged
                    ) { id in
                        try Data.fetchOne(blockStatement, arguments: [id]).map { [UInt8]($0) }
                    }
                }
                try body(message)
            }
            // Blocks no message points into are never read, damaged or not: space that `--repair` gives back.
            let all = try Int64.fetchCursor(db, sql: "SELECT id FROM raw_block ORDER BY id")
            while let id = try all.next() {
                summary.blocks += 1
                if !referenced.contains(id) { summary.unreferenced.append(id) }
            }
            summary.damaged = damaged.sorted()
            return summary
        }
    }

    /// One packed message's JSON, or the damage that keeps it from being read.
    private static func restore(
        block: Int64, at packed: Int64?, fields: RepeatedFields, cache: inout InflatedBlocks,
        damaged: inout Set<Int64>, load: (Int64) throws -> [UInt8]?
    ) rethrows -> Result<String, ArchiveDamage> {
        guard let packed, let location = RawLocation(block: block, packed: packed) else {
            return .failure(ArchiveDamage(description: "its location in block \(block) is invalid"))
        }
        if damaged.contains(block) {
            return .failure(ArchiveDamage(description: "its block \(block) does not inflate"))
        }
        let inflated: RawBlocks.Inflated
        if let known = cache[block] {
            inflated = known
        } else {
            guard let stored = try load(block) else {
                return .failure(ArchiveDamage(description: "its block \(block) is missing"))
            }
            guard let fresh = RawBlocks.inflate(stored) else {
                damaged.insert(block)
                return .failure(ArchiveDamage(description: "its block \(block) does not inflate"))
            }
            cache[block] = fresh
            inflated = fresh
        }
        guard let json = RawBlocks.slice(inflated, location, fields: fields) else {
            return .failure(
                ArchiveDamage(
                    description: "its location lies outside block \(block) or names a field its row lacks"))
        }
        return .success(json)
    }

    /// Compares the search index with the text it should hold: the sum of every index entry against the sum of
    /// the entries indexing each message that is not deleted would give (`slackindex_text_hash`).
    ///
    /// Read-only: SQLite's own `integrity-check` command with `rank = 1` is a write statement, refused on a
    /// read-only archive, and compares with the content table, which holds deleted messages too (before v22
    /// `message` itself, where `search_text` is elided).
    /// - Complexity: a pass over the index's entries (an `fts5vocab` instance table in the connection's temporary
    ///   schema) and one tokenizing every message: ~1 s per 100,000 messages here.
    package func indexAgreement() throws -> IndexAgreement {
        try pool.read { db in
            try Self.createInstanceTable(in: db)
            let indexSum =
                try Int64.fetchOne(
                    db,
                    sql: """
                        SELECT coalesce(sum(slackindex_index_hash(doc, col, term, offset)), 0)
                        FROM temp.message_fts_instance
                        """) ?? 0
            let textSum =
                try Int64.fetchOne(
                    db,
                    sql: """
                        SELECT coalesce(sum(\(try Self.textHashes(db))), 0)
                        FROM message m WHERE m.is_deleted = 0
                        """) ?? 0
            return IndexAgreement(indexSum: indexSum, textSum: textSum)
        }
    }

    /// The SQL of the entries message `m`'s columns give, tokenized as the archive's index tokenizes them (with
    /// word pairs since v20, `SQLiteArchive.indexTokenizer`, and the scope column since v22, `IndexScope`; an
    /// archive not yet upgraded has neither).
    private static func textHashes(_ db: Database) throws -> String {
        let pairs = try indexHasPairs(db) ? 1 : 0
        var columns = [("search_text", SearchTextColumn.sql("m")), ("search_extra", "m.search_extra")]
        if try IndexScope.indexed(db) { columns.append((IndexScope.column, IndexScope.definition)) }
        return columns.map { "slackindex_text_hash(id, '\($0.0)', \($0.1), \(pairs))" }.joined(separator: " + ")
    }

    /// Whether the search index was created with word pairs (`SQLiteArchive.indexTokenizer`, migration v20).
    package static func indexHasPairs(_ db: Database) throws -> Bool {
        let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'message_fts'") ?? ""
        return sql.contains("'\(indexTokenizer)'")
    }

    /// The messages whose index entries differ from their text's, at most `limit`, by id: found per document
    /// when `indexAgreement` does not agree (slower: the index's entries grouped by document).
    ///
    /// Also names index documents no message (or only a deleted one) has.
    /// - Complexity: O(e log e) for e index entries.
    package func indexDisagreements(limit: Int = 20) throws -> [Int64] {
        try pool.read { db in
            try Self.createInstanceTable(in: db)
            return try Int64.fetchAll(
                db,
                sql: """
                    WITH indexed AS (
                        SELECT doc AS id, sum(slackindex_index_hash(doc, col, term, offset)) AS h
                        FROM temp.message_fts_instance GROUP BY doc
                    ), expected AS (
                        SELECT id, \(try Self.textHashes(db)) AS h
                        FROM message m WHERE m.is_deleted = 0
                    )
                    SELECT id FROM (SELECT id, h FROM expected WHERE h != 0 EXCEPT SELECT id, h FROM indexed)
                    UNION
                    SELECT id FROM (SELECT id, h FROM indexed EXCEPT SELECT id, h FROM expected)
                    ORDER BY id LIMIT ?
                    """, arguments: [max(1, limit)])
        }
    }

    /// Messages that are not deleted without a document size in the index, and document sizes no such message has,
    /// at most `limit`, by id: what bm25 reads (`xColumnSize`) and the checksum does not see.
    ///
    /// - Complexity: a pass over `message_key` and one over `message_fts_docsize`, a primary-key lookup each.
    package func indexDocumentMismatches(limit: Int = 20) throws -> [Int64] {
        try pool.read { db in
            try Int64.fetchAll(
                db,
                sql: """
                    SELECT id FROM message AS m
                    WHERE m.is_deleted = 0 AND NOT EXISTS (SELECT 1 FROM message_fts_docsize AS d WHERE d.id = m.id)
                    UNION
                    SELECT id FROM message_fts_docsize AS d
                    WHERE NOT EXISTS (SELECT 1 FROM message AS m WHERE m.id = d.id AND m.is_deleted = 0)
                    ORDER BY id LIMIT ?
                    """, arguments: [max(1, limit)])
        }
    }

    private static func createInstanceTable(in db: Database) throws {
        try db.execute(
            sql: """
                CREATE VIRTUAL TABLE IF NOT EXISTS temp.message_fts_instance
                USING fts5vocab(main, message_fts, instance)
                """)
    }

    /// Conversations whose kept counts (`message_count`: messages, deleted, threads, replies) differ from a recount.
    ///
    /// - Complexity: O(n) over the messages.
    package func countMismatches() throws -> [CountMismatch] {
        try pool.read { db in
            var recounted: [Int64: [Int64]] = [:]
            for row in try Row.fetchAll(db, sql: Self.recountSQL) {
                recounted[row[0]] = [row[1], row[2], row[3], row[4]]
            }
            var kept: [Int64: [Int64]] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT conversation_id, messages, deleted, threads, replies FROM message_count")
            {
                let values: [Int64] = [row[1], row[2], row[3], row[4]]
                if values != [0, 0, 0, 0] { kept[row[0]] = values }
            }
            let names = try Dictionary(
                uniqueKeysWithValues: Row.fetchAll(db, sql: "SELECT id, slack_id FROM conversation").map {
                    (row: Row) -> (Int64, String) in (row[0], row[1])
                })
            return Set(recounted.keys).union(kept.keys).sorted().compactMap { id in
                let recount = recounted[id] ?? [0, 0, 0, 0]
                let stored = kept[id] ?? [0, 0, 0, 0]
                guard recount != stored else { return nil }
                return CountMismatch(conversation: names[id] ?? "#\(id)", kept: stored, recounted: recount)
            }
        }
    }

    /// Per conversation: messages kept, deleted, thread parents and replies (as migration v11 first counted them).
    private static var recountSQL: String {
        let parent = MessageFlags.threadParent.rawValue
        let top = MessageFlags.topLevel.rawValue
        return """
            SELECT conversation_id,
                count(*) FILTER (WHERE is_deleted = 0), count(*) FILTER (WHERE is_deleted != 0),
                count(*) FILTER (WHERE is_deleted = 0 AND (flags & \(parent)) != 0),
                count(*) FILTER (WHERE is_deleted = 0 AND (flags & \(top)) = 0)
            FROM message GROUP BY conversation_id
            """
    }

    /// Thread parents whose reply count is below the replies the archive holds, or that are not marked as parents
    /// (what `refreshReplyCounts` raises after every import): how many, and the first few as `conversation/ts`.
    ///
    /// - Complexity: O(r log n) for r replies.
    package func replyCountShortfalls(limit: Int = 10) throws -> (count: Int, examples: [String]) {
        try pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    WITH held AS (
                        SELECT conversation_id, thread_key, count(*) AS replies FROM message
                        WHERE thread_key IS NOT NULL AND thread_key != ts_key AND is_deleted = 0
                        GROUP BY conversation_id, thread_key
                    )
                    SELECT c.slack_id, p.ts FROM held h
                    JOIN message p ON p.conversation_id = h.conversation_id AND p.ts_key = h.thread_key
                    JOIN conversation c ON c.id = p.conversation_id
                    WHERE p.reply_count < h.replies OR (p.flags & \(MessageFlags.threadParent.rawValue)) = 0
                    ORDER BY p.id
                    """)
            return (rows.count, rows.prefix(limit).map { "\($0[0] as String)/\($0[1] as String)" })
        }
    }

    /// Reaction and file rows no message has, reaction rows with no count or users that are not a JSON array, and
    /// messages with reactions or files their flags do not show (`has:reaction`, `has:file` would miss them).
    ///
    /// - Complexity: O(a log n) for a reaction and file rows.
    package func attachmentProblems() throws -> [String: Int] {
        try pool.read { db in
            let reaction = MessageFlags.hasReaction.rawValue
            let file = MessageFlags.hasFile.rawValue
            let queries: [(String, String)] = [
                ("reactions without their message",
                 """
                 SELECT count(*) FROM reaction r WHERE NOT EXISTS (SELECT 1 FROM message m WHERE m.id = r.message_id)
                 """),
                ("reactions with no count or unreadable users",
                 """
                 SELECT count(*) FROM reaction WHERE count < 1 OR json_valid(users) = 0 OR json_type(users) != 'array'
                 """),
                ("files without their message",
                 "SELECT count(*) FROM file f WHERE NOT EXISTS (SELECT 1 FROM message m WHERE m.id = f.message_id)"),
                ("messages with reactions not flagged has:reaction",
                 """
                 SELECT count(*) FROM message m WHERE (m.flags & \(reaction)) = 0
                     AND EXISTS (SELECT 1 FROM reaction r WHERE r.message_id = m.id)
                 """),
                ("messages with files not flagged has:file",
                 """
                 SELECT count(*) FROM message m WHERE (m.flags & \(file)) = 0
                     AND EXISTS (SELECT 1 FROM file f WHERE f.message_id = m.id)
                 """),
            ]
            var out: [String: Int] = [:]
            for (name, sql) in queries {
                let count = try Int.fetchOne(db, sql: sql) ?? 0
                if count > 0 { out[name] = count }
            }
            return out
        }
    }
}

// MARK: Repairs

extension SQLiteArchive {
    /// Rebuilds the search index from the messages (what a tokenizer change does).
    ///
    /// - Complexity: O(n) messages tokenized and indexed again: about the index's share of an import.
    package func rebuildSearchIndex() throws {
        try pool.write { db in try Migrations.rebuildIndexInSmallLeaves(db) }
    }

    /// Counts the messages of each word anew from the index's vocabulary (`Migrations.countWords`).
    package func recountWords() throws {
        try pool.write { db in
            guard try db.tableExists("message_word") else { return }
            try Migrations.countWords(db)
        }
    }

    /// Words whose count in `message_word` differs from the index's vocabulary, both ways; none before v21.
    ///
    /// - Complexity: one pass over the vocabulary, which walks every doclist (11 s for the generated 10M archive).
    package func wordCountMismatches(limit: Int) throws -> (count: Int, examples: [String]) {
        try pool.read { db in
            guard try db.tableExists("message_word") else { return (0, []) }
            // The vocabulary read once (it walks every doclist: 11 s at 10M), then compared both ways.
            try db.execute(
                sql: """
                    DROP TABLE IF EXISTS temp.indexed_word;
                    DROP TABLE IF EXISTS temp.word_mismatch;
                    CREATE TEMP TABLE indexed_word (word TEXT PRIMARY KEY, messages INTEGER NOT NULL) WITHOUT ROWID;
                    INSERT INTO temp.indexed_word \(WordTable.vocabularyWords);
                    CREATE TEMP TABLE word_mismatch AS
                        SELECT i.word, i.messages AS indexed, coalesce(w.messages, 0) AS kept
                        FROM temp.indexed_word i LEFT JOIN main.message_word w ON w.word = i.word
                        WHERE i.messages IS NOT coalesce(w.messages, 0)
                        UNION ALL
                        SELECT w.word, 0, w.messages FROM main.message_word w
                        WHERE NOT EXISTS (SELECT 1 FROM temp.indexed_word i WHERE i.word = w.word);
                    """)
            defer { try? db.execute(sql: "DROP TABLE temp.indexed_word; DROP TABLE temp.word_mismatch") }
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM temp.word_mismatch") ?? 0
            let examples = try Row.fetchAll(
                db, sql: "SELECT word, indexed, kept FROM temp.word_mismatch ORDER BY word LIMIT ?", arguments: [limit]
            ).map { row -> String in
                let word: String = row["word"]
                return "\(word): kept \(row["kept"] as Int64), the index has \(row["indexed"] as Int64)"
            }
            return (count, examples)
        }
    }

    /// Recounts `message_count` from the messages.
    package func recountMessageCounts() throws {
        try pool.write { db in
            try db.execute(sql: "DELETE FROM message_count")
            try db.execute(
                sql: """
                    INSERT INTO message_count (conversation_id, messages, deleted, threads, replies)
                    \(Self.recountSQL)
                    """)
        }
    }

    /// Raises every thread parent's reply count to the replies held (`refreshReplyCounts` for every conversation).
    package func refreshAllReplyCounts() throws {
        try pool.write { db in
            for id in try Int64.fetchAll(db, sql: "SELECT id FROM conversation") {
                try SQLiteArchive.refreshReplyCounts(conversationRowID: id, in: db)
            }
        }
    }

    /// Deletes reaction and file rows no message has, sets the flags of messages that have reactions or files, and
    /// deletes packed blocks no message points into.
    package func repairAttachmentsAndBlocks(unreferencedBlocks: [Int64]) throws {
        let reaction = MessageFlags.hasReaction.rawValue
        let file = MessageFlags.hasFile.rawValue
        try pool.write { db in
            try db.execute(
                sql: """
                    DELETE FROM reaction WHERE NOT EXISTS (SELECT 1 FROM message m WHERE m.id = reaction.message_id);
                    DELETE FROM file WHERE NOT EXISTS (SELECT 1 FROM message m WHERE m.id = file.message_id);
                    UPDATE message SET flags = flags | \(reaction) WHERE (flags & \(reaction)) = 0
                        AND EXISTS (SELECT 1 FROM reaction r WHERE r.message_id = message.id);
                    UPDATE message SET flags = flags | \(file) WHERE (flags & \(file)) = 0
                        AND EXISTS (SELECT 1 FROM file f WHERE f.message_id = message.id);
                    """)
            let delete = try db.makeStatement(sql: "DELETE FROM raw_block WHERE id = ?")
            for id in unreferencedBlocks { try delete.execute(arguments: [id]) }
        }
    }

    /// Marks messages whose stored JSON is damaged so that importing the same source again rewrites them: their
    /// hash no longer matches any version (an import skips a message whose hash it already holds).
    package func markForReimport(messageIDs: [Int64]) throws {
        try pool.write { db in
            let statement = try db.makeStatement(sql: "UPDATE message SET hash = 0, edited_key = 0 WHERE id = ?")
            for id in messageIDs { try statement.execute(arguments: [id]) }
        }
    }
}

/// Inflated blocks by id, at most `capacity`, the oldest inserted evicted first.
struct InflatedBlocks {
    private var blocks: [Int64: RawBlocks.Inflated] = [:]
    private var order: [Int64] = []
    private var next = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The inflated block `id`, when cached; setting one evicts the oldest when full.
    ///
    /// - Complexity: O(1) amortized.
    subscript(id: Int64) -> RawBlocks.Inflated? {
        get { blocks[id] }
        set {
            guard let newValue else { return }
            if blocks[id] == nil {
                if order.count < capacity {
                    order.append(id)
                } else {
                    blocks[order[next]] = nil
                    order[next] = id
                    next = (next + 1) % capacity
                }
            }
            blocks[id] = newValue
        }
    }
}

extension SQLiteArchive {
    /// `conversation/ts` of each id, in order; `index document ID` for an id no message has (an index entry
    /// without one).
    ///
    /// - Complexity: O(k log n) for k ids.
    package func messageHandles(ids: [Int64]) throws -> [String] {
        try pool.read { db in
            let statement = try db.makeStatement(
                sql: """
                    SELECT c.slack_id || '/' || m.ts FROM message m JOIN conversation c ON c.id = m.conversation_id
                    WHERE m.id = ?
                    """)
            return try ids.map { id in try String.fetchOne(statement, arguments: [id]) ?? "index document \(id)" }
        }
    }
}

extension SQLiteArchive {
    /// The newest migration applied to the file (GRDB's migration table).
    package func schemaVersion() throws -> String {
        try pool.read { db in try Migrations.migrator.appliedMigrations(db).last ?? "" }
    }
}
