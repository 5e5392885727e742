import CSlackTokenizer
import PostgresNIO

/// The PostgreSQL archive's tables, as numbered migrations; every schema change is a new one.
///
/// Laid out for Citus (docs/postgresql.md): the message table's key starts with `conversation_id`, its distribution
/// column, and nothing in it is unique without that column (the row id `id`, time-ordered as on SQLite
/// (`MessageID`), is indexed but not unique-constrained: the store keeps it unique when it assigns it).
/// `workspace`, `conversation` and `slack_user` are small reference tables. Reactions and files live in the
/// message row (`jsonb`), so one row holds what a hit or a page shows and nothing needs a join across shards.
/// The search index is a stored `tsvector` built from the C tokenizer's tokens (`PostgresTokens`) with a GIN index.
enum PostgresSchema {
    /// The migrations, oldest first: (name, statements).
    static let versions: [(name: String, sql: [String])] = [
        ("pg1-archive", v1),
        ("pg2-pages-and-sync", v2),
        ("pg3-tokens", v3),
        ("pg4-sessions", v4),
    ]

    /// The web UI's sessions, as on SQLite (`WebSession`): only each id's SHA-256; a small reference table.
    private static let v4 = [
        """
        CREATE TABLE web_session (
            id BIGSERIAL PRIMARY KEY,
            id_hash TEXT NOT NULL UNIQUE,
            token_id BIGINT,
            user_id TEXT NOT NULL,
            is_admin BOOLEAN NOT NULL,
            label TEXT,
            started BIGINT NOT NULL,
            last_used BIGINT NOT NULL
        )
        """,
        "CREATE INDEX web_session_holder ON web_session (token_id, id)",
    ]

    /// `serve`'s tokens, as on SQLite: only each token's SHA-256 (`APIToken.hash`). A small reference table.
    private static let v3 = [
        """
        CREATE TABLE api_token (
            id BIGSERIAL PRIMARY KEY,
            hash TEXT NOT NULL UNIQUE,
            user_id TEXT NOT NULL,
            is_admin BOOLEAN NOT NULL DEFAULT false,
            created BIGINT NOT NULL,
            label TEXT
        )
        """
    ]

    /// API pages and sync, as on SQLite: each history page's span, for gap reports, and each conversation's newest
    /// message seen in one (`SQLiteArchive.recordPage`); a sync's run in progress, its threads to fetch, and reaction
    /// events waiting for their message. Keyed by `conversation_id`, the message table's distribution column.
    private static let v2 = [
        """
        CREATE TABLE sync_page (
            conversation_id BIGINT NOT NULL,
            newest_key BIGINT NOT NULL,
            oldest_key BIGINT NOT NULL,
            next_key BIGINT,
            PRIMARY KEY (conversation_id, newest_key)
        )
        """,
        """
        CREATE TABLE sync_state (
            conversation_id BIGINT PRIMARY KEY,
            newest_ts TEXT,
            newest_key BIGINT,
            last_cursor TEXT,
            synced_ts TEXT
        )
        """,
        """
        CREATE TABLE sync_run (
            conversation_id BIGINT PRIMARY KEY,
            oldest_ts TEXT,
            top_ts TEXT,
            low_ts TEXT,
            cursor TEXT,
            pages BIGINT NOT NULL DEFAULT 0
        )
        """,
        """
        CREATE TABLE sync_thread (
            conversation_id BIGINT NOT NULL,
            thread_ts TEXT NOT NULL,
            oldest_ts TEXT,
            cursor TEXT,
            PRIMARY KEY (conversation_id, thread_ts)
        )
        """,
        """
        CREATE TABLE pending_reaction (
            conversation_id BIGINT NOT NULL,
            id BIGSERIAL,
            ts_key BIGINT NOT NULL,
            name TEXT NOT NULL,
            user_id TEXT NOT NULL,
            added BOOLEAN NOT NULL,
            PRIMARY KEY (conversation_id, id)
        )
        """,
    ]

