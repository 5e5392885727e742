import GRDB

/// Counts over the archive or one conversation.
public struct ArchiveStats: Sendable, Codable {
    /// Messages not deleted.
    public var messages: Int
    public var deletedMessages: Int
    public var threads: Int
    public var replies: Int
    public var conversations: Int
    public var conversationsByKind: [String: Int]
    public var users: Int
    public var placeholderUsers: Int
    /// Oldest and newest message, seconds since the epoch (nil when empty).
    public var firstSeconds: Int64?
    public var lastSeconds: Int64?
    public var databaseBytes: Int64
    /// Set for a one-conversation report.
    public var conversation: String?
    public var conversationID: String?
    public var posters: Int?
    /// Set for a one-workspace report: its name (`WorkspaceInfo.shownName`) and team id.
    public var workspace: String?
    public var workspaceID: String?
    /// Every workspace the archive holds with its counts (`WorkspaceCount.all`); the store leaves it empty.
    package var workspaces: [WorkspaceCount] = []

    private enum CodingKeys: String, CodingKey {
        case messages, threads, replies, conversations, users, conversation, posters, workspace, workspaces
        case workspaceID = "workspace_id"
        case deletedMessages = "deleted_messages"
        case conversationsByKind = "conversations_by_kind"
        case placeholderUsers = "placeholder_users"
        case firstSeconds = "first_ts"
        case lastSeconds = "last_ts"
        case databaseBytes = "database_bytes"
        case conversationID = "conversation_id"
    }
}

extension SQLiteArchive {
    /// Counts for the whole archive, or for one conversation.
    ///
    /// The message counts are kept in `message_count` as the archive changes (migration v11), so this reads a row
    /// per conversation, not every message.
    /// - Complexity: O(c + log n) for c conversations; a conversation's posters are O(its messages).
    package func stats(conversation: Conversation? = nil) throws -> ArchiveStats {
        let size = fileSize
        return try pool.read { db in
            var stats = try Self.counts(conversations: conversation.map { [$0.rowID] }, team: nil, in: db)
            stats.databaseBytes = size
            if let conversation {
                stats.conversation = conversation.displayName
                stats.conversationID = conversation.id
                stats.conversations = 1
                stats.posters = try Int.fetchOne(
                    db,
                    sql: "SELECT count(DISTINCT user_id) FROM message WHERE conversation_id = ? AND is_deleted = 0",
                    arguments: [conversation.rowID])
            }
            return stats
        }
    }

    /// Counts for one workspace: the messages of its conversations (as `stats` counts them), its conversations by
    /// kind, and its team's users (by their `team_id`).
    ///
    /// - Complexity: O(c log n) for the workspace's c conversations (kept counts, two seeks each for the dates).
    package func stats(workspace: WorkspaceInfo) throws -> ArchiveStats {
        let size = fileSize
        let ids = try conversationRowIDs(workspace: workspace.teamID).sorted()
        return try pool.read { db in
            var stats = try Self.counts(conversations: ids, team: workspace.teamID, in: db)
            stats.databaseBytes = size
            stats.workspace = workspace.shownName
            stats.workspaceID = workspace.teamID
            return stats
        }
    }

    /// The counts of `stats` over the messages of `conversations` (nil: all of them); with `team`, the
    /// conversations by kind are those of `conversations` and the users those of that team, else the archive's.
    private static func counts(conversations: [Int64]?, team: String?, in db: Database) throws -> ArchiveStats {
        let marks = conversations.map { "(" + $0.map { _ in "?" }.joined(separator: ",") + ")" } ?? ""
        let ids = StatementArguments(conversations ?? [])
        let counts = try Row.fetchOne(
            db,
            sql: """
                SELECT total(messages) AS messages, total(deleted) AS deleted, total(threads) AS threads,
                    total(replies) AS replies
                FROM message_count \(conversations == nil ? "" : "WHERE conversation_id IN " + marks)
                """, arguments: ids)
        let bounds = try messageBounds(conversations: conversations, in: db)
        var kinds: [String: Int] = [:]
        for kind in ConversationKind.allCases { kinds[kind.rawValue] = 0 }
        let kindScope = team == nil ? "" : "WHERE id IN " + marks
        for pair in try Row.fetchAll(
            db, sql: "SELECT kind, count(*) AS count FROM conversation \(kindScope) GROUP BY kind",
            arguments: team == nil ? [] : ids)
        {
            kinds[pair["kind"]] = pair["count"]
        }
        func users(placeholders: Bool) throws -> Int {
            var arguments: StatementArguments = [placeholders]
            if let team { arguments += [team] }
            let sql = "SELECT count(*) FROM user WHERE is_placeholder = ?" + (team == nil ? "" : " AND team_id = ?")
            return try Int.fetchOne(db, sql: sql, arguments: arguments) ?? 0
        }
        func count(_ column: String) -> Int { Int((counts?[column] as Double?) ?? 0) }
        return ArchiveStats(
            messages: count("messages"), deletedMessages: count("deleted"), threads: count("threads"),
            replies: count("replies"), conversations: kinds.values.reduce(0, +), conversationsByKind: kinds,
            users: try users(placeholders: false), placeholderUsers: try users(placeholders: true),
            firstSeconds: bounds.first.map { $0 / 1_000_000 }, lastSeconds: bounds.last.map { $0 / 1_000_000 },
            databaseBytes: 0)
    }

