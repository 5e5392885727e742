import Foundation
import GRDB

/// The workspace an archive holds, as `auth.test` reports it.
package struct WorkspaceInfo: Sendable, Hashable {
    package var teamID: String
    package var name: String?
    /// Slack domain (`acme` for acme.slack.com).
    package var domain: String?

    /// How the workspace is shown to people: its name, else its domain, else its team id.
    package var shownName: String {
        [name, domain].compactMap { $0 }.first { !$0.isEmpty } ?? teamID
    }
}

/// A workspace with how many conversations and messages (not deleted) the archive holds of it: a line of
/// `stats --json`'s `workspaces`.
package struct WorkspaceCount: Sendable, Hashable, Codable {
    package var workspace: WorkspaceInfo
    package var conversations: Int
    package var messages: Int

    package init(workspace: WorkspaceInfo, conversations: Int, messages: Int) {
        self.workspace = workspace
        self.conversations = conversations
        self.messages = messages
    }

    private enum CodingKeys: String, CodingKey { case id, name, domain, conversations, messages }

    package init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        workspace = WorkspaceInfo(
            teamID: try c.decode(String.self, forKey: .id), name: try c.decodeIfPresent(String.self, forKey: .name),
            domain: try c.decodeIfPresent(String.self, forKey: .domain))
        conversations = try c.decode(Int.self, forKey: .conversations)
        messages = try c.decode(Int.self, forKey: .messages)
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(workspace.teamID, forKey: .id)
        try c.encode(workspace.name, forKey: .name)
        try c.encode(workspace.domain, forKey: .domain)
        try c.encode(conversations, forKey: .conversations)
        try c.encode(messages, forKey: .messages)
    }
}

/// A member with what `users.list` shows besides the names.
package struct ArchivedUser: Sendable, Hashable {
    package var user: User
    package var teamID: String?
    /// IANA zone (`Europe/Paris`).
    package var timeZone: String?
}

/// A conversation with its creation time, as `conversations.list` shows it.
package struct ConversationListing: Sendable, Hashable {
    package var conversation: Conversation
    /// Seconds since the epoch, when the export said.
    package var created: Int64?
}

/// A message's archived Slack JSON, with the thread figures the archive knows now.
package struct RawMessage: Sendable, Hashable {
    /// The message object as Slack gave it, with edits applied (`message_changed` replaces it).
    package var json: String
    /// True for a thread parent.
    package var isThreadParent: Bool
    /// Replies archived and not deleted (never fewer than the export's own count).
    package var replyCount: Int
    /// The newest reply's ts, when the archive has a reply.
    package var latestReply: String?
    /// True when the JSON's own `latest_reply` names a reply the archive knows was deleted.
    package var latestReplyDeleted: Bool = false
}

extension SQLiteArchive {
    /// The SQL condition "a token of `userID` (admin or not) may see conversation `c`", and its arguments.
    ///
    /// Public channels are open to every token; private channels, DMs and group DMs only to their members
    /// (`conversation.members`, a JSON array); admin tokens see everything.
    static func visibility(_ token: APIToken) -> (sql: String, arguments: StatementArguments) {
        (
            "(? OR c.kind = 'channel' OR EXISTS (SELECT 1 FROM json_each(c.members) j WHERE j.value = ?))",
            [token.isAdmin, token.userID]
        )
    }

