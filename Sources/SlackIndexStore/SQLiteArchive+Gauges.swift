import GRDB

extension SQLiteArchive {
    /// GRDB's pool says only how many readers it may open (plus the one writer), not how many are open or busy.
    /// - Complexity: O(1).
    package func connectionUse() -> ConnectionUse {
        ConnectionUse(limit: pool.configuration.maximumReaderCount + 1)
    }

    /// The kept message counts (`message_count`, one row per conversation) and the sync bookkeeping's tables.
    /// - Complexity: O(c + r + t) for c conversations, r open runs and t pending threads; no message is read.
    package func archiveProgress() throws -> ArchiveProgress {
        try pool.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT (SELECT total(messages) FROM message_count) AS messages,
                        (SELECT count(*) FROM sync_run) AS runs, (SELECT total(pages) FROM sync_run) AS pages,
                        (SELECT count(*) FROM sync_thread) AS threads,
                        (SELECT max(CAST(synced_ts AS REAL)) FROM sync_state) AS synced
                    """)
            return ArchiveProgress(
                messages: Int((row?["messages"] as Double?) ?? 0), syncRunsOpen: row?["runs"] ?? 0,
                syncRunPages: Int((row?["pages"] as Double?) ?? 0), syncThreadsPending: row?["threads"] ?? 0,
                newestSyncedSeconds: row?["synced"])
        }
    }
}
