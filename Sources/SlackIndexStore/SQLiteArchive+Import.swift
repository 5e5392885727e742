import Foundation
import GRDB
import GRDBSQLite

/// The writes an import makes besides messages: workspace, users, conversations, placeholders, deletions.
extension SQLiteArchive {
    /// Makes sure a workspace row exists for `teamID`, recording its domain when known; returns its row id.
    static func upsertWorkspace(teamID: String, domain: String?, in db: Database) throws -> Int64 {
        try db.execute(
            sql: """
                INSERT INTO workspace (team_id, domain) VALUES (?, ?)
                ON CONFLICT (team_id) DO UPDATE SET domain = coalesce(excluded.domain, workspace.domain)
                """, arguments: [teamID, domain])
        return try Int64.fetchOne(db, sql: "SELECT id FROM workspace WHERE team_id = ?", arguments: [teamID]) ?? 0
    }

    /// Inserts or updates members; a real record replaces a placeholder, and a placeholder input (another archive's
    /// placeholder, served back by `serve`) is stored as one, never replacing anyone. Returns (added, updated) real
    /// members.
    static func upsertUsers(_ users: [UserInput], in db: Database) throws -> (added: Int, updated: Int) {
        let placeholders = users.filter(\.isPlaceholder).map {
            User(
                id: $0.id, handle: $0.handle, realName: $0.realName, displayName: $0.displayName, isBot: $0.isBot,
                isPlaceholder: true)
        }
        if !placeholders.isEmpty { _ = try insertPlaceholders(placeholders, in: db) }
        let users = placeholders.isEmpty ? users : users.filter { !$0.isPlaceholder }
        try upsertAvatarURLs(users.compactMap { user in user.avatarURL.map { (user.id, $0) } }, in: db)
        var added = 0
        var updated = 0
        let existing = try db.cachedStatement(
            sql: """
                SELECT handle, real_name, display_name, is_bot, is_deleted, is_placeholder, time_zone, team_id
                FROM user WHERE id = ?
                """)
        let upsert = try db.cachedStatement(
            sql: """
                INSERT INTO user (id, team_id, handle, real_name, display_name, is_bot, is_deleted, is_placeholder,
                    time_zone)
                VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?)
                ON CONFLICT (id) DO UPDATE SET team_id = excluded.team_id, handle = excluded.handle,
                    real_name = excluded.real_name, display_name = excluded.display_name, is_bot = excluded.is_bot,
                    is_deleted = excluded.is_deleted, is_placeholder = 0, time_zone = excluded.time_zone
                """)
        for user in users {
            let handle = user.handle
            existing.setUncheckedArguments([user.id])
            if let row = try Row.fetchOne(existing) {
                let names: [String?] = [
                    row["handle"], row["real_name"], row["display_name"], row["time_zone"], row["team_id"],
                ]
                let bools: [Bool] = [row["is_bot"], row["is_deleted"], row["is_placeholder"]]
                let same =
                    names == [handle, user.realName, user.displayName, user.timeZone, user.teamID]
                    && bools == [user.isBot, user.isDeleted, false]
                if same { continue }
                updated += 1
            } else {
                added += 1
            }
            upsert.setUncheckedArguments([
                user.id, user.teamID, handle, user.realName, user.displayName, user.isBot, user.isDeleted, user.timeZone,
            ])
            try upsert.execute()
        }
        if added + updated > 0 { try bumpUsersVersion(in: db) }
        return (added, updated)
    }