    /// The conversation with Slack id `id`, if `token` may see it.
    ///
    /// - Complexity: O(log n + members).
    package func visibleConversation(id: String, to token: APIToken) throws -> ConversationListing? {
        let (condition, arguments) = SQLiteArchive.visibility(token)
        return try pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT \(ConversationColumns.list)
                    FROM conversation c WHERE c.slack_id = ? AND \(condition)
                    """, arguments: [id] + arguments
            ).map { ConversationListing(conversation: SQLiteArchive.conversation($0), created: $0["created"]) }
        }
    }

    /// Row ids of every conversation `token` may see; nil for an admin token (everything).
    ///
    /// - Complexity: O(conversations × members).
    package func visibleConversationRowIDs(to token: APIToken) throws -> Set<Int64>? {
        guard !token.isAdmin else { return nil }
        let (condition, arguments) = SQLiteArchive.visibility(token)
        return try pool.read { db in
            Set(try Int64.fetchAll(db, sql: "SELECT c.id FROM conversation c WHERE \(condition)", arguments: arguments))
        }
    }

    /// A page of the conversations `token` may see, in Slack id order, after `afterID` (keyset, no OFFSET).
    ///
    /// - Parameters:
    ///   - kinds: the kinds to list.
    ///   - excludeArchived: leave out archived conversations.
    ///   - afterID: the last id of the previous page, or nil for the first page.
    /// - Complexity: O(log n + limit × members) plus the rows skipped by the filters.
    package func visibleConversations(
        to token: APIToken, kinds: Set<ConversationKind>, excludeArchived: Bool, after afterID: String?, limit: Int
    ) throws -> [ConversationListing] {
        guard !kinds.isEmpty else { return [] }
        let (condition, visibilityArguments) = SQLiteArchive.visibility(token)
        let kindList = "(" + kinds.map { _ in "?" }.joined(separator: ", ") + ")"
        var arguments: StatementArguments = [afterID ?? ""]
        arguments += StatementArguments(kinds.map(\.rawValue).sorted())
        arguments += visibilityArguments
        arguments += [max(0, limit)]
        let archived = excludeArchived ? "AND c.is_archived = 0" : ""
        return try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(ConversationColumns.list)
                    FROM conversation c
                    WHERE c.slack_id > ? AND c.kind IN \(kindList) \(archived) AND \(condition)
                    ORDER BY c.slack_id
                    LIMIT ?
                    """, arguments: arguments
            ).map { ConversationListing(conversation: SQLiteArchive.conversation($0), created: $0["created"]) }
        }
    }

    /// A page of members in id order after `afterID` (keyset, no OFFSET), placeholders included.
    ///
    /// - Complexity: O(log n + limit).
    package func usersPage(after afterID: String?, limit: Int) throws -> [ArchivedUser] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(UserColumns.list), team_id, time_zone
                    FROM user WHERE id > ? ORDER BY id LIMIT ?
                    """, arguments: [afterID ?? "", max(0, limit)]
            ).map(SQLiteArchive.archivedUserRow)
        }
    }

    /// The user with id `id`, if the archive knows it.
    ///
    /// - Complexity: O(log n).
    package func archivedUser(id: String) throws -> ArchivedUser? {
        try pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT \(UserColumns.list), team_id, time_zone
                    FROM user WHERE id = ?
                    """, arguments: [id]
            ).map(SQLiteArchive.archivedUserRow)
        }
    }

    /// The users with the given ids that the archive knows, by id.
    ///
    /// Asked 500 ids a statement: a page full of mentions must not pass SQLite's limit on bound variables
    /// (32,766 in default builds).
    /// - Complexity: O(k log n) for k ids.
    package func archivedUsers(ids: Set<String>) throws -> [String: ArchivedUser] {
        guard !ids.isEmpty else { return [:] }
        let all = Array(ids)
        return try pool.read { db in
            var out: [String: ArchivedUser] = [:]
            for start in stride(from: 0, to: all.count, by: 500) {
                let chunk = Array(all[start..<min(start + 500, all.count)])
                let list = "(" + chunk.map { _ in "?" }.joined(separator: ",") + ")"
                for row in try Row.fetchAll(
                    db,
                    sql: """
                        SELECT \(UserColumns.list), team_id, time_zone
                        FROM user WHERE id IN \(list)
                        """, arguments: StatementArguments(chunk))
                {
                    out[row["id"]] = SQLiteArchive.archivedUserRow(row)
                }
            }
            return out
        }
    }

    private static func archivedUserRow(_ row: Row) -> ArchivedUser {
        ArchivedUser(user: UserColumns.user(row), teamID: row["team_id"], timeZone: row["time_zone"])
    }

    /// The archive's workspace (the first one imported, when there are several); nil for an empty archive.
    ///
    /// - Complexity: O(1).
    package func workspace() throws -> WorkspaceInfo? {
        try pool.read { db in
            try Row.fetchOne(db, sql: "SELECT team_id, name, domain FROM workspace ORDER BY id LIMIT 1").map {
                WorkspaceInfo(teamID: $0["team_id"], name: $0["name"], domain: $0["domain"])
            }
        }
    }

    /// Every workspace the archive holds, in the order they were first imported.
    ///
    /// - Complexity: O(w) for w workspaces.
    package func workspaces() throws -> [WorkspaceInfo] {
        try pool.read { db in
            try Row.fetchAll(db, sql: "SELECT team_id, name, domain FROM workspace ORDER BY id").map {
                WorkspaceInfo(teamID: $0["team_id"], name: $0["name"], domain: $0["domain"])
            }
        }
    }

    /// The archived JSON of the given messages, with their current reply counts and latest replies.
    ///
    /// - Complexity: O(k log n) for k messages (the latest reply is one seek in `message_thread` per parent), plus
    ///   inflating each packed block the messages lie in once (`RawBlocks`).
    /// - Throws: `ArchiveDamage` when a message's packed JSON cannot be read back.
    package func rawMessages(ids: [Int64]) throws -> [Int64: RawMessage] {
        guard !ids.isEmpty else { return [:] }
        let list = "(" + ids.map { _ in "?" }.joined(separator: ",") + ")"
        let parent = MessageFlags.threadParent.rawValue
        return try pool.read { db in
            var out: [Int64: RawMessage] = [:]
            var blocks = RawBlockReader()
            // A cursor, not `fetchAll`: GRDB's copied rows find a column by lowercasing every column's name, 4.6% of
            // `serve`'s CPU on history pages (perf, 10M archive); a cursor's rows look the name up in a dictionary.
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT m.id, m.conversation_id, m.ts_key, m.raw, m.raw_block, m.raw_at,
                        m.text, m.ts, m.user_id, m.thread_ts,
                        (m.flags & \(parent)) != 0 AS is_parent, m.reply_count,
                        CASE WHEN (m.flags & \(parent)) != 0 THEN
                            (SELECT r.ts FROM message r INDEXED BY message_thread
                             WHERE r.conversation_id = m.conversation_id AND r.thread_key = m.ts_key
                                AND r.ts_key > m.ts_key AND r.is_deleted = 0
                             ORDER BY r.ts_key DESC LIMIT 1)
                        END AS latest_reply
                    FROM message m WHERE m.id IN \(list)
                    """, arguments: StatementArguments(ids))
            while let row = try rows.next() {
                let id: Int64 = row["id"]
                let fields = RepeatedFields(
                    text: row["text"], ts: row["ts"], userID: row["user_id"], threadTS: row["thread_ts"])
                let json = try blocks.raw(
                    inline: row["raw"], block: row["raw_block"], at: row["raw_at"], fields: fields, in: db)
                var message = RawMessage(
                    json: json, isThreadParent: row["is_parent"], replyCount: row["reply_count"],
                    latestReply: row["latest_reply"])
                if message.isThreadParent {
                    message.latestReplyDeleted = try SQLiteArchive.namesDeletedReply(
                        json, conversationRowID: row["conversation_id"], threadKey: row["ts_key"], in: db)
                }
                out[id] = message
            }
            return out
        }
    }

    /// True when the JSON's own `latest_reply` names a reply of the thread that the archive knows was deleted.
    private static func namesDeletedReply(
        _ json: String, conversationRowID: Int64, threadKey: Int64, in db: Database
    ) throws -> Bool {
        let statement = try db.cachedStatement(
            sql: """
                SELECT EXISTS (SELECT 1 FROM message d INDEXED BY message_thread
                    WHERE d.conversation_id = ? AND d.thread_key = ?
                        AND d.ts = CASE WHEN json_valid(?) THEN json_extract(?, '$.latest_reply') END
                        AND d.is_deleted = 1)
                """)
        return try Bool.fetchOne(statement, arguments: [conversationRowID, threadKey, json, json]) ?? false
    }
}

extension SQLiteArchive {
    /// Messages kept (not deleted) per conversation row id, as `stats` counts them (`message_count`); conversations
    /// without messages are absent.
    ///
    /// - Complexity: O(c) for c conversations (the counts are kept by triggers, not counted here).
    package func messageCountsByConversation() throws -> [Int64: Int] {
        try pool.read { db in
            var out: [Int64: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT conversation_id, messages FROM message_count WHERE messages > 0") {
                out[row["conversation_id"]] = row["messages"]
            }
            return out
        }
    }
}
