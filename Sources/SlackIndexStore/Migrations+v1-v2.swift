import CSlackTokenizer
import Foundation
import GRDB

extension Migrations {
    /// Migration v1 archive.
    static func v1Archive(_ db: Database) throws {
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

    /// Migration v2 slackindex tokenizer.
    static func v2SlackindexTokenizer(_ db: Database) throws {
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
}
