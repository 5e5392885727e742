import GRDB

/// The columns every message read selects, and how a row becomes a `Message`.
enum MessageRows {
    /// Select list over `message m JOIN conversation c LEFT JOIN user u`; `Message(row:)` reads it by position.
    static let columns = """
        m.id, c.slack_id, c.kind, c.name, m.ts, m.ts_key, m.user_id,
        coalesce(nullif(u.display_name, ''), nullif(u.real_name, ''), u.handle, m.username, m.user_id),
        m.text, m.search_text, m.subtype, m.thread_ts, m.reply_count, m.edited_ts, m.is_deleted, m.flags, m.id,
        (SELECT domain FROM workspace w WHERE w.id = c.workspace_id)
        """
    static let columnCount = 18

    /// The joins that `columns` needs, after `FROM message m` (or an FTS table joined to `m`).
    static let joins = """
        JOIN conversation c ON c.id = m.conversation_id
        LEFT JOIN user u ON u.id = m.user_id
        """

    static func message(_ row: Row, offset: Int = 0) -> Message {
        let kind = ConversationKind(rawValue: row[offset + 2]) ?? .channel
        let name: String = row[offset + 3]
        let conversation = Conversation(rowID: 0, id: row[offset + 1], kind: kind, name: name).displayName
        return Message(
            rowID: row[offset + 0], conversationID: row[offset + 1], conversation: conversation, ts: row[offset + 4],
            tsKey: row[offset + 5], userID: row[offset + 6], user: row[offset + 7], text: row[offset + 8],
            plainText: row[offset + 9], subtype: row[offset + 10], threadTS: row[offset + 11],
            replyCount: row[offset + 12], editedTS: row[offset + 13], isDeleted: row[offset + 14],
            flags: MessageFlags(rawValue: row[offset + 15]), sortKey: row[offset + 16] ?? 0,
            workspaceDomain: row[offset + 17])
    }
}
