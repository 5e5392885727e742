import CSlackTokenizer
import Foundation
import GRDB

extension Migrations {
    /// Migration v6 pending deletions.
    static func v6PendingDeletions(_ db: Database) throws {
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

    /// Migration v7 pending reactions.
    static func v7PendingReactions(_ db: Database) throws {
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

    /// Migration v8 sync state.
    static func v8SyncState(_ db: Database) throws {
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

    /// Migration v9 api tokens.
    static func v9ApiTokens(_ db: Database) throws {
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

    /// Migration v10 live sync.
    static func v10LiveSync(_ db: Database) throws {
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

    /// Migration v11 message counts.
    static func v11MessageCounts(_ db: Database) throws {
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
}
