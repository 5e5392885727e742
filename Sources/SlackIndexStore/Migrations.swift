import CSlackTokenizer
import Foundation
import GRDB

/// The archive's schema, as numbered migrations. Every schema change is a new migration; none is ever edited.
enum Migrations {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1 archive") { db in
            try db.execute(
                sql: """
                    CREATE TABLE workspace (
                        id INTEGER PRIMARY KEY,
                        team_id TEXT NOT NULL UNIQUE,
                        name TEXT,
                        domain TEXT
                    );
                    CREATE TABLE user (
                        id TEXT PRIMARY KEY,
                        team_id TEXT,
                        handle TEXT NOT NULL,
                        real_name TEXT,
                        display_name TEXT,
                        is_bot INTEGER NOT NULL DEFAULT 0,
                        is_deleted INTEGER NOT NULL DEFAULT 0,
                        is_placeholder INTEGER NOT NULL DEFAULT 0,
                        time_zone TEXT
                    );
                    CREATE TABLE conversation (
                        id INTEGER PRIMARY KEY,
                        slack_id TEXT NOT NULL UNIQUE,
                        workspace_id INTEGER REFERENCES workspace(id),
                        kind TEXT NOT NULL CHECK (kind IN ('channel', 'private', 'dm', 'mpim')),
                        name TEXT NOT NULL,
                        folder TEXT,
                        created INTEGER,
                        topic TEXT,
                        purpose TEXT,
                        is_archived INTEGER NOT NULL DEFAULT 0,
                        members TEXT NOT NULL DEFAULT '[]'
                    );
                    CREATE TABLE message (
                        id INTEGER PRIMARY KEY,
                        conversation_id INTEGER NOT NULL,
                        ts TEXT NOT NULL,
                        ts_key INTEGER NOT NULL,
                        user_id TEXT,
                        username TEXT,
                        subtype TEXT,
                        thread_ts TEXT,
                        thread_key INTEGER,
                        reply_count INTEGER NOT NULL DEFAULT 0,
                        edited_ts TEXT,
                        edited_key INTEGER NOT NULL DEFAULT 0,
                        flags INTEGER NOT NULL DEFAULT 0,
                        is_deleted INTEGER NOT NULL DEFAULT 0,
                        text TEXT NOT NULL,
                        search_text TEXT NOT NULL,
                        search_extra TEXT NOT NULL,
                        raw TEXT NOT NULL,
                        hash INTEGER NOT NULL
                    );
                    CREATE UNIQUE INDEX message_key ON message(conversation_id, ts_key);
                    CREATE INDEX message_thread ON message(conversation_id, thread_key, ts_key)
                        WHERE thread_key IS NOT NULL;
                    CREATE TABLE reaction (
                        message_id INTEGER NOT NULL,
                        name TEXT NOT NULL,
                        count INTEGER NOT NULL,
                        users TEXT NOT NULL,
                        PRIMARY KEY (message_id, name)
                    ) WITHOUT ROWID;
                    CREATE TABLE file (
                        message_id INTEGER NOT NULL,
                        position INTEGER NOT NULL,
                        file_id TEXT,
                        name TEXT,
                        title TEXT,
                        mimetype TEXT,
                        filetype TEXT,
                        size INTEGER,
                        mode TEXT,
                        url_private TEXT,
                        url_download TEXT,
                        permalink TEXT,
                        PRIMARY KEY (message_id, position)
                    ) WITHOUT ROWID;
                    CREATE VIRTUAL TABLE message_fts USING fts5(
                        search_text, search_extra,
                        content = 'message', content_rowid = 'id',
                        tokenize = 'unicode61 remove_diacritics 2'
                    );
                    """)
        }
        migrator.registerMigration("v2 slackindex tokenizer") { db in
            // Case and diacritic folding that also handles combining accents and İ, plus ICU word breaking for
            // CJK and Thai runs (Sources/CSlackTokenizer). Existing archives are re-indexed here.
            //
            // Message ids become globally time-ordered (ts in microseconds × 64 + a tie-breaker for messages of
            // other conversations with the same ts). The index's rowid is the id, so FTS5 itself returns the
            // newest matches first, stops early and applies date bounds as rowid ranges: that keeps very common
            // words fast. Imports write day by day, so the table and the index still grow by appending.
            try db.execute(
                sql: """
                    CREATE TABLE message_v2 (
                        id INTEGER PRIMARY KEY,
                        conversation_id INTEGER NOT NULL,
                        ts TEXT NOT NULL,
                        ts_key INTEGER NOT NULL,
                        user_id TEXT,
                        username TEXT,
                        subtype TEXT,
                        thread_ts TEXT,
                        thread_key INTEGER,
                        reply_count INTEGER NOT NULL DEFAULT 0,
                        edited_ts TEXT,
                        edited_key INTEGER NOT NULL DEFAULT 0,
                        flags INTEGER NOT NULL DEFAULT 0,
                        is_deleted INTEGER NOT NULL DEFAULT 0,
                        text TEXT NOT NULL,
                        search_text TEXT NOT NULL,
                        search_extra TEXT NOT NULL,
                        raw TEXT NOT NULL,
                        hash INTEGER NOT NULL
                    );
                    CREATE TEMP TABLE message_id_map AS
                        SELECT id AS old_id, ts_key * 64 + (row_number() OVER (PARTITION BY ts_key ORDER BY id) - 1)
                            AS new_id
                        FROM message;
                    INSERT INTO message_v2
                        SELECT map.new_id, conversation_id, ts, ts_key, user_id, username, subtype, thread_ts,
                            thread_key, reply_count, edited_ts, edited_key, flags, is_deleted, text, search_text,
                            search_extra, raw, hash
                        FROM message JOIN message_id_map map ON map.old_id = message.id
                        ORDER BY map.new_id;
                    UPDATE reaction SET message_id = (SELECT new_id FROM message_id_map WHERE old_id = message_id);
                    UPDATE file SET message_id = (SELECT new_id FROM message_id_map WHERE old_id = message_id);
                    DROP TABLE message_id_map;
                    DROP TABLE message_fts;
                    DROP TABLE message;
                    ALTER TABLE message_v2 RENAME TO message;
                    CREATE UNIQUE INDEX message_key ON message(conversation_id, ts_key);
                    CREATE INDEX message_thread ON message(conversation_id, thread_key, ts_key)
                        WHERE thread_key IS NOT NULL;
                    CREATE VIRTUAL TABLE message_fts USING fts5(
                        search_text, search_extra,
                        content = 'message', content_rowid = 'id',
                        tokenize = 'slackindex'
                    );
                    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                    """)
            try rebuildIndex(db, searchTextElided: false)
        }
        migrator.registerMigration("v3 vocabulary") { db in
            // The index's vocabulary (term → documents), for benchmarks drawn from the archive's own words.
            try db.execute(sql: "CREATE VIRTUAL TABLE message_vocab USING fts5vocab(message_fts, 'row')")
        }
        migrator.registerMigration("v4 index merge policy") { db in
            // Bigger leaf pages and lazier merging: measured 30.9 s → 23.6 s for the 1M-message import (with the
            // larger WAL the importer sets), the index's writes being the largest part of the writer's time.
            try db.execute(
                sql: indexMergePolicy)
        }
        migrator.registerMigration("v5 history index") { db in
            // The channel view's own index: a history page reads 50 index entries and 50 rows, not the thread
            // replies in between (the newest pages of a busy channel went 0.18 → ~0.1 ms per page of 50).
            try db.execute(
                sql: """
                    CREATE INDEX message_history ON message(conversation_id, ts_key)
                    WHERE (flags & 96) != 0 AND is_deleted = 0
                    """)
        }
        migrator.registerMigration("v6 pending deletions") { db in
            // Deletion events for messages the archive does not have yet (pages applied out of order): kept
            // until the message arrives, then applied.
            try db.execute(
                sql: """
                    CREATE TABLE pending_deletion (
                        conversation_id INTEGER NOT NULL,
                        ts_key INTEGER NOT NULL,
                        PRIMARY KEY (conversation_id, ts_key)
                    ) WITHOUT ROWID
                    """)
        }
        migrator.registerMigration("v7 pending reactions") { db in
            // reaction_added / reaction_removed events for messages not archived yet, in arrival order.
            try db.execute(
                sql: """
                    CREATE TABLE pending_reaction (
                        id INTEGER PRIMARY KEY,
                        conversation_id INTEGER NOT NULL,
                        ts_key INTEGER NOT NULL,
                        name TEXT NOT NULL,
                        user_id TEXT NOT NULL,
                        added INTEGER NOT NULL
                    )
                    """)
        }
        migrator.registerMigration("v8 sync state") { db in
            // Every history-style page imported (its newest and oldest ts and where its cursor points), so page
            // sequences that do not connect can be reported as gaps; and per conversation the newest ts seen and
            // the last cursor, where an incremental sync resumes.
            try db.execute(
                sql: """
                    CREATE TABLE sync_page (
                        conversation_id INTEGER NOT NULL,
                        newest_key INTEGER NOT NULL,
                        oldest_key INTEGER NOT NULL,
                        next_key INTEGER,
                        PRIMARY KEY (conversation_id, newest_key)
                    ) WITHOUT ROWID;
                    CREATE TABLE sync_state (
                        conversation_id INTEGER PRIMARY KEY,
                        newest_ts TEXT,
                        newest_key INTEGER,
                        last_cursor TEXT
                    );
                    """)
        }
        migrator.registerMigration("v9 api tokens") { db in
            // Tokens of `slackindex serve`: only their SHA-256 (hex) is stored, so the database never holds a
            // usable token. A token acts as one user of the archive; an admin token sees every conversation.
            try db.execute(
                sql: """
                    CREATE TABLE api_token (
                        id INTEGER PRIMARY KEY,
                        hash TEXT NOT NULL UNIQUE,
                        user_id TEXT NOT NULL,
                        is_admin INTEGER NOT NULL DEFAULT 0,
                        created INTEGER NOT NULL,
                        label TEXT
                    )
                    """)
        }
        migrator.registerMigration("v10 live sync") { db in
            // Live sync (`slackindex sync`): `synced_ts` is where a conversation's history is complete (it only moves
            // when a run finishes); `sync_run` is a run in progress (its bounds and next cursor, written in the same
            // transaction as each page, so a killed sync resumes at the page it stopped at); `sync_thread` holds the
            // threads whose replies still have to be fetched, with their cursor.
            try db.execute(
                sql: """
                    ALTER TABLE sync_state ADD COLUMN synced_ts TEXT;
                    CREATE TABLE sync_run (
                        conversation_id INTEGER PRIMARY KEY,
                        oldest_ts TEXT,
                        top_ts TEXT,
                        low_ts TEXT,
                        cursor TEXT,
                        pages INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE TABLE sync_thread (
                        conversation_id INTEGER NOT NULL,
                        thread_ts TEXT NOT NULL,
                        oldest_ts TEXT,
                        cursor TEXT,
                        PRIMARY KEY (conversation_id, thread_ts)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v11 message counts") { db in
            // What `stats` reports, kept as the archive changes instead of counted over every message (0.8 s on
            // 1M messages). Inserts add to it from MessageWriter, a batch at a time: an insert trigger measured
            // +2.3 µs per message, ~14% of the bulk import. Updates and deletions, which are few, go through the
            // triggers, so every path that edits, deletes or re-flags a message keeps the counts.
            let parent = MessageFlags.threadParent.rawValue
            let top = MessageFlags.topLevel.rawValue
            try db.execute(
                sql: """
                    CREATE TABLE message_count (
                        conversation_id INTEGER PRIMARY KEY,
                        messages INTEGER NOT NULL DEFAULT 0,
                        deleted INTEGER NOT NULL DEFAULT 0,
                        threads INTEGER NOT NULL DEFAULT 0,
                        replies INTEGER NOT NULL DEFAULT 0
                    );
                    INSERT INTO message_count (conversation_id, messages, deleted, threads, replies)
                    SELECT conversation_id,
                        count(*) FILTER (WHERE is_deleted = 0), count(*) FILTER (WHERE is_deleted != 0),
                        count(*) FILTER (WHERE is_deleted = 0 AND (flags & \(parent)) != 0),
                        count(*) FILTER (WHERE is_deleted = 0 AND (flags & \(top)) = 0)
                    FROM message GROUP BY conversation_id;
                    \(countTriggers)
                    """)
        }
        migrator.registerMigration("v12 packed raw JSON") { db in
            // Fewer bytes for the same content: messages' raw JSON packed and compressed a conversation's day at a
            // time (`RawBlocks`), and `search_text` left empty where it equals `text` (`SearchTextColumn`). The
            // 1M-message archive: 1,273 → 768 MB. Rows keep `raw` empty while packed (`raw_block`, `raw_at`); rows
            // an update rewrites keep their JSON inline. The existing rows are packed after this migration, in
            // transactions of 32,768 rows (`packPendingRows`): one transaction would grow the WAL to the archive's
            // size (7.7 GB for 10M messages).
            try db.execute(
                sql: """
                    CREATE TABLE raw_block (id INTEGER PRIMARY KEY, data BLOB NOT NULL);
                    ALTER TABLE message ADD COLUMN raw_block INTEGER;
                    ALTER TABLE message ADD COLUMN raw_at INTEGER;
                    UPDATE message SET search_text = ' ' WHERE search_text = '' AND text != '';
                    INSERT OR REPLACE INTO meta (key, value) VALUES ('packing', '');
                    """)
        }
        migrator.registerMigration("v13 millisecond message ids") { db in
            // Ids from the ts's second and its fraction in 1,024ths instead of its microsecond (`MessageID`): the
            // search index stores each word's documents as rowid deltas, three bytes shorter each (the 1M-message
            // archive's index 193 → 137 MB). The ids are renumbered in their order, each the larger of its preferred
            // id and the previous one's + 1 (a running maximum), so the order stays and no two collide. A second's
            // messages are then kept inside its ids when they fit (at most 1,024): each at most its second's last
            // id less the messages after it there, so date bounds on whole seconds stay exact; a final running
            // maximum keeps the ids strictly increasing (it changes only seconds that did not fit). Packing still
            // under way (`meta.packing`, an old id) goes on from the same row's new id. The table is copied in the
            // new order, reactions and files follow, and the index is rebuilt. One transaction: stopping loses
            // nothing, and the write-ahead log grows to about the archive's size until it is done. Copied rather
            // than renumbered in place (ids negated, then set): on the 1M archive in the sqlite3 shell, in place took
            // 23.7 s against ~6 s and left the table's pages half empty (528 MB, 268 MB of it unused).
            let preferred = MessageID.preferredSQL("ts_key")
            let perSecond = MessageID.perSecond
            let secondStart = MessageID.secondSQL("ts_key")
            try db.execute(
                sql: """
                    CREATE TEMP TABLE message_id_map (old_id INTEGER PRIMARY KEY, new_id INTEGER NOT NULL);
                    INSERT INTO message_id_map (old_id, new_id)
                    WITH ranked AS (
                        SELECT id, row_number() OVER (ORDER BY id) AS position, \(preferred) AS preferred,
                            \(secondStart) AS second
                        FROM message
                    ), spread AS (
                        SELECT id, position, second,
                            position + max(preferred - position) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) AS id2,
                            count(*) OVER (PARTITION BY second) AS inSecond,
                            row_number() OVER (PARTITION BY second ORDER BY id) AS rank
                        FROM ranked
                    ), kept AS (
                        SELECT id, position, CASE WHEN inSecond <= \(perSecond)
                            THEN min(id2, second + \(perSecond - 1) - (inSecond - rank)) ELSE id2 END
                            AS id3
                        FROM spread
                    )
                    SELECT id, position + max(id3 - position) OVER (ORDER BY id ROWS UNBOUNDED PRECEDING) FROM kept;
                    UPDATE meta SET value = coalesce(
                            (SELECT CAST(max(new_id) AS TEXT) FROM message_id_map
                             WHERE old_id <= CAST(meta.value AS INTEGER)), '')
                        WHERE key = 'packing' AND value != '';
                    CREATE TABLE message_v13 (
                        id INTEGER PRIMARY KEY,
                        conversation_id INTEGER NOT NULL,
                        ts TEXT NOT NULL,
                        ts_key INTEGER NOT NULL,
                        user_id TEXT,
                        username TEXT,
                        subtype TEXT,
                        thread_ts TEXT,
                        thread_key INTEGER,
                        reply_count INTEGER NOT NULL DEFAULT 0,
                        edited_ts TEXT,
                        edited_key INTEGER NOT NULL DEFAULT 0,
                        flags INTEGER NOT NULL DEFAULT 0,
                        is_deleted INTEGER NOT NULL DEFAULT 0,
                        text TEXT NOT NULL,
                        search_text TEXT NOT NULL,
                        search_extra TEXT NOT NULL,
                        raw TEXT NOT NULL,
                        hash INTEGER NOT NULL,
                        raw_block INTEGER,
                        raw_at INTEGER
                    );
                    INSERT INTO message_v13
                        SELECT map.new_id, conversation_id, ts, ts_key, user_id, username, subtype, thread_ts,
                            thread_key, reply_count, edited_ts, edited_key, flags, is_deleted, text, search_text,
                            search_extra, raw, hash, raw_block, raw_at
                        FROM message JOIN message_id_map map ON map.old_id = message.id
                        ORDER BY map.new_id;
                    CREATE TEMP TABLE reaction_v12 AS SELECT * FROM reaction;
                    DELETE FROM reaction;
                    INSERT INTO reaction (message_id, name, count, users)
                        SELECT coalesce(map.new_id, r.message_id), r.name, r.count, r.users
                        FROM reaction_v12 r LEFT JOIN message_id_map map ON map.old_id = r.message_id;
                    CREATE TEMP TABLE file_v12 AS SELECT * FROM file;
                    DELETE FROM file;
                    INSERT INTO file (message_id, position, file_id, name, title, mimetype, filetype, size, mode,
                            url_private, url_download, permalink)
                        SELECT coalesce(map.new_id, f.message_id), f.position, f.file_id, f.name, f.title,
                            f.mimetype, f.filetype, f.size, f.mode, f.url_private, f.url_download, f.permalink
                        FROM file_v12 f LEFT JOIN message_id_map map ON map.old_id = f.message_id;
                    DROP TABLE reaction_v12;
                    DROP TABLE file_v12;
                    DROP TABLE message_id_map;
                    DROP TABLE message_vocab;
                    DROP TABLE message_fts;
                    DROP TABLE message;
                    ALTER TABLE message_v13 RENAME TO message;
                    CREATE UNIQUE INDEX message_key ON message(conversation_id, ts_key);
                    CREATE INDEX message_thread ON message(conversation_id, thread_key, ts_key)
                        WHERE thread_key IS NOT NULL;
                    CREATE INDEX message_history ON message(conversation_id, ts_key)
                        WHERE (flags & 96) != 0 AND is_deleted = 0;
                    \(countTriggers)
                    CREATE VIRTUAL TABLE message_fts USING fts5(
                        search_text, search_extra,
                        content = 'message', content_rowid = 'id',
                        tokenize = 'slackindex'
                    );
                    \(indexMergePolicy)
                    CREATE VIRTUAL TABLE message_vocab USING fts5vocab(message_fts, 'row');
                    """)
            try rebuildIndex(db)
        }
        migrator.registerMigration(indexCheck) { db in
            // Before this version, an edit that changed a stored message's index entry left the statement that
            // adds entries unreset (`MessageWriter.ready`): binding the next new message failed, so that message got
            // no entry (search never found it) and the statement added an empty document instead. When that is
            // found (`indexLostEntries`), the index is marked stale, and the open rebuilds it from the messages right
            // after the migrations (`rebuildIndexIfTokenizerChanged`, which also finishes it if this process stops
            // first). An archive without it is left as it is.
            if try indexLostEntries(db) {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('tokenizer', ?)",
                    arguments: ["stale: entries lost after edits"])
            }
        }
        migrator.registerMigration(fileBlobs) { db in
            // Which blob of the file store beside the archive (`FileBlobs`) holds each fetched file.
            try Archive.createFileBlobTable(db)
        }
        return migrator
    }

    /// The migration that adds the table of fetched files (v15): a new table, no layout of old data changed.
    static let fileBlobs = "v15 file blobs"

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
    private static let indexMergePolicy = """
        INSERT INTO message_fts (message_fts, rank) VALUES ('pgsz', 16000);
        INSERT INTO message_fts (message_fts, rank) VALUES ('automerge', 16);
        INSERT INTO message_fts (message_fts, rank) VALUES ('crisismerge', 32);
        """

    /// The triggers that keep `message_count` for updates and deletions (migration v11; v13 recreates the table).
    private static var countTriggers: String {
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
        try db.execute(
            sql: """
                INSERT INTO message_fts (rowid, search_text, search_extra)
                SELECT id, \(searchText), search_extra FROM message WHERE is_deleted = 0
                """)
        try db.execute(
            sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('tokenizer', ?)", arguments: [tokenizerVersion])
    }

    /// True when no migration is pending (`migrationState`) and the index was built by this tokenizer (nothing to
    /// write).
    static func isCurrent(_ db: Database, pending: [String]) throws -> Bool {
        guard pending.isEmpty else { return false }
        return try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'tokenizer'") == tokenizerVersion
    }

    /// A different tokenizer (new rules, or an ICU that segments CJK differently) means the stored tokens no longer
    /// match what queries produce: rebuild the index once. Returns true when it re-indexed.
    static func rebuildIndexIfTokenizerChanged(_ writer: some DatabaseWriter) throws -> Bool {
        let stored = try writer.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'tokenizer'")
        }
        guard stored != tokenizerVersion else { return false }
        try writer.write { db in try rebuildIndex(db) }
        return true
    }
}
