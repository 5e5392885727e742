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
    /// - Complexity: O(n) over the messages counted (uses the covering indexes).
    public func stats(conversation: Conversation? = nil) throws -> ArchiveStats {
        let size = fileSize
        return try pool.read { db in
            let scope = conversation == nil ? "" : "AND conversation_id = \(conversation?.rowID ?? 0)"
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT
                        count(*) FILTER (WHERE is_deleted = 0) AS messages,
                        count(*) FILTER (WHERE is_deleted = 1) AS deleted,
                        count(*) FILTER (WHERE is_deleted = 0 AND (flags & \(MessageFlags.threadParent.rawValue)) != 0)
                            AS threads,
                        count(*) FILTER (WHERE is_deleted = 0 AND (flags & \(MessageFlags.topLevel.rawValue)) = 0)
                            AS replies,
                        min(ts_key) AS first, max(ts_key) AS last
                    FROM message WHERE 1 \(scope)
                    """)
            var kinds: [String: Int] = [:]
            for kind in ConversationKind.allCases { kinds[kind.rawValue] = 0 }
            for pair in try Row.fetchAll(db, sql: "SELECT kind, count(*) AS count FROM conversation GROUP BY kind") {
                kinds[pair["kind"]] = pair["count"]
            }
            let users = try Int.fetchOne(db, sql: "SELECT count(*) FROM user WHERE is_placeholder = 0") ?? 0
            let placeholders = try Int.fetchOne(db, sql: "SELECT count(*) FROM user WHERE is_placeholder = 1") ?? 0
            var stats = ArchiveStats(
                messages: row?["messages"] ?? 0, deletedMessages: row?["deleted"] ?? 0, threads: row?["threads"] ?? 0,
                replies: row?["replies"] ?? 0,
                conversations: kinds.values.reduce(0, +), conversationsByKind: kinds, users: users,
                placeholderUsers: placeholders, firstSeconds: (row?["first"] as Int64?).map { $0 / 1_000_000 },
                lastSeconds: (row?["last"] as Int64?).map { $0 / 1_000_000 }, databaseBytes: size)
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
}
