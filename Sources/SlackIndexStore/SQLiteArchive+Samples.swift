import GRDB

/// Reads that draw benchmark workloads from the archive's own content (`slackindex bench`, `Benchmarks/`).
extension SQLiteArchive {
    /// Words of the search index, most frequent first when `mostFrequentFirst`, with a document frequency in
    /// `documents` when given.
    ///
    /// - Complexity: O(v log v) over the index's words.
    package func indexWords(
        documents: ClosedRange<Int>? = nil, mostFrequentFirst: Bool = false, limit: Int = Int.max
    ) throws -> [String] {
        try pool.read { db in
            // Stem tokens (`WordVariants`) start with U+0001, word pairs (`indexTokenizer`) with U+0002 and scope words
            // (`IndexScope`) with U+0003, before every word.
            // The kept counts (v21) hold the same words and counts in the same order as the vocabulary.
            let t = try WordTable.of(db)
            var sql = "SELECT \(t.word) FROM \(t.name) WHERE \(t.word) >= char(4) AND \(t.messages) > 0"
            var arguments: StatementArguments = []
            if let documents {
                sql += " AND \(t.messages) BETWEEN ? AND ?"
                arguments += [documents.lowerBound, documents.upperBound]
            }
            if mostFrequentFirst { sql += " ORDER BY \(t.messages) DESC" }
            sql += " LIMIT ?"
            arguments += [min(limit, Int(Int64.max))]
            return try String.fetchAll(db, sql: sql, arguments: arguments)
        }
    }

    /// The smallest and largest message row ids (nil for an empty archive).
    package func messageIDRange() throws -> ClosedRange<MessageID>? {
        try pool.read { db in
            let row = try Row.fetchOne(db, sql: "SELECT min(id) AS first, max(id) AS last FROM message")
            guard let first: Int64 = row?["first"], let last: Int64 = row?["last"] else { return nil }
            return MessageID(rawValue: first)...MessageID(rawValue: last)
        }
    }

    /// The search text of the first message that is not deleted at or after `id`.
    package func searchText(atOrAfter id: MessageID) throws -> String? {
        try pool.read { db in
            try String.fetchOne(
                db,
                sql: """
                    SELECT \(SearchTextColumn.sql("message")) FROM message WHERE id >= ? AND is_deleted = 0 LIMIT 1
                    """,
                arguments: [id.rawValue])
        }
    }

    /// Names of the package channels with the most messages.
    ///
    /// - Complexity: O(messages).
    package func busiestChannelNames(limit: Int) throws -> [String] {
        try pool.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT c.name FROM conversation c WHERE c.kind = 'channel'
                    ORDER BY (SELECT count(*) FROM message m WHERE m.conversation_id = c.id) DESC LIMIT ?
                    """, arguments: [limit])
        }
    }

    /// Handles of the members (not placeholders) who posted most, among the `limit` most active authors; only
    /// handles no other user shares.
    ///
    /// - Complexity: O(messages).
    package func busiestPosterHandles(limit: Int) throws -> [String] {
        try pool.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT u.handle FROM user u WHERE u.is_placeholder = 0 AND u.id IN (
                        SELECT user_id FROM message GROUP BY user_id ORDER BY count(*) DESC LIMIT ?)
                    AND (SELECT count(*) FROM user o WHERE o.handle = u.handle) = 1
                    """, arguments: [limit])
        }
    }

    /// Oldest and newest message time (µs), in one conversation or in the whole archive; (0, 0) when empty.
    package func timeRange(of conversation: Conversation? = nil) throws -> (Int64, Int64) {
        try pool.read { db in
            let row =
                if let conversation {
                    try Row.fetchOne(
                        db,
                        sql: "SELECT min(ts_key) AS first, max(ts_key) AS last FROM message WHERE conversation_id = ?",
                        arguments: [conversation.rowID])
                } else {
                    try Row.fetchOne(db, sql: "SELECT min(ts_key) AS first, max(ts_key) AS last FROM message")
                }
            return (row?["first"] ?? 0, row?["last"] ?? 0)
        }
    }

    /// The conversations with the most visible (history) messages, with their counts.
    ///
    /// - Complexity: O(messages).
    package func busiestConversations(limit: Int) throws -> [(Conversation, Int)] {
        try pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(ConversationColumns.list), counts.visible FROM conversation c
                    JOIN (SELECT conversation_id, count(*) AS visible FROM message
                          WHERE (flags & \(MessageFlags.topLevel.rawValue | MessageFlags.broadcast.rawValue)) != 0
                              AND is_deleted = 0
                          GROUP BY conversation_id) counts ON counts.conversation_id = c.id
                    ORDER BY counts.visible DESC LIMIT ?
                    """, arguments: [limit])
            return rows.map { (ConversationColumns.conversation($0), $0["visible"]) }
        }
    }

    /// The keyset position `depth` visible messages from the newest (benchmark set-up; uses OFFSET once).
    ///
    /// - Complexity: O(depth).
    package func position(in conversation: Conversation, depth: Int) throws -> TimelinePosition? {
        try pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT ts_key, id FROM message INDEXED BY message_key
                    WHERE conversation_id = ? AND
                        (flags & \(MessageFlags.topLevel.rawValue | MessageFlags.broadcast.rawValue)) != 0
                        AND is_deleted = 0
                    ORDER BY ts_key DESC, id DESC LIMIT 1 OFFSET ?
                    """, arguments: [conversation.rowID, depth]
            ).map { TimelinePosition(tsKey: $0["ts_key"], rowID: $0["id"]) }
        }
    }
}
