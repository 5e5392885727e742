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
        return migrator
    }
}