    private static let v1 = [
        """
        CREATE TABLE workspace (
            id BIGSERIAL PRIMARY KEY,
            team_id TEXT NOT NULL UNIQUE,
            name TEXT,
            domain TEXT
        )
        """,
        """
        CREATE TABLE slack_user (
            id TEXT PRIMARY KEY,
            team_id TEXT,
            handle TEXT NOT NULL,
            real_name TEXT,
            display_name TEXT,
            is_bot BOOLEAN NOT NULL DEFAULT false,
            is_deleted BOOLEAN NOT NULL DEFAULT false,
            is_placeholder BOOLEAN NOT NULL DEFAULT false,
            time_zone TEXT
        )
        """,
        """
        CREATE TABLE conversation (
            id BIGSERIAL PRIMARY KEY,
            slack_id TEXT NOT NULL UNIQUE,
            workspace_id BIGINT REFERENCES workspace (id),
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            folder TEXT,
            created BIGINT,
            topic TEXT,
            purpose TEXT,
            is_archived BOOLEAN NOT NULL DEFAULT false,
            members TEXT NOT NULL DEFAULT '[]'
        )
        """,
        """
        CREATE TABLE message (
            conversation_id BIGINT NOT NULL,
            ts_key BIGINT NOT NULL,
            id BIGINT NOT NULL,
            ts TEXT NOT NULL,
            user_id TEXT,
            username TEXT,
            subtype TEXT,
            thread_ts TEXT,
            thread_key BIGINT,
            reply_count BIGINT NOT NULL DEFAULT 0,
            edited_ts TEXT,
            edited_key BIGINT NOT NULL DEFAULT 0,
            flags BIGINT NOT NULL DEFAULT 0,
            is_deleted BOOLEAN NOT NULL DEFAULT false,
            text TEXT NOT NULL,
            search_text TEXT NOT NULL,
            search_extra TEXT NOT NULL,
            raw TEXT NOT NULL,
            hash BIGINT NOT NULL,
            reactions JSONB,
            files JSONB,
            search TSVECTOR NOT NULL,
            PRIMARY KEY (conversation_id, ts_key)
        )
        """,
        "CREATE INDEX message_id ON message (id)",
        """
        CREATE INDEX message_history ON message (conversation_id, ts_key, id)
            WHERE (flags & 96) <> 0 AND NOT is_deleted
        """,
        """
        CREATE INDEX message_thread ON message (conversation_id, thread_key, ts_key, id)
            WHERE thread_key IS NOT NULL
        """,
        "CREATE INDEX message_search ON message USING GIN (search)",
        """
        CREATE TABLE pending_deletion (
            conversation_id BIGINT NOT NULL,
            ts_key BIGINT NOT NULL,
            PRIMARY KEY (conversation_id, ts_key)
        )
        """,
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ]

    /// The search index (made by `pg1-archive`): made again by every write open where it is missing, as after an
    /// import that deferred it (`PostgresArchive.importSession`) was killed before its end.
    static let searchIndex = "CREATE INDEX IF NOT EXISTS message_search ON message USING GIN (search)"

    /// Memory for building the search index at once: PostgreSQL's default (64 MB) spills a 1M-message build to
    /// disk in several runs.
    static let indexBuildMemory = "SET maintenance_work_mem = '256MB'"

    /// The table that records applied migrations.
    static let migrationTable = """
        CREATE TABLE IF NOT EXISTS slackindex_migration (
            name TEXT PRIMARY KEY,
            applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
        )
        """

    /// Names of the applied migrations, or nil when the database holds no archive (no migration table).
    static func applied(_ link: PostgresLink) throws -> [String]? {
        let exists = try link.query("SELECT to_regclass('slackindex_migration') IS NOT NULL AS present")
        guard try exists.first?["present"].decode(Bool.self) == true else { return nil }
        return try link.query("SELECT name FROM slackindex_migration ORDER BY name").map {
            try $0["name"].decode(String.self)
        }
    }

