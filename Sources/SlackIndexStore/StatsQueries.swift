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

    private enum CodingKeys: String, CodingKey {
        case messages, threads, replies, conversations, users, conversation, posters
        case deletedMessages = "deleted_messages"
        case conversationsByKind = "conversations_by_kind"
        case placeholderUsers = "placeholder_users"
        case firstSeconds = "first_ts"
        case lastSeconds = "last_ts"
        case databaseBytes = "database_bytes"
        case conversationID = "conversation_id"
    }
}

extension Archive {
    /// Counts for the whole archive, or for one conversation.
    ///
    /// The message counts are kept in `message_count` as the archive changes (migration v11), so this reads a row
    /// per conversation, not every message.
    /// - Complexity: O(c + log n) for c conversations; a conversation's posters are O(its messages).
    public func stats(conversation: Conversation? = nil) throws -> ArchiveStats {
        let size = fileSize
        return try pool.read { db in
            let scope = conversation == nil ? "" : "WHERE conversation_id = \(conversation?.rowID ?? 0)"
            let counts = try Row.fetchOne(
                db,
                sql: """
                    SELECT total(messages) AS messages, total(deleted) AS deleted, total(threads) AS threads,
                        total(replies) AS replies
                    FROM message_count \(scope)
                    """)
            // Oldest and newest: the row id is time-ordered (whole archive), or the history index (one conversation).
            let bounds = try Row.fetchOne(
                db,
                sql: conversation == nil
                    ? """
                        SELECT (SELECT ts_key FROM message ORDER BY id LIMIT 1) AS first,
                            (SELECT ts_key FROM message ORDER BY id DESC LIMIT 1) AS last
                        """
                    : """
                        SELECT min(ts_key) AS first, max(ts_key) AS last FROM message WHERE conversation_id = ?
                        """,
                arguments: conversation == nil ? [] : [conversation?.rowID])
            var kinds: [String: Int] = [:]
            for kind in ConversationKind.allCases { kinds[kind.rawValue] = 0 }
            for pair in try Row.fetchAll(db, sql: "SELECT kind, count(*) AS count FROM conversation GROUP BY kind") {
                kinds[pair["kind"]] = pair["count"]
            }
            let users = try Int.fetchOne(db, sql: "SELECT count(*) FROM user WHERE is_placeholder = 0") ?? 0
            let placeholders = try Int.fetchOne(db, sql: "SELECT count(*) FROM user WHERE is_placeholder = 1") ?? 0
            func count(_ column: String) -> Int { Int((counts?[column] as Double?) ?? 0) }
            var stats = ArchiveStats(
                messages: count("messages"), deletedMessages: count("deleted"), threads: count("threads"),
                replies: count("replies"),
                conversations: kinds.values.reduce(0, +), conversationsByKind: kinds, users: users,
                placeholderUsers: placeholders, firstSeconds: (bounds?["first"] as Int64?).map { $0 / 1_000_000 },
                lastSeconds: (bounds?["last"] as Int64?).map { $0 / 1_000_000 }, databaseBytes: size)
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

    /// The oldest and newest message times (µs) over the given conversations (row ids), deleted messages included
    /// as `stats` counts them; nil bounds when they hold no message.
    ///
    /// - Complexity: O(c log n) for c conversations: two seeks in `message_history` each.
    package func messageTimeBounds(conversations rowIDs: Set<Int64>) throws -> (first: Int64?, last: Int64?) {
        try pool.read { db in
            // Two subqueries: SQLite answers a lone min() or max() with one seek, but both in one SELECT scan the range.
            let statement = try db.cachedStatement(
                sql: """
                    SELECT (SELECT min(ts_key) FROM message WHERE conversation_id = ?1) AS first,
                        (SELECT max(ts_key) FROM message WHERE conversation_id = ?1) AS last
                    """)
            var first: Int64?
            var last: Int64?
            for id in rowIDs {
                guard let row = try Row.fetchOne(statement, arguments: [id]) else { continue }
                if let low = row["first"] as Int64? { first = min(first ?? low, low) }
                if let high = row["last"] as Int64? { last = max(last ?? high, high) }
            }
            return (first, last)
        }
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

extension Archive {
    /// The database's bytes: its pages, as this connection sees them (those still in the WAL included, so the same
    /// imports give the same figure whether or not a checkpoint ran; the benchmarks' archive size).
    @_spi(Benchmarks) public func fileBytes() throws -> Int64 {
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
