import Foundation
import PostgresNIO
import Synchronization

/// Conversations' messages in time order on PostgreSQL: keyset pages, threads, single messages.
extension PostgresArchive {
    /// The message columns a page or a hit reads (`message(_:conversation:names:)`).
    static let messageColumns = """
        m.id, m.conversation_id, m.ts, m.ts_key, m.user_id, m.username, m.text, m.search_text, m.subtype,
        m.thread_ts, m.reply_count, m.edited_ts, m.is_deleted, m.flags
        """

    /// A row of `messageColumns` as a `Message`, by the SQLite archive's rules (`TimelineRows`): the author's shown
    /// name from `names`, the stored search text shown where the text is empty or holds markup.
    static func message(
        _ row: PostgresRandomAccessRow, conversation: Conversation, names: [String: String]
    ) throws -> Message {
        let userID = try row.optionalString("user_id")
        let username = try row.optionalString("username")
        var text = try row.string("text")
        let stored = try row.string("search_text")
        let showsStored = text.withUTF8 { TimelineRows.showsSearchText(text: $0, storedCount: stored.utf8.count) }
        return Message(
            rowID: try row.int("id"), conversationID: conversation.id, conversation: conversation.displayName,
            ts: try row.string("ts"), tsKey: try row.int("ts_key"), userID: userID,
            user: userID.flatMap { names[$0] } ?? username ?? userID, text: text,
            plainText: showsStored ? stored : text, subtype: try row.optionalString("subtype"),
            threadTS: try row.optionalString("thread_ts"), replyCount: Int(try row.int("reply_count")),
            editedTS: try row.optionalString("edited_ts"), isDeleted: try row.bool("is_deleted"),
            flags: MessageFlags(rawValue: try row.int("flags")), workspaceDomain: conversation.workspaceDomain)
    }

    /// A page of a conversation, oldest to newest: keyset on `(ts_key, id)` within the conversation (the
    /// distribution key leads every condition), through `message_history` or `message_thread`.
    ///
    /// - Complexity: O(log n + limit).
    package func page(
        conversation: Conversation, scope: Archive.PageScope, direction: Archive.PageDirection,
        from position: TimelinePosition?, limit: Int, includeDeleted: Bool
    ) throws -> [Message] {
        var binds = PostgresBindings.of(conversation.rowID)
        let scopeSQL: String
        switch scope {
        case .history:
            scopeSQL = "(m.flags & 96) <> 0"
        case .thread(let threadKey):
            binds.append(threadKey)
            scopeSQL = "m.thread_key = $\(binds.count)"
        }
        let deleted = includeDeleted ? "" : "AND NOT m.is_deleted"
        var bound = ""
        if let position {
            binds.append(position.tsKey)
            let key = binds.count
            binds.append(position.rowID)
            bound =
                direction == .before
                ? "AND (m.ts_key, m.id) < ($\(key), $\(key + 1))"
                : "AND (m.ts_key, m.id) > ($\(key), $\(key + 1))"
        }
        binds.append(Int64(max(0, limit)))
        let order = direction == .before ? "DESC" : "ASC"
        let rows = try link.query(
            """
            SELECT \(Self.messageColumns) FROM message m
            WHERE m.conversation_id = $1 AND \(scopeSQL) \(deleted) \(bound)
            ORDER BY m.ts_key \(order), m.id \(order)
            LIMIT $\(binds.count)
            """, binds)
        let names = try userNames()
        var messages = try rows.map { try Self.message($0, conversation: conversation, names: names) }
        if direction == .before { messages.reverse() }
        return messages
    }

    package func message(conversation: Conversation, tsKey: Int64) throws -> Message? {
        let rows = try link.query(
            "SELECT \(Self.messageColumns) FROM message m WHERE m.conversation_id = $1 AND m.ts_key = $2",
            .of(conversation.rowID, tsKey))
        let names = try userNames()
        return try rows.first.map { try Self.message($0, conversation: conversation, names: names) }
    }

