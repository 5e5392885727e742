import GRDB

extension Archive {
    /// Runs an FTS5 MATCH expression (already compiled and quoted: never raw user text) ranked by bm25.
    ///
    /// `FROM message_fts CROSS JOIN message` so MATCH drives the plan (a plain JOIN let SQLite run MATCH per row).
    /// - Complexity: O(k log k) in the number of matching rows k (bm25 for each); see the query engine for the
    ///   plan that bounds very common terms.
    public func search(match: String, limit: Int) throws -> [SearchHit] {
        try pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(MessageRows.columns),
                        snippet(message_fts, 0, ?, ?, '…', 16), bm25(message_fts, 1.0, 0.4)
                    FROM message_fts CROSS JOIN message m ON m.id = message_fts.rowid
                    \(MessageRows.joins)
                    WHERE message_fts MATCH ? AND m.is_deleted = 0
                    ORDER BY bm25(message_fts, 1.0, 0.4), m.ts_key DESC
                    LIMIT ?
                    """, arguments: [Highlight.start, Highlight.end, match, max(0, limit)])
            return rows.map { row in
                SearchHit(
                    message: MessageRows.message(row), snippet: row[MessageRows.columnCount],
                    score: row[MessageRows.columnCount + 1])
            }
        }
    }
}
