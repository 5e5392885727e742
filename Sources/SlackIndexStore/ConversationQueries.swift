import GRDB

extension SQLiteArchive {
    /// Finds a conversation by Slack id, `#name`, name, export folder name or `workspace/#name` (a domain or team
    /// id before the slash); with `allowingPrefix`, also by the start of one name (case and accents ignored) when
    /// that fits one conversation only.
    ///
    /// - Throws: `StoreError.conversationNotFound` (with the closest names) or `.ambiguousConversation` (listing
    ///   the candidates).
    /// - Complexity: O(log n) by id or name; O(c) over the c conversations for a prefix.
    package func conversation(named reference: String, allowingPrefix: Bool = false) throws -> Conversation {
        try pool.read { db in try SQLiteArchive.conversation(named: reference, in: db, allowingPrefix: allowingPrefix) }
    }

    static func conversation(named reference: String, in db: Database, allowingPrefix: Bool = false) throws
        -> Conversation
    {
        var name = reference
        if name.hasPrefix("<#"), name.hasSuffix(">") {
            name = String(name.dropFirst(2).dropLast().prefix { $0 != "|" })
        }
        if name.hasPrefix("#") { name.removeFirst() }
        if let found = try conversation(slackID: name, in: db) { return found }
        let sql = "SELECT \(ConversationColumns.list) FROM conversation c"
        var rows = try Row.fetchAll(db, sql: sql + " WHERE c.name = ? OR c.folder = ?", arguments: [name, name])
        if rows.isEmpty {
            rows = try Row.fetchAll(
                db, sql: sql + " WHERE c.name = ? COLLATE NOCASE OR c.folder = ? COLLATE NOCASE", arguments: [name, name])
        }
        if rows.isEmpty, let qualified = WorkspaceLabel.split(name) {
            rows = try workspaceConversationRows(qualified.name, workspace: qualified.workspace, in: db)
        }
        if rows.isEmpty, allowingPrefix {
            rows = try Row.fetchAll(db, sql: "SELECT \(ConversationColumns.list), c.folder FROM conversation c")
                .filter { row in
                ClosestNames.startsWith(row["name"], name) || (row["folder"] as String?).map {
                    ClosestNames.startsWith($0, name)
                } == true
            }
        }
        if rows.count == 1 { return conversation(rows[0]) }
        if rows.isEmpty {
            throw StoreError.conversationNotFound(reference, closest: try closestConversationNames(to: name, in: db))
        }
        throw StoreError.ambiguousConversation(
            reference, candidates: rows.map { "\(conversation($0).displayName) (\($0["slack_id"] as String))" })
    }

    /// The rows of the conversations named `name` (or with that export folder, case ignored) in the workspace whose
    /// domain or team id is `workspace`.
    /// - Complexity: O(c) over the conversations.
    static func workspaceConversationRows(_ name: String, workspace: String, in db: Database) throws -> [Row] {
        try Row.fetchAll(
            db,
            sql: """
                SELECT \(ConversationColumns.list) FROM conversation c
                WHERE (c.name = ? COLLATE NOCASE OR c.folder = ? COLLATE NOCASE)
                    AND c.workspace_id IN (SELECT id FROM workspace WHERE domain = ? COLLATE NOCASE
                        OR team_id = ? COLLATE NOCASE)
                ORDER BY c.id
                """, arguments: [name, name, workspace, workspace])
    }

    /// The conversation with this Slack id, or nil. Every cursor step of a `Timeline` asks, so the statement is
    /// cached and its row read in place: prepared anew and copied by `Row.fetchOne` (which copies every value, the
    /// member list the largest), a lookup took ~375,000 instructions, about what a page of 50 messages costs.
    private static func conversation(slackID: String, in db: Database) throws -> Conversation? {
        let statement = try db.cachedStatement(
            sql: "SELECT \(ConversationColumns.list) FROM conversation c WHERE c.slack_id = ?")
        // The row is a view of the statement, which the cursor resets when it goes (GRDB's `RowCursor`): kept alive
        // until the row is read (in release builds a cursor used only for `next()` went first and the row read NULLs).
        let rows = try Row.fetchCursor(statement, arguments: [slackID])
        return try withExtendedLifetime(rows) { try rows.next().map(conversation) }
    }

    /// The row id of every conversation (no rows decoded).
    /// - Complexity: O(c) over the primary key.
    package func conversationRowIDs() throws -> Set<Int64> {
        try pool.read { db in Set(try Int64.fetchAll(db, sql: "SELECT id FROM conversation")) }
    }

    /// The row ids of the conversations of the workspace with this team id.
    /// - Complexity: O(c) over the conversations.
    package func conversationRowIDs(workspace teamID: String) throws -> Set<Int64> {
        try pool.read { db in
            Set(
                try Int64.fetchAll(
                    db,
                    sql: """
                        SELECT c.id FROM conversation c JOIN workspace w ON w.id = c.workspace_id WHERE w.team_id = ?
                        """, arguments: [teamID]))
        }
    }

