import CSlackTokenizer
import Foundation
import GRDB

/// The archive's schema, as numbered migrations. Every schema change is a new migration; none is ever edited.
enum Migrations {
    /// Every migration in order: its registered name (never changed once released) and what it does.
    static let versions: [(name: String, migrate: @Sendable (Database) throws -> Void)] = [
        ("v1 archive", v1Archive),
        ("v2 slackindex tokenizer", v2SlackindexTokenizer),
        ("v3 vocabulary", v3Vocabulary),
        ("v4 index merge policy", v4IndexMergePolicy),
        ("v5 history index", v5HistoryIndex),
        ("v6 pending deletions", v6PendingDeletions),
        ("v7 pending reactions", v7PendingReactions),
        ("v8 sync state", v8SyncState),
        ("v9 api tokens", v9ApiTokens),
        ("v10 live sync", v10LiveSync),
        ("v11 message counts", v11MessageCounts),
        ("v12 packed raw JSON", v12PackedRawJSON),
        ("v13 millisecond message ids", v13MillisecondMessageIds),
        (indexCheck, v14IndexCheck),
        (fileBlobs, v15FileBlobs),
        (workspaceImages, v16WorkspaceImages),
        (fileThumbnails, v17FileThumbnails),
        (webSessions, v18WebSessions),
        (smallIndexLeaves, v19SmallIndexLeaves),
        (wordPairs, v20WordPairs),
        (wordCounts, v21WordCounts),
        (searchScope, v22SearchScope),
    ]

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for (name, migrate) in versions { migrator.registerMigration(name, migrate: migrate) }
        return migrator
    }

    /// The migration that adds the table of fetched files (v15): a new table, no layout of old data changed.
    static let fileBlobs = "v15 file blobs"

    /// The migration that adds avatars and custom emoji (v16): new tables, no layout of old data changed.
    static let workspaceImages = "v16 avatars and custom emoji"

    /// The migration that adds image files' thumbnails (v17): a new table, no layout of old data changed.
    static let fileThumbnails = "v17 file thumbnails"

    /// The migration that keeps the web UI's sessions in the archive (v18): a new table, no layout of old data changed.
    static let webSessions = "v18 web sessions"

    /// The migration that rewrites the search index in leaves of 1,000 bytes (v19): the index only, rebuilt.
    static let smallIndexLeaves = "v19 search index leaves of 1,000 bytes"

    /// The migration that re-creates the search index with word pairs of "the" (v20): the index only, rebuilt.
    static let wordPairs = "v20 search index word pairs"

    /// The migration that keeps how many messages hold each word of the index (v21): a new table, filled.
    static let wordCounts = "v21 word counts"

    /// The migration that re-creates the search index with each message's conversation and author (v22): the index
    /// only, rebuilt, and a view of `message` as its content table (nothing stored per message).
    static let searchScope = "v22 search index scope"

    /// The migration that only checks the index (v14): it changes no layout, so applying it alone is no upgrade.
    static let indexCheck = "v14 index entries lost after edits"

    /// The registered migrations the archive has not applied, in order, and the applied ones this version does
    /// not know (a newer one applied them), sorted: one read of what is applied, one migrator built.
    static func migrationState(_ db: Database) throws -> (pending: [String], unknown: [String]) {
        let migrator = migrator
        let applied = try migrator.appliedIdentifiers(db)
        return (migrator.migrations.filter { !applied.contains($0) }, applied.subtracting(migrator.migrations).sorted())
    }

    /// True when the index shows what the unreset statement did (v14): a message that is not deleted without an
    /// entry (no `message_fts_docsize` row), a document no message has (the empty one the failed bind added, at
    /// the index's highest row id + 1), or a message with words whose document is empty (that empty document
    /// landed on the lost message's own id). A message whose words the tokenizer drops all of looks like the last
    /// and costs one needless rebuild.
    ///
    /// - Complexity: a pass over `message_key` (row ids only) and one over `message_fts_docsize`, with a
    ///   primary-key lookup each: 2.5 s for the 1M archive, 42 s for the 10M one, cold.
    static func indexLostEntries(_ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db,
            sql: """
                SELECT EXISTS (
                    SELECT 1 FROM message AS k INDEXED BY message_key
                    WHERE NOT EXISTS (SELECT 1 FROM message_fts_docsize AS d WHERE d.id = k.id)
                        AND (SELECT m.is_deleted FROM message AS m WHERE m.id = k.id) = 0)
                OR EXISTS (
                    SELECT 1 FROM message_fts_docsize AS d
                    WHERE NOT EXISTS (SELECT 1 FROM message AS m WHERE m.id = d.id AND m.is_deleted = 0))
                OR EXISTS (
                    SELECT 1 FROM message_fts_docsize AS d
                    WHERE d.sz = x'0000' AND (
                        SELECT \(SearchTextColumn.sql("m")) || ' ' || m.search_extra FROM message AS m WHERE m.id = d.id
                    ) GLOB '*[0-9A-Za-z]*')
                """) ?? false
    }

    /// The search index's leaf size and merge policy (migration v4; v13 recreates the index).
    static let indexMergePolicy = """
        INSERT INTO message_fts (message_fts, rank) VALUES ('pgsz', \(SQLiteArchive.writeLeafSize));
        INSERT INTO message_fts (message_fts, rank) VALUES ('automerge', 16);
        INSERT INTO message_fts (message_fts, rank) VALUES ('crisismerge', 32);
        """

    /// The triggers that keep `message_count` for updates and deletions (migration v11; v13 recreates the table).
    static var countTriggers: String {
        let parent = MessageFlags.threadParent.rawValue
        let top = MessageFlags.topLevel.rawValue
        func delta(_ row: String, _ sign: String) -> String {
            """
            INSERT INTO message_count (conversation_id, messages, deleted, threads, replies)
            VALUES (\(row).conversation_id, \(sign)(\(row).is_deleted = 0), \(sign)(\(row).is_deleted != 0),
                \(sign)(\(row).is_deleted = 0 AND (\(row).flags & \(parent)) != 0),
                \(sign)(\(row).is_deleted = 0 AND (\(row).flags & \(top)) = 0))
            ON CONFLICT (conversation_id) DO UPDATE SET messages = messages + excluded.messages,
                deleted = deleted + excluded.deleted, threads = threads + excluded.threads,
                replies = replies + excluded.replies;
            """
        }
        return """
            CREATE TRIGGER message_count_update AFTER UPDATE OF is_deleted, flags, conversation_id ON message
            WHEN OLD.is_deleted IS NOT NEW.is_deleted OR OLD.flags IS NOT NEW.flags
                OR OLD.conversation_id IS NOT NEW.conversation_id
            BEGIN
                \(delta("OLD", "-"))
                \(delta("NEW", "+"))
            END;
            CREATE TRIGGER message_count_delete AFTER DELETE ON message
            BEGIN
                \(delta("OLD", "-"))
            END;
            """
    }

    /// Packs the rows written before migration v12, when that is still to do (`meta.packing`: the last row id
    /// done), in the table's order, each piece of rows in its own transaction: stopping loses nothing, the next
    /// write-open goes on from there. Returns true when it packed anything.
    ///
    /// - Parameter transactions: at most this many (tests stop it half way).
    /// - Complexity: O(n) rows read and rewritten, once.
    static func packPendingRows(
        _ writer: some DatabaseWriter, rowsPerTransaction: Int = 32_768, transactions: Int = .max
    ) throws -> Bool {
        // Most opens have nothing to pack: one read, no write lock.
        let pending = try writer.read { db in
            try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM meta WHERE key = 'packing')") ?? false
        }
        guard pending else { return false }
        var packedAny = false
        for _ in 0..<transactions {
            let more = try writer.write { db -> Bool in
                guard let position = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'packing'")
                else { return false }
                guard let last = try packRows(after: Int64(position) ?? Int64.min, limit: rowsPerTransaction, in: db)
                else {
                    try db.execute(sql: "DELETE FROM meta WHERE key = 'packing'")
                    return false
                }
                try db.execute(sql: "UPDATE meta SET value = ? WHERE key = 'packing'", arguments: [String(last)])
                return true
            }
            guard more else { return packedAny }
            packedAny = true
        }
        return packedAny
    }

    /// Packs up to `limit` rows after row id `after`, in id order (the table's order: in conversation order, every
    /// page was read once per conversation it holds: 40 s for 1M rows instead of 14 s), each conversation's day
    /// among them into blocks, and empties their search texts that equal their texts; returns the last row id, or
    /// nil when there are none. One UPDATE per row: each rewrites the row.
    private static func packRows(after: Int64, limit: Int, in db: Database) throws -> Int64? {
        let microsecondsPerDay: Int64 = 86_400_000_000
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT id, conversation_id, ts_key, raw, raw_block, text, ts, user_id, thread_ts
                FROM message WHERE id > ? ORDER BY id LIMIT ?
                """,
            arguments: [after, limit])
        guard let last = rows.last else { return nil }
        let update = try db.cachedStatement(
            sql: """
                UPDATE message SET raw = CASE WHEN ?1 IS NULL THEN raw ELSE '' END,
                    raw_block = coalesce(?1, raw_block), raw_at = coalesce(?2, raw_at),
                    search_text = CASE WHEN search_text = text THEN '' ELSE search_text END
                WHERE id = ?3
                """)
        // The rows still inline, by conversation and day, in ts order within each (ids are time-ordered).
        struct Day: Hashable {
            var conversation: Int64
            var day: Int64
        }
        var runs: [Day: [Row]] = [:]
        for row in rows where (row["raw_block"] as Int64?) == nil {
            let key: Int64 = row["ts_key"]
            let day = key.quotientAndRemainder(dividingBy: microsecondsPerDay).quotient
            runs[Day(conversation: row["conversation_id"], day: day), default: []].append(row)
        }
        var located: [Int64: (block: Int64, at: Int64)] = [:]
        for run in runs.values {
            var blocks: [[UInt8]] = []
            let locations = RawBlocks.pack(
                run.lazy.map { row in
                    let fields = RepeatedFields(
                        text: row["text"], ts: row["ts"], userID: row["user_id"], threadTS: row["thread_ts"])
                    return (row["raw"] as String, fields)
                }, into: &blocks)
            let blockIDs = try RawBlocks.store(blocks, in: db)
            for (row, location) in zip(run, locations) {
                if let location { located[row["id"]] = (blockIDs[location.block], location.packed) }
            }
        }
        for row in rows {
            let id: Int64 = row["id"]
            let location = located[id]
            try update.execute(arguments: [location?.block, location?.at, id])
        }
        return last["id"]
    }

    /// The tokenizer build in this binary (rules version and ICU version).
    static var tokenizerVersion: String { String(cString: slackindex_tokenizer_version()) }

    /// Re-indexes every message not deleted, and records the tokenizer that did it.
    /// - Parameter searchTextElided: `search_text` is stored as `SearchTextColumn` says (v12 and later).
    static func rebuildIndex(_ db: Database, searchTextElided: Bool = true) throws {
        try db.execute(sql: "INSERT INTO message_fts (message_fts) VALUES ('delete-all')")
        let searchText = searchTextElided ? SearchTextColumn.sql("message") : "search_text"
        let scoped = try IndexScope.indexed(db)
        try db.execute(
            sql: """
                INSERT INTO message_fts (rowid, search_text, search_extra\(scoped ? ", " + IndexScope.column : ""))
                SELECT id, \(searchText), search_extra\(scoped ? ", " + IndexScope.definition : "")
                FROM message WHERE is_deleted = 0
                """)
        try db.execute(
            sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('tokenizer', ?)", arguments: [tokenizerVersion])
        if try db.tableExists("message_word") { try countWords(db) }
    }

    /// `message_word` counted anew from the index's vocabulary (v21, and after every whole rebuild): the
    /// vocabulary walks every doclist, 0.9 s for the generated 1M archive and 11 s for the 10M one.
    static func countWords(_ db: Database) throws {
        // Counted whole: what this transaction counted so far is in the vocabulary already.
        try WordCounts.of(db).discard()
        try db.execute(
            sql: """
                DELETE FROM message_word;
                INSERT INTO message_word (word, messages) \(WordTable.vocabularyWords);
                """)
    }

    /// True when no migration is pending (`migrationState`) and the index was built by this tokenizer (nothing to
    /// write).
    static func isCurrent(_ db: Database, pending: [String]) throws -> Bool {
        // v19 to v22 only make searches faster: an archive without them reads the same (a read-only mount,
        // `serve --read-only` after an update: an index without pairs is queried without them, its tokenizer's
        // arguments being the table's; without `message_word`, prefixes are expanded through the vocabulary; without
        // the scope column, `in:` and `from:` read the rows of the matches); the
        // next write-open applies them.
        guard pending.allSatisfy({ [smallIndexLeaves, wordPairs, wordCounts, searchScope].contains($0) }) else {
            return false
        }
        return try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'tokenizer'") == tokenizerVersion
    }

    /// A different tokenizer (new rules, or an ICU that segments CJK differently) means the stored tokens no longer
    /// match what queries produce: rebuild the index once. Returns true when it re-indexed.
    static func rebuildIndexIfTokenizerChanged(_ writer: some DatabaseWriter) throws -> Bool {
        let stored = try writer.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'tokenizer'")
        }
        guard stored != tokenizerVersion else { return false }
        try writer.write { db in try rebuildIndexInSmallLeaves(db) }
        return true
    }
}