    /// Records users seen only in messages; never replaces a real member. Returns how many were new.
    static func insertPlaceholders(_ users: [User], in db: Database) throws -> Int {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO user (id, handle, real_name, display_name, is_bot, is_placeholder) VALUES (?, ?, ?, ?, ?, 1)
                ON CONFLICT (id) DO NOTHING
                """)
        var added = 0
        for user in users {
            statement.setUncheckedArguments([user.id, user.handle, user.realName, user.displayName, user.isBot])
            try statement.execute()
            added += db.changesCount
        }
        if added > 0 { try bumpUsersVersion(in: db) }
        return added
    }

    /// Inserts or updates a conversation keyed on its Slack id; returns its row id and what happened.
    static func upsertConversation(
        _ c: ConversationInput, workspaceID: Int64?, in db: Database
    ) throws -> (rowID: Int64, outcome: UpsertOutcome) {
        let members = JSONText.array(c.members)
        if let row = try Row.fetchOne(
            db,
            sql: """
                SELECT id, kind, name, folder, created, topic, purpose, is_archived, members, workspace_id
                FROM conversation WHERE slack_id = ?
                """,
            arguments: [c.slackID])
        {
            let rowID: Int64 = row["id"]
            let strings: [String?] = [
                row["kind"], row["name"], row["folder"], row["topic"], row["purpose"], row["members"],
            ]
            let created: Int64? = row["created"]
            let archived: Bool = row["is_archived"]
            let workspace: Int64? = row["workspace_id"]
            let same =
                strings == [c.kind.rawValue, c.name, c.folder, c.topic, c.purpose, members]
                && created == c.created && archived == c.isArchived
                && (workspaceID == nil || workspace == workspaceID)
            if same { return (rowID, .unchanged) }
            try db.execute(
                sql: """
                    UPDATE conversation SET kind = ?, name = ?, folder = coalesce(?, folder),
                        created = coalesce(?, created), topic = ?, purpose = ?, is_archived = ?, members = ?,
                        workspace_id = coalesce(?, workspace_id)
                    WHERE id = ?
                    """,
                arguments: [
                    c.kind.rawValue, c.name, c.folder, c.created, c.topic, c.purpose, c.isArchived, members,
                    workspaceID, rowID,
                ])
            return (rowID, .updated)
        }
        try db.execute(
            sql: """
                INSERT INTO conversation (slack_id, workspace_id, kind, name, folder, created, topic, purpose,
                    is_archived, members)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
            arguments: [
                c.slackID, workspaceID, c.kind.rawValue, c.name, c.folder, c.created, c.topic, c.purpose,
                c.isArchived, members,
            ])
        return (db.lastInsertedRowID, .added)
    }

    /// The names mentions and channel references resolve to: every user and conversation the archive knows.
    ///
    /// - Complexity: O(users + conversations).
    package func nameDirectory() throws -> NameDirectory {
        try pool.read { db in
            var names = NameDirectory()
            for row in try Row.fetchAll(db, sql: "SELECT \(UserColumns.list) FROM user") {
                names.addUser(UserColumns.user(row))
            }
            for row in try Row.fetchAll(db, sql: "SELECT slack_id, name FROM conversation") {
                names.addChannel(id: row["slack_id"], name: row["name"])
            }
            return names
        }
    }

    /// Marks a message deleted and removes it from the index. Returns false when the message is not stored.
    static func markDeleted(conversationRowID: Int64, tsKey: Int64, in db: Database) throws -> Bool {
        guard
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT id, is_deleted, \(SearchTextColumn.sql("message")) AS search_text, search_extra, user_id
                    FROM message
                    WHERE conversation_id = ? AND ts_key = ?
                    """, arguments: [conversationRowID, tsKey])
        else { return false }
        let id: Int64 = row["id"]
        let deleted: Bool = row["is_deleted"]
        if !deleted {
            try MessageWriter.indexDelete(
                id: id, row["search_text"], row["search_extra"], scope: (conversationRowID, row["user_id"]), in: db)
            try db.execute(sql: "UPDATE message SET is_deleted = 1 WHERE id = ?", arguments: [id])
        }
        return true
    }

    /// Marks a message deleted, or remembers the deletion until the message arrives.
    static func delete(conversationRowID: Int64, tsKey: Int64, in db: Database) throws {
        if try !markDeleted(conversationRowID: conversationRowID, tsKey: tsKey, in: db) {
            try db.execute(
                sql: "INSERT OR IGNORE INTO pending_deletion (conversation_id, ts_key) VALUES (?, ?)",
                arguments: [conversationRowID, tsKey])
        }
    }

    /// Applies kept reaction events and deletions whose messages have arrived since. Returns how many deletions.
    ///
    /// - Complexity: O(p log n) for p pending deletions (none, almost always).
    static func applyPendingEvents(in db: Database) throws -> Int {
        try applyPendingReactions(in: db)
        var applied = 0
        for row in try Row.fetchAll(db, sql: "SELECT conversation_id, ts_key FROM pending_deletion") {
            let conversation: Int64 = row["conversation_id"]
            let tsKey: Int64 = row["ts_key"]
            if try markDeleted(conversationRowID: conversation, tsKey: tsKey, in: db) {
                try db.execute(
                    sql: "DELETE FROM pending_deletion WHERE conversation_id = ? AND ts_key = ?",
                    arguments: [conversation, tsKey])
                applied += 1
            }
        }
        return applied
    }

    /// Brings thread parents' reply counts up to the replies the archive holds (a reply arriving through a sync
    /// page counts for its parent). Counts never go down: an export's own count may include replies not archived.
    static func refreshReplyCounts(conversationRowID: Int64, in db: Database) throws {
        try db.execute(
            sql: """
                UPDATE message AS p
                SET reply_count = \(replyCountSQL), flags = flags | \(MessageFlags.threadParent.rawValue)
                WHERE p.conversation_id = ?
                    AND p.ts_key IN (SELECT thread_key FROM message
                        WHERE conversation_id = ? AND thread_key IS NOT NULL AND thread_key != ts_key)
                    AND p.reply_count < \(replyCountSQL)
                """, arguments: [conversationRowID, conversationRowID])
    }

    /// `refreshReplyCounts` for the given threads only.
    ///
    /// - Complexity: O(replies of these threads × log n).
    static func refreshReplyCounts(conversationRowID: Int64, threadKeys: [Int64], in db: Database) throws {
        let statement = try db.cachedStatement(
            sql: """
                UPDATE message AS p
                SET reply_count = \(replyCountSQL), flags = flags | \(MessageFlags.threadParent.rawValue)
                WHERE p.conversation_id = ? AND p.ts_key = ? AND p.reply_count < \(replyCountSQL)
                """)
        for key in threadKeys {
            statement.setUncheckedArguments([conversationRowID, key])
            try statement.execute()
        }
    }

    /// The replies of parent `p` that are not deleted.
    private static let replyCountSQL = """
        (SELECT count(*) FROM message r
         WHERE r.conversation_id = p.conversation_id AND r.thread_key = p.ts_key AND r.id != p.id
            AND r.is_deleted = 0)
        """

    /// The conversations among `rowIDs` that hold at least one message.
    static func conversationsWithMessages(_ rowIDs: Set<Int64>, in db: Database) throws -> Set<Int64> {
        let statement = try db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM message WHERE conversation_id = ?)")
        return try Set(rowIDs.filter { try Bool.fetchOne(statement, arguments: [$0]) ?? false })
    }

    /// Applies a `reaction_added` / `reaction_removed` event, or keeps it until its message arrives.
    ///
    /// Idempotent: a user's reaction counts once; removing one that is not there changes nothing.
    static func react(
        conversationRowID: Int64, tsKey: Int64, name: String, userID: String, added: Bool, in db: Database
    ) throws {
        guard
            let id = try Int64.fetchOne(
                db, sql: "SELECT id FROM message WHERE conversation_id = ? AND ts_key = ?",
                arguments: [conversationRowID, tsKey])
        else {
            try db.execute(
                sql: """
                    INSERT INTO pending_reaction (conversation_id, ts_key, name, user_id, added) VALUES (?, ?, ?, ?, ?)
                    """, arguments: [conversationRowID, tsKey, name, userID, added])
            return
        }
        let row = try Row.fetchOne(
            db, sql: "SELECT count, users FROM reaction WHERE message_id = ? AND name = ?", arguments: [id, name])
        var users = JSONText.strings(row?["users"] ?? "[]") ?? []
        var count: Int = row?["count"] ?? 0
        if added {
            guard !users.contains(userID) else { return }
            users.append(userID)
            count += 1
        } else {
            guard let index = users.firstIndex(of: userID) else { return }
            users.remove(at: index)
            count -= 1
        }
        if count <= 0 || users.isEmpty && !added {
            try db.execute(sql: "DELETE FROM reaction WHERE message_id = ? AND name = ?", arguments: [id, name])
        } else {
            try db.execute(
                sql: "INSERT OR REPLACE INTO reaction (message_id, name, count, users) VALUES (?, ?, ?, ?)",
                arguments: [id, name, count, JSONText.array(users)])
        }
        let any = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM reaction WHERE message_id = ?)", arguments: [id])
        let bit = MessageFlags.hasReaction.rawValue
        try db.execute(
            sql: "UPDATE message SET flags = CASE WHEN ? THEN flags | \(bit) ELSE flags & ~\(bit) END WHERE id = ?",
            arguments: [any ?? false, id])
    }

    /// Applies kept reaction events whose messages have arrived, in arrival order.
    static func applyPendingReactions(in db: Database) throws {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT p.id, p.conversation_id, p.ts_key, p.name, p.user_id, p.added FROM pending_reaction p
                WHERE EXISTS (SELECT 1 FROM message m WHERE m.conversation_id = p.conversation_id
                    AND m.ts_key = p.ts_key)
                ORDER BY p.id
                """)
        for row in rows {
            try react(
                conversationRowID: row["conversation_id"], tsKey: row["ts_key"], name: row["name"],
                userID: row["user_id"], added: row["added"], in: db)
            try db.execute(sql: "DELETE FROM pending_reaction WHERE id = ?", arguments: [row["id"] as Int64])
        }
    }

    /// Records an imported page: its time span and where its `next_cursor` points; advances the sync state.
    static func recordPage(
        conversationRowID: Int64, newest: SlackTimestamp, oldestKey: Int64, nextKey: Int64?, cursor: String?,
        in db: Database
    ) throws {
        // Cached: a dump records a span per page (62k pages in a 1M-message tree; compiling both statements each
        // time, with GRDB's authorizer, was ~4% of the import's samples).
        try db.cachedStatement(
            sql: """
                INSERT INTO sync_page (conversation_id, newest_key, oldest_key, next_key) VALUES (?, ?, ?, ?)
                ON CONFLICT (conversation_id, newest_key) DO UPDATE SET oldest_key = min(oldest_key, excluded.oldest_key),
                    next_key = coalesce(excluded.next_key, next_key)
                """
        ).execute(arguments: [conversationRowID, newest.key, oldestKey, nextKey])
        try db.cachedStatement(
            sql: """
                INSERT INTO sync_state (conversation_id, newest_ts, newest_key, last_cursor) VALUES (?, ?, ?, ?)
                ON CONFLICT (conversation_id) DO UPDATE SET
                    newest_ts = CASE WHEN excluded.newest_key > coalesce(newest_key, 0) THEN excluded.newest_ts
                        ELSE newest_ts END,
                    newest_key = max(coalesce(newest_key, 0), excluded.newest_key),
                    last_cursor = coalesce(excluded.last_cursor, last_cursor)
                """
        ).execute(arguments: [conversationRowID, newest.string, newest.key, cursor])
    }
}

