import GRDB

/// A position in a conversation's history: keyset on (ts, row id).
public struct TimelinePosition: Sendable, Hashable, Codable {
    public var tsKey: Int64
    public var rowID: Int64

    public init(tsKey: Int64, rowID: Int64) {
        self.tsKey = tsKey
        self.rowID = rowID
    }
}

extension Archive {
    /// Which side of a position a history page reads.
    public enum PageDirection: Sendable {
        /// Messages strictly older than the position (or the newest messages when there is none).
        case before
        /// Messages strictly newer than the position (or the oldest messages when there is none).
        case after
    }

    /// A page of a conversation's channel view: top-level messages and thread broadcasts, oldest to newest.
    ///
    /// Keyset pagination on `(ts_key, id)`: the cost is the same at any depth (no OFFSET).
    /// - Complexity: O(log n + limit).
    public func historyPage(
        conversation: Conversation, direction: PageDirection, from position: TimelinePosition?, limit: Int,
        includeDeleted: Bool = false
    ) throws -> [Message] {
        try pool.read { db in
            try Archive.historyPage(
                conversationRowID: conversation.rowID, direction: direction, from: position, limit: limit,
                includeDeleted: includeDeleted, in: db)
        }
    }

    static func historyPage(
        conversationRowID: Int64, direction: PageDirection, from position: TimelinePosition?, limit: Int,
        includeDeleted: Bool, in db: Database
    ) throws -> [Message] {
        let visible = "(m.flags & \(MessageFlags.topLevel.rawValue | MessageFlags.broadcast.rawValue)) != 0"
        let deleted = includeDeleted ? "" : "AND m.is_deleted = 0"
        var arguments: StatementArguments = [conversationRowID]
        var bound = ""
        if let position {
            bound =
                direction == .before
                ? "AND (m.ts_key < ? OR (m.ts_key = ? AND m.id < ?))"
                : "AND (m.ts_key > ? OR (m.ts_key = ? AND m.id > ?))"
            arguments += [position.tsKey, position.tsKey, position.rowID]
        }
        let order = direction == .before ? "DESC" : "ASC"
        arguments += [max(0, limit)]
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT \(MessageRows.columns)
                FROM message m INDEXED BY message_key
                \(MessageRows.joins)
                WHERE m.conversation_id = ? AND \(visible) \(deleted) \(bound)
                ORDER BY m.ts_key \(order), m.id \(order)
                LIMIT ?
                """, arguments: arguments)
        let messages = rows.map { MessageRows.message($0) }
        return direction == .before ? messages.reversed() : messages
    }
}
