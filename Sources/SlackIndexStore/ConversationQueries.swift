import GRDB

extension Archive {
    /// Finds a conversation by Slack id, `#name`, name or export folder name.
    ///
    /// - Throws: `StoreError.conversationNotFound` or `.ambiguousConversation` (listing the candidates).
    /// - Complexity: O(log n) by id or name.
    public func conversation(named reference: String) throws -> Conversation {
        try pool.read { db in try Archive.conversation(named: reference, in: db) }
    }

    static func conversation(named reference: String, in db: Database) throws -> Conversation {
        var name = reference
        if name.hasPrefix("<#"), name.hasSuffix(">") {
            name = String(name.dropFirst(2).dropLast().prefix { $0 != "|" })
        }
        if name.hasPrefix("#") { name.removeFirst() }
        let sql = "SELECT \(ConversationColumns.list) FROM conversation c"
        if let row = try Row.fetchOne(db, sql: sql + " WHERE c.slack_id = ?", arguments: [name]) {
            return conversation(row)
        }
        var rows = try Row.fetchAll(db, sql: sql + " WHERE c.name = ? OR c.folder = ?", arguments: [name, name])
        if rows.isEmpty {
            rows = try Row.fetchAll(
                db, sql: sql + " WHERE c.name = ? COLLATE NOCASE OR c.folder = ? COLLATE NOCASE", arguments: [name, name])
        }
        if rows.count == 1 { return conversation(rows[0]) }
        if rows.isEmpty { throw StoreError.conversationNotFound(reference) }
        throw StoreError.ambiguousConversation(
            reference, candidates: rows.map { "\(conversation($0).displayName) (\($0["slack_id"] as String))" })
    }

    /// The row id of every conversation (no rows decoded).
    /// - Complexity: O(c) over the primary key.
    package func conversationRowIDs() throws -> Set<Int64> {
        try pool.read { db in Set(try Int64.fetchAll(db, sql: "SELECT id FROM conversation")) }
    }

    /// Every conversation, by kind then name.
    public func conversations() throws -> [Conversation] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT \(ConversationColumns.list) FROM conversation c ORDER BY c.kind, c.name"
            ).map(Archive.conversation)
        }
    }

    static func conversation(_ row: Row) -> Conversation {
        ConversationColumns.conversation(row)
    }
}
