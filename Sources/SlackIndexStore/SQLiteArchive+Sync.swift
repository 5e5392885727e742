import Foundation
import GRDB

/// Bookkeeping for live sync (`slackindex sync`): where each conversation's history is complete, the run in
/// progress, and the threads whose replies are still to fetch. Every write here happens in the same transaction as
/// the page it describes, so a sync killed at any point resumes exactly where it stopped.

/// A history run in progress for one conversation.
package struct SyncRun: Sendable, Equatable {
    /// The `oldest` the run asks for (exact ts string); nil for a full history.
    package var oldestTS: String?
    /// The newest ts the run has seen (its first page's newest message).
    package var topTS: String?
    /// The oldest ts the run has stored, where it continues if the cursor is refused.
    package var lowTS: String?
    /// The next page's cursor.
    package var cursor: String?
    /// Pages stored so far.
    package var pages: Int

    package init(oldestTS: String?, topTS: String? = nil, lowTS: String? = nil, cursor: String? = nil, pages: Int = 0) {
        self.oldestTS = oldestTS
        self.topTS = topTS
        self.lowTS = lowTS
        self.cursor = cursor
        self.pages = pages
    }
}

/// A thread whose replies are to be fetched.
package struct SyncThread: Sendable, Equatable {
    package var conversationRowID: Int64
    package var threadTS: String
    /// Replies newer than this are fetched (the newest reply held when queued); nil for all.
    package var oldestTS: String?
    package var cursor: String?
}

