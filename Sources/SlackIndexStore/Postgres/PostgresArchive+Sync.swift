import Foundation
import PostgresNIO

/// Sync's bookkeeping on PostgreSQL, as on SQLite (`SQLiteArchive+Sync.swift`): the run in progress, the checkpoint,
/// the threads to fetch. The writes happen in the import session's transaction with the page they describe
/// (`PostgresImportSession.record`), so a sync killed at any point resumes where it stopped.
extension PostgresArchive {
    package func syncRun(conversationRowID: Int64) throws -> SyncRun? {
        try link.query(
            "SELECT oldest_ts, top_ts, low_ts, cursor, pages FROM sync_run WHERE conversation_id = $1",
            .of(conversationRowID)
        ).first.map {
            SyncRun(
                oldestTS: try $0.optionalString("oldest_ts"), topTS: try $0.optionalString("top_ts"),
                lowTS: try $0.optionalString("low_ts"), cursor: try $0.optionalString("cursor"),
                pages: Int(try $0.int("pages")))
        }
    }

    /// Where an incremental history fetch starts (see `SQLiteArchive.syncCheckpoint`).
    package func syncCheckpoint(conversationRowID: Int64) throws -> String? {
        if let synced = try link.query(
            "SELECT synced_ts FROM sync_state WHERE conversation_id = $1", .of(conversationRowID)
        ).first, let ts = try synced.optionalString("synced_ts") {
            return ts
        }
        return try link.query(
            """
            SELECT ts FROM message
            WHERE conversation_id = $1 AND (flags & 96) <> 0 AND NOT is_deleted
                AND (flags & 32) <> 0 AND (flags & \(MessageFlags.savedFromSearch.rawValue)) = 0
            ORDER BY ts_key DESC LIMIT 1
            """, .of(conversationRowID)
        ).first.map { try $0.string("ts") }
    }

    package func syncThreads() throws -> [SyncThread] {
        try link.query(
            "SELECT conversation_id, thread_ts, oldest_ts, cursor FROM sync_thread ORDER BY conversation_id, thread_ts"
        ).map {
            SyncThread(
                conversationRowID: try $0.int("conversation_id"), threadTS: try $0.string("thread_ts"),
                oldestTS: try $0.optionalString("oldest_ts"), cursor: try $0.optionalString("cursor"))
        }
    }

    /// Stretches of history that imported pages point to but no imported page covers (see
    /// `SQLiteArchive.syncGaps`).
    package func syncGaps() throws -> [SyncGap] {
        try link.query(
            """
            SELECT c.slack_id, c.kind, c.name, p.next_key,
                (SELECT max(o.newest_key) FROM sync_page o
                 WHERE o.conversation_id = p.conversation_id AND o.newest_key < p.next_key) AS older_key
            FROM sync_page p JOIN conversation c ON c.id = p.conversation_id
            WHERE p.next_key IS NOT NULL AND NOT EXISTS (
                SELECT 1 FROM sync_page q WHERE q.conversation_id = p.conversation_id AND q.newest_key = p.next_key)
            ORDER BY c.slack_id, p.next_key DESC
            """
        ).map { row in
            let conversation = Conversation(
                rowID: 0, id: try row.string("slack_id"),
                kind: ConversationKind(rawValue: try row.string("kind")) ?? .channel, name: try row.string("name"))
            return SyncGap(
                conversationID: conversation.id, conversation: conversation.displayName,
                newestTS: SlackTimestamp(key: try row.int("next_key")).string,
                olderTS: try row.optionalInt("older_key").map { SlackTimestamp(key: $0).string })
        }
    }

    package func dropSyncThread(conversationRowID: Int64, threadTS: String) throws {
        _ = try reportingFailure {
            try link.query(
                "DELETE FROM sync_thread WHERE conversation_id = $1 AND thread_ts = $2",
                .of(conversationRowID, threadTS))
        }
    }

    /// Records a sync's progress after a page, in the transaction open on `link` (see `SQLiteArchive.record`).
    func record(_ progress: SyncProgress, conversationRowID: Int64) throws {
        switch progress {
        case .history(let run, let finished, let threads):
            for thread in threads {
                try queueSyncThread(conversationRowID: conversationRowID, threadTS: thread.ts, latestReply: thread.latestReply)
            }
            if finished {
                try link.query("DELETE FROM sync_run WHERE conversation_id = $1", .of(conversationRowID))
                guard let topTS = run.topTS, let key = SlackTimestamp.parseKey(topTS) else { return }
                try link.query(
                    """
                    INSERT INTO sync_state (conversation_id, newest_ts, newest_key, synced_ts) VALUES ($1, $2, $3, $2)
                    ON CONFLICT (conversation_id) DO UPDATE SET synced_ts = excluded.synced_ts,
                        newest_ts = CASE WHEN excluded.newest_key > coalesce(sync_state.newest_key, 0)
                            THEN excluded.newest_ts ELSE sync_state.newest_ts END,
                        newest_key = greatest(coalesce(sync_state.newest_key, 0), excluded.newest_key)
                    """, .of(conversationRowID, topTS, key))
            } else {
                var binds = PostgresBindings.of(conversationRowID)
                binds.append(run.oldestTS)
                binds.append(run.topTS)
                binds.append(run.lowTS)
                binds.append(run.cursor)
                binds.append(Int64(run.pages))
                try link.query(
                    """
                    INSERT INTO sync_run (conversation_id, oldest_ts, top_ts, low_ts, cursor, pages)
                    VALUES ($1, $2, $3, $4, $5, $6)
                    ON CONFLICT (conversation_id) DO UPDATE SET oldest_ts = excluded.oldest_ts,
                        top_ts = excluded.top_ts, low_ts = excluded.low_ts, cursor = excluded.cursor,
                        pages = excluded.pages
                    """, binds)
            }
        case .thread(let threadTS, let cursor):
            if let cursor {
                try link.query(
                    "UPDATE sync_thread SET cursor = $1 WHERE conversation_id = $2 AND thread_ts = $3",
                    .of(cursor, conversationRowID, threadTS))
            } else {
                try link.query(
                    "DELETE FROM sync_thread WHERE conversation_id = $1 AND thread_ts = $2",
                    .of(conversationRowID, threadTS))
            }
        }
    }