    /// Reactions and files of the given messages, from their rows' `jsonb`.
    package func details(of rowIDs: [Int64]) throws -> [Int64: MessageDetails] {
        guard !rowIDs.isEmpty else { return [:] }
        var out: [Int64: MessageDetails] = [:]
        let rows = try link.query(
            """
            SELECT id, reactions::text AS reactions, files::text AS files FROM message
            WHERE id = ANY($1) AND (reactions IS NOT NULL OR files IS NOT NULL)
            """, .of(rowIDs))
        let decoder = JSONDecoder()
        for row in rows {
            var details = MessageDetails()
            if let json = try row.optionalString("reactions") {
                // By name in byte order, as the SQLite archive's reaction table (keyed by message and name) gives them.
                details.reactions = try decoder.decode([StoredReaction].self, from: Data(json.utf8))
                    .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            }
            if let json = try row.optionalString("files") {
                details.files = try decoder.decode([StoredFile].self, from: Data(json.utf8))
            }
            out[try row.int("id")] = details
        }
        return out
    }

    package func onMessageChanges(_ listener: @escaping @Sendable ([Int64]) -> Void) {
        changeListeners.withLock { $0.append(listener) }
    }

    package func locations(of rowIDs: [Int64]) throws -> [(conversation: Int64, tsKey: Int64, threadKey: Int64?)] {
        guard !rowIDs.isEmpty else { return [] }
        return try link.query(
            "SELECT conversation_id, ts_key, thread_key FROM message WHERE id = ANY($1)", .of(rowIDs)
        ).map { (try $0.int("conversation_id"), try $0.int("ts_key"), try $0.optionalInt("thread_key")) }
    }

    /// The position `depth` messages back from the newest of the conversation's history.
    package func position(in conversation: Conversation, depth: Int) throws -> TimelinePosition? {
        try link.query(
            """
            SELECT ts_key, id FROM message
            WHERE conversation_id = $1 AND (flags & 96) <> 0 AND NOT is_deleted
            ORDER BY ts_key DESC, id DESC OFFSET $2 LIMIT 1
            """, .of(conversation.rowID, Int64(max(0, depth)))
        ).first.map { TimelinePosition(tsKey: try $0.int("ts_key"), rowID: try $0.int("id")) }
    }

    package func timeRange(of conversation: Conversation?) throws -> (Int64, Int64) {
        let scope = conversation == nil ? "" : "WHERE conversation_id = $1"
        let binds: PostgresBindings = conversation.map { .of($0.rowID) } ?? PostgresBindings()
        let row = try link.query("SELECT min(ts_key) AS first, max(ts_key) AS last FROM message \(scope)", binds).first
        return (try row?.optionalInt("first") ?? 0, try row?.optionalInt("last") ?? 0)
    }

    package func messageSpan() throws -> (first: Int64, last: Int64)? {
        let row = try link.query("SELECT min(ts_key) AS first, max(ts_key) AS last FROM message").first
        guard let first = try row?.optionalInt("first"), let last = try row?.optionalInt("last") else { return nil }
        return (first, last)
    }

    package func messageTimeBounds(conversations rowIDs: Set<Int64>) throws -> (first: Int64?, last: Int64?) {
        guard !rowIDs.isEmpty else { return (nil, nil) }
        let row = try link.query(
            "SELECT min(ts_key) AS first, max(ts_key) AS last FROM message WHERE conversation_id = ANY($1)",
            .of(Array(rowIDs))
        ).first
        return (try row?.optionalInt("first"), try row?.optionalInt("last"))
    }

    package func messageIDRange() throws -> ClosedRange<MessageID>? {
        let row = try link.query("SELECT min(id) AS first, max(id) AS last FROM message").first
        guard let first = try row?.optionalInt("first"), let last = try row?.optionalInt("last") else { return nil }
        return MessageID(rawValue: first)...MessageID(rawValue: last)
    }

    /// Every message row of a conversation above `afterKey`, oldest first, at most `limit` (the primary key).
    ///
    /// - Complexity: O(log n + limit).
    package func storedRows(conversation: Conversation, after afterKey: Int64?, limit: Int) throws -> [StoredRow] {
        try link.query(
            """
            SELECT id, ts_key, is_deleted, flags FROM message
            WHERE conversation_id = $1 AND ts_key > $2 ORDER BY ts_key LIMIT $3
            """, .of(conversation.rowID, afterKey ?? Int64.min, Int64(max(0, limit)))
        ).map {
            StoredRow(
                rowID: try $0.int("id"), tsKey: try $0.int("ts_key"), isDeleted: try $0.bool("is_deleted"),
                flags: MessageFlags(rawValue: try $0.int("flags")))
        }
    }
}
