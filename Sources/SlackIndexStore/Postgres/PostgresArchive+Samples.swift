import Foundation
import PostgresNIO

/// What `bench` samples its queries and pages from, on PostgreSQL: the index's words, busy conversations and
/// posters, texts at chosen ids, OFFSET pages to compare keyset pages with.
extension PostgresArchive {
    /// The index's words (stem tokens left out), optionally only those in `documents` messages, most frequent
    /// first or in byte order.
    ///
    /// - Complexity: O(n) messages: `ts_stat` reads every vector (no vocabulary is kept beside the GIN index);
    ///   `bench` asks once per run.
    package func indexWords(documents: ClosedRange<Int>?, mostFrequentFirst: Bool, limit: Int) throws -> [String] {
        var binds = PostgresBindings()
        // Stem tokens (`WordVariants`) start with U+0001, before every word.
        var sql = "SELECT word FROM ts_stat('SELECT search FROM message') WHERE word >= E'\\x02'"
        if let documents {
            binds.append(Int64(documents.lowerBound))
            binds.append(Int64(documents.upperBound))
            sql += " AND ndoc BETWEEN $1 AND $2"
        }
        sql += mostFrequentFirst ? " ORDER BY ndoc DESC, word COLLATE \"C\"" : " ORDER BY word COLLATE \"C\""
        binds.append(Int64(min(limit, Int(Int64.max))))
        sql += " LIMIT $\(binds.count)"
        return try link.query(sql, binds).map { try $0.string("word") }
    }

    /// The search text of the first message that is not deleted at or after `id`.
    package func searchText(atOrAfter id: MessageID) throws -> String? {
        guard
            let row = try link.query(
                "SELECT text, search_text FROM message WHERE id >= $1 AND NOT is_deleted ORDER BY id LIMIT 1",
                .of(id.rawValue)
            ).first
        else { return nil }
        return SearchTextColumn.value(stored: try row.string("search_text"), text: try row.string("text"))
    }

    /// A history page by OFFSET, oldest to newest (what keyset pages are measured against).
    ///
    /// - Complexity: O(offset + limit).
    package func offsetPage(conversation: Conversation, offset: Int, limit: Int) throws -> [Message] {
        let rows = try link.query(
            """
            SELECT \(Self.messageColumns) FROM message m
            WHERE m.conversation_id = $1 AND (m.flags & 96) <> 0 AND NOT m.is_deleted
            ORDER BY m.ts_key DESC, m.id DESC LIMIT $2 OFFSET $3
            """, .of(conversation.rowID, Int64(max(0, limit)), Int64(max(0, offset))))
        let names = try userNames()
        return try rows.map { try Self.message($0, conversation: conversation, names: names) }.reversed()
    }

    /// `conversation-id/ts` of each message id, as `check` names messages.
    package func messageHandles(ids: [Int64]) throws -> [String] {
        var found: [Int64: String] = [:]
        for row in try link.query(
            """
            SELECT m.id, c.slack_id || '/' || m.ts AS handle FROM message m
            JOIN conversation c ON c.id = m.conversation_id WHERE m.id = ANY($1)
            """, .of(ids))
        {
            found[try row.int("id")] = try row.string("handle")
        }
        return ids.map { found[$0] ?? "index document \($0)" }
    }

    /// The conversations with the most history messages (not deleted), with their counts.
    ///
    /// - Complexity: O(n) messages.
    package func busiestConversations(limit: Int) throws -> [(Conversation, Int)] {
        let conversations = try conversationsByRowID()
        return try link.query(
            """
            SELECT conversation_id, count(*) AS visible FROM message
            WHERE (flags & 96) <> 0 AND NOT is_deleted
            GROUP BY conversation_id ORDER BY visible DESC, conversation_id LIMIT $1
            """, .of(Int64(limit))
        ).compactMap { row in
            let visible = Int(try row.int("visible"))
            return conversations[try row.int("conversation_id")].map { ($0, visible) }
        }
    }

    /// Names of the public channels with the most messages.
    ///
    /// - Complexity: O(n) messages.
    package func busiestChannelNames(limit: Int) throws -> [String] {
        try link.query(
            """
            SELECT c.name FROM conversation c
            LEFT JOIN (SELECT conversation_id, count(*) AS n FROM message GROUP BY conversation_id) counts
                ON counts.conversation_id = c.id
            WHERE c.kind = 'channel' ORDER BY coalesce(counts.n, 0) DESC, c.id LIMIT $1
            """, .of(Int64(limit))
        ).map { try $0.string("name") }
    }

    /// Handles of the members (not placeholders) who posted most, among the `limit` most active authors; only
    /// handles no other user shares.
    ///
    /// - Complexity: O(n) messages.
    package func busiestPosterHandles(limit: Int) throws -> [String] {
        try link.query(
            """
            SELECT u.handle FROM slack_user u WHERE NOT u.is_placeholder AND u.id IN (
                SELECT user_id FROM message WHERE user_id IS NOT NULL
                GROUP BY user_id ORDER BY count(*) DESC, user_id LIMIT $1)
            AND (SELECT count(*) FROM slack_user o WHERE o.handle = u.handle) = 1
            """, .of(Int64(limit))
        ).map { try $0.string("handle") }
    }
}
