import CSlackTokenizer
import Foundation
import GRDB

extension Migrations {
    /// Migration v12 packed raw JSON.
    static func v12PackedRawJSON(_ db: Database) throws {
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

    /// Migration v13 millisecond message ids.
    static func v13MillisecondMessageIds(_ db: Database) throws {
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

    /// Migration v14 (`indexCheck`).
    static func v14IndexCheck(_ db: Database) throws {
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

    /// Migration v15 (`fileBlobs`): which blob of the file store beside the archive (`FileBlobs`) holds each
    /// fetched file.
    static func v15FileBlobs(_ db: Database) throws {
        try SQLiteArchive.createFileBlobTable(db)
    }

    /// Migration v16 (`workspaceImages`): each member's profile image URL and custom emoji (`emoji.list`), and the
    /// blob of the file store that holds each once fetched.
    static func v16WorkspaceImages(_ db: Database) throws {
        try SQLiteArchive.createWorkspaceImageTables(db)
    }

    /// Migration v17 (`fileThumbnails`): the blob of the file store that holds each image file's thumbnail, once
    /// fetched from Slack's `thumb_*` URL.
    static func v17FileThumbnails(_ db: Database) throws {
        try SQLiteArchive.createFileThumbTable(db)
    }

    /// Migration v18 (`webSessions`): the web UI's sessions, so that every `serve` over the archive knows them
    /// (`SQLiteArchive.startSession`).
    static func v18WebSessions(_ db: Database) throws {
        try db.execute(sql: WebSession.sqliteTable)
    }

    /// Migration v19 (`smallIndexLeaves`): the search index rewritten in one segment of 1,000-byte leaves
    /// (`SQLiteArchive.optimizeIndex`, which says why). An index of one segment is not rewritten by FTS5's
    /// `optimize`, so it is rebuilt first, in small leaves already (a rebuild that fits one segment is not merged
    /// either): 11.4 s for the generated 1M archive.
    static func v19SmallIndexLeaves(_ db: Database) throws {
        guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM message)") == true else { return }
        try rebuildIndexInSmallLeaves(db)
    }

    /// Migration v20 (`wordPairs`): the search index re-created with the tokenizer's word pairs
    /// (`SQLiteArchive.indexTokenizer`) and rebuilt in small leaves. A phrase with "the" then matches the pair's
    /// documents instead of checking the positions of "the", which half the messages hold, in every message of the
    /// other word: 513 such phrases counted on the generated 1M archive in 0.58 s instead of 3.39 s, the same
    /// matches; `"addition the"` on 10M took ~70 ms. The index grows by 13% (122 → 138 MB at 1M).
    static func v20WordPairs(_ db: Database) throws {
        try db.execute(
            sql: """
                DROP TABLE message_vocab;
                DROP TABLE message_fts;
                CREATE VIRTUAL TABLE message_fts USING fts5(
                    search_text, search_extra,
                    content = 'message', content_rowid = 'id',
                    tokenize = '\(SQLiteArchive.indexTokenizer)'
                );
                \(indexMergePolicy)
                CREATE VIRTUAL TABLE message_vocab USING fts5vocab(message_fts, 'row');
                """)
        try rebuildIndexInSmallLeaves(db)
    }

    /// Migration v21 (`wordCounts`): how many messages hold each word of the index (`WordCounts`, which keeps it
    /// as the index is written), counted from the index's vocabulary. A prefix search reads its words' counts there:
    /// `clas*` on the generated 10M archive spent 44–47 ms in the vocabulary walking the doclists of 6 words.
    static func v21WordCounts(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE message_word (word TEXT PRIMARY KEY, messages INTEGER NOT NULL) WITHOUT ROWID")
        try countWords(db)
    }

    /// Migration v22 (`searchScope`): the search index re-created with a third column, each message's conversation
    /// and author as scope words (`IndexScope`), and rebuilt in small leaves. Its content table is a view of
    /// `message` with the texts as indexed (`IndexScope.contentView`), where it was `message` itself (whose
    /// `search_text` is elided where it equals the text): nothing is stored per row, and nothing computed as a row is
    /// written (a generated column of `message` was, on every insert: 0.25 G instructions for 50,000 messages).
    static func v22SearchScope(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE VIEW \(IndexScope.contentView) AS SELECT id, \(SearchTextColumn.sql("message")) AS search_text,
                    search_extra, \(IndexScope.definition) AS \(IndexScope.column) FROM message;
                DROP TABLE message_vocab;
                DROP TABLE message_fts;
                CREATE VIRTUAL TABLE message_fts USING fts5(
                    search_text, search_extra, \(IndexScope.column),
                    content = '\(IndexScope.contentView)', content_rowid = 'id',
                    tokenize = '\(SQLiteArchive.indexTokenizer)'
                );
                \(indexMergePolicy)
                CREATE VIRTUAL TABLE message_vocab USING fts5vocab(message_fts, 'row');
                """)
        try rebuildIndexInSmallLeaves(db)
    }

    /// `rebuildIndex`, then the index merged in `SQLiteArchive.mergedLeafSize` leaves (written so from the start: a
    /// rebuild that fits one segment is not merged). Every whole rebuild goes this way (v19, a new tokenizer,
    /// `check --repair`).
    static func rebuildIndexInSmallLeaves(_ db: Database) throws {
        try db.execute(
            sql: "INSERT INTO message_fts (message_fts, rank) VALUES ('pgsz', \(SQLiteArchive.mergedLeafSize))")
        try rebuildIndex(db)
        try SQLiteArchive.optimizeIndex(db)
    }
}