    /// Every conversation, by kind then name.
    package func conversations() throws -> [Conversation] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT \(ConversationColumns.list) FROM conversation c ORDER BY c.kind, c.name"
            ).map(SQLiteArchive.conversation)
        }
    }

    /// How a conversation is shown (`#name` for channels), from its kind and name alone.
    private static func conversation(kind: String, name: String) -> String {
        Conversation(rowID: 0, id: "", kind: ConversationKind(rawValue: kind) ?? .channel, name: name).displayName
    }

    /// The names of the conversations closest to `name` (which matched none), for "did you mean" hints.
    /// - Complexity: O(conversations).
    package func closestConversationNames(to name: String) throws -> [String] {
        try pool.read { db in try SQLiteArchive.closestConversationNames(to: name, in: db) }
    }

    private static func closestConversationNames(to name: String, in db: Database) throws -> [String] {
        let names = try Row.fetchAll(db, sql: "SELECT c.kind, c.name FROM conversation c").map {
            conversation(kind: $0["kind"], name: $0["name"])
        }
        return ClosestNames.closest(to: name, among: names)
    }

    /// Conversations one of whose names (name or export folder) starts with `prefix`, case and accents ignored.
    /// - Complexity: O(conversations).
    package func conversations(withNamePrefix prefix: String) throws -> [Conversation] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(ConversationColumns.list), c.folder FROM conversation c ORDER BY c.id")
                .filter { row in
                    ClosestNames.startsWith(row["name"], prefix)
                        || (row["folder"] as String?).map { ClosestNames.startsWith($0, prefix) } == true
                }
                .map(SQLiteArchive.conversation)
        }
    }

    /// Users (not placeholders) whose handle, display name or real name starts with `prefix`, case and accents
    /// ignored.
    /// - Complexity: O(users).
    package func users(withNamePrefix prefix: String) throws -> [User] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(UserColumns.list) FROM user WHERE is_placeholder = 0 ORDER BY id")
                .filter { row in
                    [row["handle"], row["display_name"], row["real_name"]].contains { (name: String?) in
                        name.map { ClosestNames.startsWith($0, prefix) } ?? false
                    }
                }
                .map(UserColumns.user)
        }
    }

    /// `@handle` of the users closest to `name` (which matched none) by handle, display name or real name.
    /// - Complexity: O(users).
    package func closestUserHandles(to name: String) throws -> [String] {
        try pool.read { db in
            var handleOf: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT handle, display_name, real_name FROM user WHERE is_placeholder = 0") {
                let handle: String = row["handle"]
                for label in [row["handle"], row["display_name"], row["real_name"]] as [String?] {
                    if let label, !label.isEmpty, handleOf[label] == nil { handleOf[label] = handle }
                }
            }
            var handles: [String] = []
            for label in ClosestNames.closest(to: name, among: handleOf.keys.sorted(), limit: 6) {
                if let handle = handleOf[label], !handles.contains("@" + handle) { handles.append("@" + handle) }
            }
            return Array(handles.prefix(3))
        }
    }

    static func conversation(_ row: Row) -> Conversation {
        ConversationColumns.conversation(row)
    }
}

/// One line of `slackindex conversations`: a conversation with its message count, time span and sync state.
package struct ConversationSummary: Sendable {
    package var conversation: Conversation
    /// Messages not deleted, replies included.
    package var messages: Int
    /// The oldest and newest message's time, seconds since 1970; nil without messages.
    package var firstSeconds: Int64?
    package var lastSeconds: Int64?
    /// Where `sync` found the history complete (the newest ts a finished run reached); nil if never synced.
    package var syncedTS: String?
    /// A `sync` stopped in this conversation's history and resumes there.
    package var syncInterrupted: Bool
}

extension SQLiteArchive {
    /// Every conversation with its counts: channels, private channels, group DMs, DMs, each by name.
    /// - Complexity: O(c log n) for c conversations: counts are kept in `message_count`, dates come from the
    ///   history index.
    package func conversationSummaries() throws -> [ConversationSummary] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(ConversationColumns.list),
                        coalesce((SELECT messages FROM message_count k WHERE k.conversation_id = c.id), 0)
                            AS message_count,
                        (SELECT min(ts_key) FROM message m WHERE m.conversation_id = c.id) AS first_key,
                        (SELECT max(ts_key) FROM message m WHERE m.conversation_id = c.id) AS last_key,
                        s.synced_ts, r.conversation_id IS NOT NULL AS interrupted
                    FROM conversation c
                    LEFT JOIN sync_state s ON s.conversation_id = c.id
                    LEFT JOIN sync_run r ON r.conversation_id = c.id
                    ORDER BY CASE c.kind WHEN 'channel' THEN 0 WHEN 'private' THEN 1 WHEN 'mpim' THEN 2 ELSE 3 END,
                        c.name
                    """
            ).map { row in
                ConversationSummary(
                    conversation: SQLiteArchive.conversation(row), messages: row["message_count"],
                    firstSeconds: (row["first_key"] as Int64?).map { $0 / 1_000_000 },
                    lastSeconds: (row["last_key"] as Int64?).map { $0 / 1_000_000 }, syncedTS: row["synced_ts"],
                    syncInterrupted: row["interrupted"])
            }
        }
    }
}
