import GRDB
import Testing

@testable import SlackIndexStore

/// Checks the full-text index against the messages it indexes.
enum IndexOracle {
    /// Records an issue, with the first differences, when the index is not exactly what the messages say.
    static func expectExact(_ archive: Archive, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let found = try differences(in: archive)
        #expect(found.isEmpty, "the index differs from the stored messages: \(found)", sourceLocation: sourceLocation)
    }

    /// The entries (term, message, column, position) in which `message_fts` differs from an index built afresh,
    /// in a temporary table, from the stored messages that are not deleted: empty when the incremental index
    /// holds exactly what a rebuild would. (FTS5's `integrity-check` does not compare an external-content index
    /// with its content table: an entry left for an old text, or a missing one, passes it.)
    static func differences(in archive: Archive, limit: Int = 20) throws -> [String] {
        try archive.pool.write { db in
            try db.execute(
                sql: """
                    CREATE VIRTUAL TABLE temp.fresh_fts USING fts5(search_text, search_extra, tokenize = 'slackindex');
                    INSERT INTO temp.fresh_fts (rowid, search_text, search_extra)
                        SELECT id, \(SearchTextColumn.sql("message")), search_extra FROM message
                        WHERE is_deleted = 0;
                    CREATE VIRTUAL TABLE temp.fresh_entries USING fts5vocab(temp, fresh_fts, instance);
                    CREATE VIRTUAL TABLE temp.stored_entries USING fts5vocab(main, message_fts, instance);
                    """)
            let found = Result {
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT kind || ' ' || term || ' message ' || doc || ' column ' || col || ' at ' || offset
                        FROM (
                            SELECT 'only in the index:' AS kind, * FROM (
                                SELECT term, doc, col, offset FROM temp.stored_entries
                                EXCEPT SELECT term, doc, col, offset FROM temp.fresh_entries)
                            UNION ALL
                            SELECT 'missing from the index:', * FROM (
                                SELECT term, doc, col, offset FROM temp.fresh_entries
                                EXCEPT SELECT term, doc, col, offset FROM temp.stored_entries))
                        ORDER BY doc, term, col, offset LIMIT ?
                        """, arguments: [limit])
            }
            try db.execute(
                sql: """
                    DROP TABLE temp.stored_entries;
                    DROP TABLE temp.fresh_entries;
                    DROP TABLE temp.fresh_fts;
                    """)
            return try found.get()
        }
    }
}