/// A stretch of history that imported pages point to but no imported page covers.
public struct SyncGap: Sendable, Codable, Equatable {
    public var conversationID: String
    public var conversation: String
    /// The newest missing message (the ts a page's `next_cursor` names).
    public var newestTS: String
    /// The newest message of the next older page that is there; nil when no older page was imported.
    public var olderTS: String?

    private enum CodingKeys: String, CodingKey {
        case conversation
        case conversationID = "conversation_id"
        case newestTS = "newest_missing_ts"
        case olderTS = "older_present_ts"
    }
}

extension SQLiteArchive {
    /// Page sequences that do not connect: a page's cursor names a first message no imported page starts with.
    ///
    /// - Complexity: O(p log p) over the pages recorded.
    package func syncGaps() throws -> [SyncGap] {
        try pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT c.slack_id, c.kind, c.name, p.next_key,
                        (SELECT max(o.newest_key) FROM sync_page o
                         WHERE o.conversation_id = p.conversation_id AND o.newest_key < p.next_key) AS older_key
                    FROM sync_page p JOIN conversation c ON c.id = p.conversation_id
                    WHERE p.next_key IS NOT NULL AND NOT EXISTS (
                        SELECT 1 FROM sync_page q WHERE q.conversation_id = p.conversation_id
                            AND q.newest_key = p.next_key)
                    ORDER BY c.slack_id, p.next_key DESC
                    """)
            return rows.map { row in
                let conversation = Conversation(
                    rowID: 0, id: row["slack_id"], kind: ConversationKind(rawValue: row["kind"]) ?? .channel,
                    name: row["name"])
                let older: Int64? = row["older_key"]
                return SyncGap(
                    conversationID: conversation.id, conversation: conversation.displayName,
                    newestTS: SlackTimestamp(key: row["next_key"]).string, olderTS: older.map { SlackTimestamp(key: $0).string })
            }
        }
    }
}

/// Bulk imports checkpoint the WAL themselves, between two of their transactions: this tracks the WAL's length.
///
/// A WAL hook replaces SQLite's automatic checkpoint on the connection while installed; `uninstall` hands the
/// connection back to automatic checkpoints.
final class WALLength {
    private let frames = UnsafeMutablePointer<Int32>.allocate(capacity: 1)

    init() { frames.initialize(to: 0) }
    deinit { frames.deallocate() }

    /// Frames in the WAL after the connection's last commit.
    var current: Int32 { frames.pointee }

    func install(on db: Database) {
        sqlite3_wal_hook(
            db.sqliteConnection,
            { context, _, _, frameCount in
                context?.assumingMemoryBound(to: Int32.self).pointee = frameCount
                return SQLITE_OK
            }, frames)
    }

    /// Back to SQLite's automatic checkpoints (every 1,000 pages, its default).
    func uninstall(from db: Database) throws {
        try db.execute(sql: "PRAGMA wal_autocheckpoint = 1000")
    }

    /// Copies committed frames into the database file without waiting for locks (PASSIVE).
    static func checkpoint(_ db: Database) throws {
        try db.execute(sql: "PRAGMA wal_checkpoint(PASSIVE)")
    }
}
