import PostgresNIO

extension PostgresArchive {
    /// The link's pool: open connections and those running a statement or holding a transaction.
    /// - Complexity: O(1).
    package func connectionUse() -> ConnectionUse {
        let use = link.use
        return ConnectionUse(open: use.open, inUse: use.inUse, limit: link.maxConnections)
    }

    /// Messages from the statistics collector (`pg_stat_user_tables.n_live_tup`: PostgreSQL keeps no count of its
    /// own here, and `count(*)` reads the whole table), and the sync bookkeeping's tables.
    /// - Complexity: O(r + t + c) for r open runs, t pending threads and c conversations; no message is read.
    package func archiveProgress() throws -> ArchiveProgress {
        let row = try link.query(
            """
            SELECT (SELECT coalesce(sum(n_live_tup), 0)::BIGINT FROM pg_stat_user_tables
                    WHERE relid = 'message'::regclass) AS messages,
                (SELECT count(*) FROM sync_run) AS runs, (SELECT coalesce(sum(pages), 0)::BIGINT FROM sync_run) AS pages,
                (SELECT count(*) FROM sync_thread) AS threads,
                (SELECT max(synced_ts::DOUBLE PRECISION) FROM sync_state) AS synced
            """
        ).first
        return ArchiveProgress(
            messages: Int(try row?.int("messages") ?? 0), syncRunsOpen: Int(try row?.int("runs") ?? 0),
            syncRunPages: Int(try row?.int("pages") ?? 0), syncThreadsPending: Int(try row?.int("threads") ?? 0),
            newestSyncedSeconds: try row?["synced"].decode(Double?.self))
    }
}