    /// Applies the pending migrations, each in its own transaction under an advisory lock (two writers opening a
    /// new archive at once: one creates it, the other finds it done). Returns whether anything was applied to an
    /// archive that existed (an upgrade).
    ///
    /// - Throws: `StoreError.newerArchive` when the database has migrations this version does not know.
    static func migrate(_ link: PostgresLink) throws -> Bool {
        var upgraded = false
        try link.transaction {
            // The lock's key: any constant of ours, held until the transaction ends. The migration table is made
            // under it too: two `CREATE TABLE IF NOT EXISTS` at once can both pass the check, and the second then
            // fails on PostgreSQL's catalog (`pg_type_typname_nsp_index`, seen when two syncs opened a new archive).
            try link.query("SELECT pg_advisory_xact_lock(5049001)")
            try link.query(migrationTable)
            let done = Set(try applied(link) ?? [])
            let unknown = done.subtracting(versions.map(\.name))
            guard unknown.isEmpty else {
                throw StoreError.newerArchive(path: link.location.redacted, migrations: unknown.sorted())
            }
            let existed = !done.isEmpty
            for (name, statements) in versions where !done.contains(name) {
                for sql in statements { try link.query(sql) }
                var binds = PostgresBindings()
                binds.append(name)
                try link.query("INSERT INTO slackindex_migration (name) VALUES ($1)", binds)
                upgraded = upgraded || existed
            }
            if try storedTokenizer(link) != tokenizerVersion {
                // Tokens of another tokenizer no longer match what queries ask for: re-index, in this transaction.
                if existed { try reindex(link) }
                var binds = PostgresBindings()
                binds.append(tokenizerVersion)
                try link.query(
                    """
                    INSERT INTO meta (key, value) VALUES ('tokenizer', $1)
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value
                    """, binds)
                upgraded = upgraded || existed
            }
            try link.query(indexBuildMemory)
            try link.query(searchIndex)
        }
        return upgraded
    }

    /// The tokenizer build in this binary (rules version and ICU version), as SQLite's index records it.
    static var tokenizerVersion: String { String(cString: slackindex_tokenizer_version()) }

    /// The tokenizer whose tokens the archive's `search` vectors hold (nil: none recorded).
    static func storedTokenizer(_ link: PostgresLink) throws -> String? {
        try link.query("SELECT value FROM meta WHERE key = 'tokenizer'").first?.string("value")
    }

    /// Messages re-indexed per statement (`reindex`).
    private static let reindexBatch = 2_000

    /// Rebuilds every message's `search` vector from its stored search text with this binary's tokenizer, a
    /// batch of rows per statement in `id` order.
    /// - Complexity: O(n) messages, read and written once.
    static func reindex(_ link: PostgresLink) throws {
        var after = Int64.min
        while true {
            var binds = PostgresBindings()
            binds.append(after)
            binds.append(Int64(reindexBatch))
            let rows = try link.query(
                """
                SELECT conversation_id, ts_key, id, text, search_text, search_extra FROM message
                WHERE id > $1 ORDER BY id LIMIT $2
                """, binds)
            guard let last = rows.last else { return }
            var conversations: [Int64] = [], keys: [Int64] = [], vectors: [String] = []
            for row in rows {
                conversations.append(try row.int("conversation_id"))
                keys.append(try row.int("ts_key"))
                // The search text is stored empty when it is the text (`SearchTextColumn`).
                let text = SearchTextColumn.value(stored: try row.string("search_text"), text: try row.string("text"))
                vectors.append(PostgresTokens.vector(text: text, extra: try row.string("search_extra")))
            }
            var update = PostgresBindings()
            update.append(conversations)
            update.append(keys)
            update.append(vectors)
            try link.query(
                """
                UPDATE message m SET search = u.v::tsvector
                FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS u(c, t, v)
                WHERE m.conversation_id = u.c AND m.ts_key = u.t
                """, update)
            after = try last.int("id")
        }
    }

    /// Checks that a read-only open finds a current archive.
    ///
    /// - Throws: `StoreError.noArchive`, `.newerArchive`, `.needsUpgrade`.
    static func checkCurrent(_ link: PostgresLink) throws {
        guard let done = try applied(link), !done.isEmpty else {
            throw StoreError.noArchive(path: link.location.redacted)
        }
        let unknown = Set(done).subtracting(versions.map(\.name))
        guard unknown.isEmpty else {
            throw StoreError.newerArchive(path: link.location.redacted, migrations: unknown.sorted())
        }
        guard Set(versions.map(\.name)).isSubset(of: done), try storedTokenizer(link) == tokenizerVersion else {
            throw StoreError.needsUpgrade(path: link.location.redacted)
        }
    }
}