extension SQLiteArchive {
    /// The run in progress for a conversation, if a sync stopped during its history.
    /// - Complexity: O(1), one primary-key lookup.
    package func syncRun(conversationRowID: Int64) throws -> SyncRun? {
        try pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT oldest_ts, top_ts, low_ts, cursor, pages FROM sync_run WHERE conversation_id = ?",
                arguments: [conversationRowID]
            ).map {
                SyncRun(oldestTS: $0["oldest_ts"], topTS: $0["top_ts"], lowTS: $0["low_ts"], cursor: $0["cursor"],
                    pages: $0["pages"])
            }
        }
    }

    /// Where an incremental history fetch starts: the point a finished sync reached; before any, the newest
    /// top-level message the archive holds (from an export or pages), ignoring thread broadcasts (they also arrive
    /// through `conversations.replies`) and messages saved from remote search: neither says that the history
    /// before them is complete. Nil when there is none.
    /// - Complexity: O(1) with a finished sync; else O(log n) on the history index plus the skipped rows.
    package func syncCheckpoint(conversationRowID: Int64) throws -> String? {
        try pool.read { db in
            if let synced = try String.fetchOne(
                db, sql: "SELECT synced_ts FROM sync_state WHERE conversation_id = ?", arguments: [conversationRowID])
            {
                return synced
            }
            return try String.fetchOne(
                db,
                sql: """
                    SELECT ts FROM message
                    WHERE conversation_id = ? AND (flags & 96) != 0 AND is_deleted = 0
                        AND (flags & 32) != 0 AND (flags & \(MessageFlags.savedFromSearch.rawValue)) = 0
                    ORDER BY ts_key DESC LIMIT 1
                    """, arguments: [conversationRowID])
        }
    }

    /// Records a sync's progress after a page (same transaction as the page).
    static func record(_ progress: SyncProgress, conversationRowID: Int64, in db: Database) throws {
        switch progress {
        case .history(let run, let finished, let threads):
            // Always queued, even when the sync fetches no threads: the checkpoint moves past these parents, so
            // a later run only finds them in the queue.
            for thread in threads {
                try queueSyncThread(
                    conversationRowID: conversationRowID, threadTS: thread.ts, latestReply: thread.latestReply, in: db)
            }
            if finished {
                try finishSyncRun(conversationRowID: conversationRowID, topTS: run.topTS, in: db)
            } else {
                try saveSyncRun(run, conversationRowID: conversationRowID, in: db)
            }
        case .thread(let threadTS, let cursor):
            try advanceSyncThread(conversationRowID: conversationRowID, threadTS: threadTS, cursor: cursor, in: db)
        }
    }

    /// Removes a thread from the sync queue (its conversation is gone, or the API refused it).
    package func dropSyncThread(conversationRowID: Int64, threadTS: String) throws {
        try pool.write { db in
            try SQLiteArchive.advanceSyncThread(conversationRowID: conversationRowID, threadTS: threadTS, cursor: nil, in: db)
        }
    }

    /// Records a history run's progress after a page (same transaction as the page).
    static func saveSyncRun(_ run: SyncRun, conversationRowID: Int64, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO sync_run (conversation_id, oldest_ts, top_ts, low_ts, cursor, pages) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (conversation_id) DO UPDATE SET oldest_ts = excluded.oldest_ts, top_ts = excluded.top_ts,
                    low_ts = excluded.low_ts, cursor = excluded.cursor, pages = excluded.pages
                """, arguments: [conversationRowID, run.oldestTS, run.topTS, run.lowTS, run.cursor, run.pages])
    }

    /// Ends a history run: the conversation's history is complete up to `topTS` (when the run saw any message).
    static func finishSyncRun(conversationRowID: Int64, topTS: String?, in db: Database) throws {
        try db.execute(sql: "DELETE FROM sync_run WHERE conversation_id = ?", arguments: [conversationRowID])
        guard let topTS, let key = SlackTimestamp.parseKey(topTS) else { return }
        try db.execute(
            sql: """
                INSERT INTO sync_state (conversation_id, newest_ts, newest_key, synced_ts) VALUES (?, ?, ?, ?)
                ON CONFLICT (conversation_id) DO UPDATE SET synced_ts = excluded.synced_ts,
                    newest_ts = CASE WHEN excluded.newest_key > coalesce(newest_key, 0) THEN excluded.newest_ts
                        ELSE newest_ts END,
                    newest_key = max(coalesce(newest_key, 0), excluded.newest_key)
                """, arguments: [conversationRowID, topTS, key, topTS])
    }

    /// Queues a thread for `conversations.replies` unless the archive already holds its `latestReply`.
    ///
    /// Only plain replies count as held: they arrive with their whole thread (an export, a replies fetch), while a
    /// `thread_broadcast` reply also arrives alone through the history and says nothing about the replies before it.
    static func queueSyncThread(
        conversationRowID: Int64, threadTS: String, latestReply: String?, in db: Database
    ) throws {
        guard let threadKey = SlackTimestamp.parseKey(threadTS) else { return }
        let newestReply = try String.fetchOne(
            db,
            sql: """
                SELECT ts FROM message
                WHERE conversation_id = ? AND thread_key = ? AND ts_key != ? AND (flags & 64) = 0
                ORDER BY ts_key DESC LIMIT 1
                """, arguments: [conversationRowID, threadKey, threadKey])
        if let latestReply, let newestReply, let a = SlackTimestamp.parseKey(latestReply),
            let b = SlackTimestamp.parseKey(newestReply), b >= a
        {
            return
        }
        try db.execute(
            sql: """
                INSERT INTO sync_thread (conversation_id, thread_ts, oldest_ts, cursor) VALUES (?, ?, ?, NULL)
                ON CONFLICT (conversation_id, thread_ts) DO NOTHING
                """, arguments: [conversationRowID, threadTS, newestReply])
    }

    /// Threads still to fetch, in a stable order.
    /// - Complexity: O(t) for t queued threads.
    package func syncThreads() throws -> [SyncThread] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT conversation_id, thread_ts, oldest_ts, cursor FROM sync_thread
                    ORDER BY conversation_id, thread_ts
                    """
            ).map {
                SyncThread(
                    conversationRowID: $0["conversation_id"], threadTS: $0["thread_ts"], oldestTS: $0["oldest_ts"],
                    cursor: $0["cursor"])
            }
        }
    }

    /// Records a thread's next cursor, or removes it from the queue when `cursor` is nil (same transaction as the
    /// page).
    static func advanceSyncThread(conversationRowID: Int64, threadTS: String, cursor: String?, in db: Database) throws {
        if let cursor {
            try db.execute(
                sql: "UPDATE sync_thread SET cursor = ? WHERE conversation_id = ? AND thread_ts = ?",
                arguments: [cursor, conversationRowID, threadTS])
        } else {
            try db.execute(
                sql: "DELETE FROM sync_thread WHERE conversation_id = ? AND thread_ts = ?",
                arguments: [conversationRowID, threadTS])
        }
    }

    /// Stores users and conversations a sync listed; keeps known members when the listing has none (Slack's
    /// `conversations.list` does not give members). Returns how many users were added and how many
    /// conversations were added, updated and left unchanged.
    package func storeListings(
        users: [UserInput], conversations: [ConversationInput], workspace: WorkspaceInput?
    ) throws -> ListingCounts {
        try pool.write { db in
            try SQLiteArchive.storeListings(users: users, conversations: conversations, workspace: workspace, in: db)
        }
    }

    /// `storeListings` in `db`'s open transaction (an import session's).
    static func storeListings(
        users: [UserInput], conversations: [ConversationInput], workspace: WorkspaceInput?, in db: Database
    ) throws -> ListingCounts {
        let (usersAdded, _) = try SQLiteArchive.upsertUsers(users, in: db)
        let workspaceID = try workspace.map {
            try SQLiteArchive.upsertWorkspace(teamID: $0.teamID, domain: $0.domain, in: db)
        }
        var outcomes: [UpsertOutcome: Int] = [:]
        for var input in conversations {
            if input.members.isEmpty,
                let known = try String.fetchOne(
                    db, sql: "SELECT members FROM conversation WHERE slack_id = ?", arguments: [input.slackID]),
                let members = JSONText.strings(known)
            {
                input.members = members
            }
            let outcome = try SQLiteArchive.upsertConversation(input, workspaceID: workspaceID, in: db).outcome
            outcomes[outcome, default: 0] += 1
        }
        return (
            usersAdded, outcomes[.added, default: 0], outcomes[.updated, default: 0], outcomes[.unchanged, default: 0]
        )
    }

    /// Names from id → name maps (as dumping tools write `{"C0VFAZVVNIR": "general", "U0AAAAAAAA1": "ann"}`):
    /// a conversation the archive lacks is created with that name and `kind`, one still named by its id takes the
    /// name; a user the archive lacks becomes a placeholder with that handle, a placeholder takes the handle.
    /// Names an export, a listing or a sync gave are never changed: a map says less than they do.
    /// Returns how many placeholders and conversations were added, and how many conversations were named or left
    /// as they were.
    package func storeNames(
        users: [String: String], conversations: [String: (name: String, kind: ConversationKind)]
    ) throws -> NameCounts {
        try pool.write { db in try SQLiteArchive.storeNames(users: users, conversations: conversations, in: db) }
    }

    /// `storeNames` in `db`'s open transaction (an import session's).
    static func storeNames(
        users: [String: String], conversations: [String: (name: String, kind: ConversationKind)], in db: Database
    ) throws -> NameCounts {
        var placeholders = 0
        let user = try db.cachedStatement(
            sql: """
                INSERT INTO user (id, handle, is_placeholder) VALUES (?, ?, 1)
                ON CONFLICT (id) DO UPDATE SET handle = excluded.handle
                WHERE user.is_placeholder = 1 AND user.handle IS NOT excluded.handle
                """)
        for (id, handle) in users.sorted(by: { $0.key < $1.key }) {
            try user.execute(arguments: [id, handle])
            placeholders += db.changesCount
        }
        if placeholders > 0 { try SQLiteArchive.bumpUsersVersion(in: db) }
        var added = 0
        var named = 0
        var unchanged = 0
        let rename = try db.cachedStatement(
            sql: "UPDATE conversation SET name = ? WHERE slack_id = ? AND name = slack_id AND name IS NOT ?")
        for (id, entry) in conversations.sorted(by: { $0.key < $1.key }) {
            let input = ConversationInput(slackID: id, kind: entry.kind, name: entry.name)
            let exists = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM conversation WHERE slack_id = ?)", arguments: [id])
            if exists != true {
                _ = try SQLiteArchive.upsertConversation(input, workspaceID: nil, in: db)
                added += 1
            } else {
                try rename.execute(arguments: [entry.name, id, entry.name])
                named += db.changesCount
                unchanged += 1 - db.changesCount
            }
        }
        return (placeholders, added, named, unchanged)
    }
}

extension SQLiteArchive {
    /// The handles of the users among `ids` that the archive has (placeholders included).
    package func handles(of ids: some Collection<String>) throws -> [String: String] {
        guard !ids.isEmpty else { return [:] }
        return try pool.read { db in
            var handles: [String: String] = [:]
            let statement = try db.cachedStatement(sql: "SELECT handle FROM user WHERE id = ?")
            for id in ids {
                if let handle = try String.fetchOne(statement, arguments: [id]) { handles[id] = handle }
            }
            return handles
        }
    }
}
