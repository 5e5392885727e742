import GRDB

/// The columns every cold message read (search hits, lookups) selects, named, and how a row becomes a `Message`.
enum MessageRows {
    /// Select list over `message m JOIN conversation c LEFT JOIN user u`; `message(_:)` reads it by name.
    static let columns = """
        m.id, c.slack_id, c.kind, c.name, m.ts, m.ts_key, m.user_id,
        coalesce(nullif(u.display_name, ''), nullif(u.real_name, ''), u.handle, m.username, m.user_id) AS author,
        m.text, \(SearchTextColumn.sql("m")) AS search_text, m.subtype, m.thread_ts, m.reply_count, m.edited_ts,
        m.is_deleted, m.flags,
        (SELECT domain FROM workspace w WHERE w.id = c.workspace_id) AS workspace_domain,
        \(WorkspaceLabel.sql("c")) AS workspace_label
        """

    /// The joins that `columns` needs, after `FROM message m` (or an FTS table joined to `m`).
    static let joins = """
        JOIN conversation c ON c.id = m.conversation_id
        LEFT JOIN user u ON u.id = m.user_id
        """

    static func message(_ row: Row) -> Message {
        let kind = ConversationKind(rawValue: row["kind"]) ?? .channel
        let conversation = Conversation(
            rowID: 0, id: row["slack_id"], kind: kind, name: row["name"], workspace: row["workspace_label"]
        ).displayName
        let id: Int64 = row["id"]
        return Message(
            rowID: id, conversationID: row["slack_id"], conversation: conversation, ts: row["ts"],
            tsKey: row["ts_key"], userID: row["user_id"], user: row["author"], text: row["text"],
            plainText: row["search_text"], subtype: row["subtype"], threadTS: row["thread_ts"],
            replyCount: row["reply_count"], editedTS: row["edited_ts"], isDeleted: row["is_deleted"],
            flags: MessageFlags(rawValue: row["flags"]), workspaceDomain: row["workspace_domain"])
    }
}