    /// The ts keys (µs) of the archive's oldest and newest message, nil when it holds none: what a search that
    /// found nothing in its dates tells the archive's span with.
    package func messageSpan() throws -> (first: Int64, last: Int64)? {
        try pool.read { db in try Self.messageSpan(conversation: nil, in: db) }
    }

    /// The oldest and newest message times (µs) over the given conversations (row ids), deleted messages included
    /// as `stats` counts them; nil bounds when they hold no message.
    ///
    /// - Complexity: O(c log n) for c conversations: two seeks in `message_history` each.
    package func messageTimeBounds(conversations rowIDs: Set<Int64>) throws -> (first: Int64?, last: Int64?) {
        try pool.read { db in try Self.messageBounds(conversations: Array(rowIDs), in: db) }
    }

    /// The oldest and newest message times (µs) of `conversations` (nil: the archive's), nil when they hold none.
    private static func messageBounds(conversations: [Int64]?, in db: Database) throws
        -> (first: Int64?, last: Int64?)
    {
        guard let conversations else {
            let span = try messageSpan(conversation: nil, in: db)
            return (span?.first, span?.last)
        }
        var first: Int64?
        var last: Int64?
        for id in conversations {
            guard let span = try messageSpan(conversation: id, in: db) else { continue }
            first = min(first ?? span.first, span.first)
            last = max(last ?? span.last, span.last)
        }
        return (first, last)
    }

    /// Oldest and newest ts key: the row id is time-ordered (whole archive), or the history index (one conversation).
    private static func messageSpan(conversation: Int64?, in db: Database) throws -> (first: Int64, last: Int64)? {
        let row: Row?
        if let conversation {
            // Two subqueries: SQLite answers a lone min() or max() with one seek, but both in one SELECT scan the
            // conversation's messages (measured: 190-310 ms for archive facts at 1M, ~65 ms with seeks).
            row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT (SELECT min(ts_key) FROM message WHERE conversation_id = ?1) AS first,
                            (SELECT max(ts_key) FROM message WHERE conversation_id = ?1) AS last
                        """),
                arguments: [conversation])
        } else {
            row = try Row.fetchOne(
                db,
                sql: """
                    SELECT (SELECT ts_key FROM message ORDER BY id LIMIT 1) AS first,
                        (SELECT ts_key FROM message ORDER BY id DESC LIMIT 1) AS last
                    """)
        }
        guard let first = row?["first"] as Int64?, let last = row?["last"] as Int64? else { return nil }
        return (first, last)
    }

    /// The counts `stats` reports, counted over every message instead of read from `message_count`: for tests
    /// that check the kept counts against the truth.
    ///
    /// - Complexity: O(n).
    package func recountedMessageCounts() throws -> [Int64: [Int]] {
        try pool.read { db in
            let parent = MessageFlags.threadParent.rawValue
            let top = MessageFlags.topLevel.rawValue
            var out: [Int64: [Int]] = [:]
            for row in try Row.fetchAll(
                db,
                sql: """
                    SELECT conversation_id AS c, count(*) FILTER (WHERE is_deleted = 0) AS m,
                        count(*) FILTER (WHERE is_deleted != 0) AS d,
                        count(*) FILTER (WHERE is_deleted = 0 AND (flags & \(parent)) != 0) AS t,
                        count(*) FILTER (WHERE is_deleted = 0 AND (flags & \(top)) = 0) AS r
                    FROM message GROUP BY conversation_id
                    """)
            {
                out[row["c"]] = [row["m"], row["d"], row["t"], row["r"]]
            }
            return out
        }
    }

    /// `message_count` as stored, without conversations whose counts are all zero.
    package func keptMessageCounts() throws -> [Int64: [Int]] {
        try pool.read { db in
            var out: [Int64: [Int]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM message_count") {
                let counts: [Int] = [row["messages"], row["deleted"], row["threads"], row["replies"]]
                if counts.contains(where: { $0 != 0 }) { out[row["conversation_id"]] = counts }
            }
            return out
        }
    }
}

extension SQLiteArchive {
    /// The database's bytes: its pages, as this connection sees them (those still in the WAL included, so the same
    /// imports give the same figure whether or not a checkpoint ran; the benchmarks' archive size).
    package func fileBytes() throws -> Int64 {
        try pool.read { db in
            let pageSize = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 0
            return try (Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0) * pageSize
        }
    }

    /// Rewrites the file without its free pages and the slack inside half-empty ones (SQLite's VACUUM: needs free
    /// disk for a copy of the archive, and holds the write lock while it runs). Returns the bytes the file shrank by.
    ///
    /// - Complexity: O(n) in the archive's size.
    package func reclaimFreeSpace() throws -> Int64 {
        let before = try fileBytes()
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "VACUUM")
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
        }
        return before - (try fileBytes())
    }
}
