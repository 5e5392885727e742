import Foundation
import PostgresNIO

/// What `serve` reads on PostgreSQL beyond pages and hits: its tokens, the conversations a token may read, and the
/// messages' JSON as Slack gave it.
extension PostgresArchive {
    // TokenStore

    /// Makes a token for `userID` (`APIToken.generate()`) and returns it in plain text; only its hash is stored.
    ///
    /// - Throws: `TokenError.unknownUser` when the archive has no such user.
    package func createToken(userID: String, isAdmin: Bool, label: String?, now: Date) throws
        -> (token: String, record: APIToken)
    {
        let token = APIToken.generate()
        let created = Int64(now.timeIntervalSince1970)
        var binds = PostgresBindings.of(APIToken.hash(token), userID, isAdmin, created)
        binds.append(label)
        let rows = try link.query(
            """
            INSERT INTO api_token (hash, user_id, is_admin, created, label)
            SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM slack_user WHERE id = $2)
            RETURNING id
            """, binds)
        guard let id = try rows.first?.int("id") else { throw TokenError.unknownUser(userID) }
        return (token, APIToken(id: id, userID: userID, isAdmin: isAdmin, created: created, label: label))
    }

    /// The record of a presented token, or nil when it is not one of the archive's (one lookup on the hash's
    /// unique index).
    /// With a replica, a token it does not have yet (made a moment ago) is asked of the primary too.
    package func verifyToken(_ token: String) throws -> APIToken? {
        guard token.hasPrefix(Archive.tokenPrefix) else { return nil }
        let sql = "SELECT id, user_id, is_admin, created, label FROM api_token WHERE hash = $1"
        var rows = try link.query(sql, .of(APIToken.hash(token)))
        if rows.isEmpty, link.readsElsewhere { rows = (try? link.query(sql, .of(APIToken.hash(token)), on: .primary)) ?? [] }
        return try rows.first.map(Self.token)
    }

    /// Every token, oldest first.
    package func tokens() throws -> [APIToken] {
        try link.query("SELECT id, user_id, is_admin, created, label FROM api_token ORDER BY id").map(Self.token)
    }

    /// Removes a token and its web UI sessions.
    ///
    /// - Throws: `TokenError.unknownToken` when there is no token with that id.
    package func revokeToken(id: Int64) throws {
        try link.transaction {
            let gone = try link.query("DELETE FROM api_token WHERE id = $1 RETURNING id", .of(id))
            if gone.isEmpty { throw TokenError.unknownToken(id) }
            try link.query("DELETE FROM web_session WHERE token_id = $1", .of(id))
        }
    }

    private static func token(_ row: PostgresRandomAccessRow) throws -> APIToken {
        APIToken(
            id: try row.int("id"), userID: try row.string("user_id"), isAdmin: try row.bool("is_admin"),
            created: try row.int("created"), label: try row.optionalString("label"))
    }

    // What a token may read (`APIToken.mayRead`, the rule the SQLite archive says in SQL).

    /// The conversation with Slack id `id`, if `token` may read it.
    package func visibleConversation(id: String, to token: APIToken) throws -> ConversationListing? {
        try listings().first { $0.conversation.id == id && token.mayRead($0.conversation) }
    }

    /// Row ids of every conversation `token` may read; nil for an admin token (everything).
    package func visibleConversationRowIDs(to token: APIToken) throws -> Set<Int64>? {
        guard !token.isAdmin else { return nil }
        return Set(try allConversations().map(\.conversation).filter(token.mayRead).map(\.rowID))
    }

    /// A page of the conversations `token` may read, in Slack id order (bytes, as SQLite's), after `afterID`.
    package func visibleConversations(
        to token: APIToken, kinds: Set<ConversationKind>, excludeArchived: Bool, after afterID: String?, limit: Int
    ) throws -> [ConversationListing] {
        let after = afterID ?? ""
        return try listings().filter { listing in
            let c = listing.conversation
            return kinds.contains(c.kind) && !(excludeArchived && c.isArchived) && token.mayRead(c)
                && after.utf8.lexicographicallyPrecedes(c.id.utf8)
        }.sorted { $0.conversation.id.utf8.lexicographicallyPrecedes($1.conversation.id.utf8) }
            .prefix(max(0, limit)).map { $0 }
    }

    /// Every conversation with the time the export says it was created, kept with the directory
    /// (`PostgresDirectoryCache`): `serve` asks on every request that names a conversation.
    private func listings() throws -> [ConversationListing] {
        try directory.listings {
            var created: [Int64: Int64] = [:]
            for row in try link.query("SELECT id, created FROM conversation WHERE created IS NOT NULL") {
                created[try row.int("id")] = try row.int("created")
            }
            return try allConversations().map {
                ConversationListing(conversation: $0.conversation, created: created[$0.conversation.rowID])
            }
        }
    }

    // Timelines: the JSON as given.

    /// The stored JSON of the given messages with the thread figures the archive knows now: for a thread parent,
    /// its newest reply that is not deleted, and whether the JSON's own `latest_reply` names a deleted reply.
    ///
    /// - Complexity: O(k log n) for k ids (each parent's newest reply through `message_thread`).
    package func rawMessages(ids: [Int64]) throws -> [Int64: RawMessage] {
        guard !ids.isEmpty else { return [:] }
        let parent = MessageFlags.threadParent.rawValue
        let rows = try link.query(
            """
            SELECT m.id, m.conversation_id, m.ts_key, m.raw, (m.flags & \(parent)) <> 0 AS is_parent, m.reply_count,
                CASE WHEN (m.flags & \(parent)) <> 0 THEN
                    (SELECT r.ts FROM message r
                     WHERE r.conversation_id = m.conversation_id AND r.thread_key = m.ts_key
                        AND r.ts_key > m.ts_key AND NOT r.is_deleted
                     ORDER BY r.ts_key DESC LIMIT 1)
                END AS latest_reply
            FROM message m WHERE m.id = ANY($1)
            """, .of(ids))
        var out: [Int64: RawMessage] = [:]
        var named: [(id: Int64, conversation: Int64, thread: Int64, ts: String)] = []
        for row in rows {
            let id = try row.int("id")
            let json = try row.string("raw")
            let message = RawMessage(
                json: json, isThreadParent: try row.bool("is_parent"), replyCount: Int(try row.int("reply_count")),
                latestReply: try row.optionalString("latest_reply"))
            if message.isThreadParent, let latest = Self.latestReply(in: json) {
                named.append((id, try row.int("conversation_id"), try row.int("ts_key"), latest))
            }
            out[id] = message
        }
        if !named.isEmpty {
            let deleted = try link.query(
                """
                SELECT n.id FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[]) AS n(id, c, t, ts)
                WHERE EXISTS (SELECT 1 FROM message d
                    WHERE d.conversation_id = n.c AND d.thread_key = n.t AND d.ts = n.ts AND d.is_deleted)
                """, .of(named.map(\.id), named.map(\.conversation), named.map(\.thread), named.map(\.ts)))
            for row in deleted { out[try row.int("id")]?.latestReplyDeleted = true }
        }
        return out
    }

    /// The `latest_reply` a message's JSON names, if it is an object that names one.
    private static func latestReply(in json: String) -> String? {
        guard json.contains("\"latest_reply\""),
            let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        else { return nil }
        return object["latest_reply"] as? String
    }
}