    /// Queues a thread for `conversations.replies` unless the archive already holds its `latestReply` (see
    /// `SQLiteArchive.queueSyncThread`: only plain replies count as held).
    private func queueSyncThread(conversationRowID: Int64, threadTS: String, latestReply: String?) throws {
        guard let threadKey = SlackTimestamp.parseKey(threadTS) else { return }
        let newestReply = try link.query(
            """
            SELECT ts FROM message
            WHERE conversation_id = $1 AND thread_key = $2 AND ts_key <> $2 AND (flags & 64) = 0
            ORDER BY ts_key DESC LIMIT 1
            """, .of(conversationRowID, threadKey)
        ).first.map { try $0.string("ts") }
        if let latestReply, let newestReply, let a = SlackTimestamp.parseKey(latestReply),
            let b = SlackTimestamp.parseKey(newestReply), b >= a
        {
            return
        }
        var binds = PostgresBindings.of(conversationRowID, threadTS)
        binds.append(newestReply)
        try link.query(
            """
            INSERT INTO sync_thread (conversation_id, thread_ts, oldest_ts, cursor) VALUES ($1, $2, $3, NULL)
            ON CONFLICT (conversation_id, thread_ts) DO NOTHING
            """, binds)
    }

    /// Applies a `reaction_added` / `reaction_removed` event to the message's reactions, or keeps it until the
    /// message arrives (as `SQLiteArchive.react`: a user's reaction counts once; removing one that is not there
    /// changes nothing). Returns the message's row id when it changed.
    @discardableResult
    func react(conversationRowID: Int64, tsKey: Int64, name: String, userID: String, added: Bool) throws -> Int64? {
        guard
            let row = try link.query(
                "SELECT id, reactions FROM message WHERE conversation_id = $1 AND ts_key = $2",
                .of(conversationRowID, tsKey)
            ).first
        else {
            try link.query(
                """
                INSERT INTO pending_reaction (conversation_id, ts_key, name, user_id, added)
                VALUES ($1, $2, $3, $4, $5)
                """, .of(conversationRowID, tsKey, name, userID, added))
            return nil
        }
        var reactions = try (try row.optionalString("reactions")).map {
            try JSONDecoder().decode([StoredReaction].self, from: Data($0.utf8))
        } ?? []
        let index = reactions.firstIndex { $0.name == name }
        var reaction = index.map { reactions[$0] } ?? StoredReaction(name: name, count: 0, users: [])
        if added {
            guard !reaction.users.contains(userID) else { return nil }
            reaction.users.append(userID)
            reaction.count += 1
        } else {
            guard let at = reaction.users.firstIndex(of: userID) else { return nil }
            reaction.users.remove(at: at)
            reaction.count -= 1
        }
        let gone = reaction.count <= 0 || reaction.users.isEmpty && !added
        switch (index, gone) {
        case (let at?, true): reactions.remove(at: at)
        case (let at?, false): reactions[at] = reaction
        case (nil, false): reactions.append(reaction)
        case (nil, true): break
        }
        let json = reactions.isEmpty ? nil : String(decoding: try JSONEncoder().encode(reactions), as: UTF8.self)
        let bit = MessageFlags.hasReaction.rawValue
        var binds = PostgresBindings()
        binds.append(json)
        binds.append(!reactions.isEmpty)
        binds.append(conversationRowID)
        binds.append(tsKey)
        try link.query(
            """
            UPDATE message SET reactions = $1::jsonb,
                flags = CASE WHEN $2 THEN flags | \(bit) ELSE flags & ~\(bit)::bigint END
            WHERE conversation_id = $3 AND ts_key = $4
            """, binds)
        return try row.int("id")
    }

    /// Applies kept reaction events whose messages have arrived, in arrival order.
    func applyPendingReactions() throws {
        let rows = try link.query(
            """
            SELECT p.conversation_id, p.id, p.ts_key, p.name, p.user_id, p.added FROM pending_reaction p
            WHERE EXISTS (SELECT 1 FROM message m WHERE m.conversation_id = p.conversation_id AND m.ts_key = p.ts_key)
            ORDER BY p.id
            """)
        for row in rows {
            let conversation = try row.int("conversation_id")
            try react(
                conversationRowID: conversation, tsKey: try row.int("ts_key"), name: try row.string("name"),
                userID: try row.string("user_id"), added: try row.bool("added"))
            try link.query(
                "DELETE FROM pending_reaction WHERE conversation_id = $1 AND id = $2",
                .of(conversation, try row.int("id")))
        }
    }
}
