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

    /// What differs between `message_fts` and an index built afresh, in a temporary table, from the stored messages
    /// that are not deleted: its entries (term, message, column, position), its documents (a message's row id and
    /// token counts, `message_fts_docsize`), its totals (document count and tokens per column) and the kept counts
    /// of each word's messages (`message_word`). Empty when the
    /// incremental index holds what a rebuild would. (FTS5's `integrity-check` does not compare an external-content
    /// index with its content table: an entry left for an old text, a missing one, or an empty document with no
    /// message all pass it.)
    static func differences(in archive: Archive, limit: Int = 20) throws -> [String] {
        try archive.pool.write { db in
            let drop = """
                DROP TABLE IF EXISTS temp.stored_entries;
                DROP TABLE IF EXISTS temp.fresh_entries;
                DROP TABLE IF EXISTS temp.fresh_fts;
                DROP TABLE IF EXISTS temp.fresh_words;
                """
            // The archive's own tokenizer: word pairs since migration v20.
            let tokenizer = try SQLiteArchive.indexHasPairs(db) ? SQLiteArchive.indexTokenizer : "slackindex"
            // And the scope column since v22.
            let scoped = try IndexScope.indexed(db)
            try db.execute(
                sql: drop + """
                    CREATE VIRTUAL TABLE temp.fresh_fts USING fts5(
                        search_text, search_extra\(scoped ? ", " + IndexScope.column : ""),
                        tokenize = '\(tokenizer)');
                    INSERT INTO temp.fresh_fts (rowid, search_text, search_extra\(scoped ? ", " + IndexScope.column : ""))
                        SELECT id, \(SearchTextColumn.sql("message")), search_extra\(scoped ? ", " + IndexScope.definition : "")
                        FROM message
                        WHERE is_deleted = 0;
                    CREATE VIRTUAL TABLE temp.fresh_entries USING fts5vocab(temp, fresh_fts, instance);
                    CREATE VIRTUAL TABLE temp.stored_entries USING fts5vocab(main, message_fts, instance);
                    CREATE VIRTUAL TABLE temp.fresh_words USING fts5vocab(temp, fresh_fts, row);
                    """)
            // The kept word counts (`message_word`, v21) against the fresh index's.
            let words =
                try db.tableExists("message_word")
                ? """
                UNION ALL
                SELECT 3, 0, 'word count kept but not fresh: ' || word || ' in ' || messages FROM (
                    SELECT word, messages FROM main.message_word
                    EXCEPT SELECT term, doc FROM temp.fresh_words WHERE term >= char(4) AND doc > 0)
                UNION ALL
                SELECT 3, 0, 'word count fresh but not kept: ' || term || ' in ' || doc FROM (
                    SELECT term, doc FROM temp.fresh_words WHERE term >= char(4) AND doc > 0
                    EXCEPT SELECT word, messages FROM main.message_word)
                """ : ""
            let found = Result {
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT line FROM (
                            SELECT 0 AS part, doc, kind || ' ' || term || ' message ' || doc || ' column ' || col
                                || ' at ' || offset AS line
                            FROM (
                                SELECT 'only in the index:' AS kind, * FROM (
                                    SELECT term, doc, col, offset FROM temp.stored_entries
                                    EXCEPT SELECT term, doc, col, offset FROM temp.fresh_entries)
                                UNION ALL
                                SELECT 'missing from the index:', * FROM (
                                    SELECT term, doc, col, offset FROM temp.fresh_entries
                                    EXCEPT SELECT term, doc, col, offset FROM temp.stored_entries))
                            UNION ALL
                            SELECT 1, id, 'document only in the index: ' || id || ' sizes ' || hex(sz) FROM (
                                SELECT id, sz FROM main.message_fts_docsize
                                EXCEPT SELECT id, sz FROM temp.fresh_fts_docsize)
                            UNION ALL
                            SELECT 1, id, 'document missing from the index: ' || id || ' sizes ' || hex(sz) FROM (
                                SELECT id, sz FROM temp.fresh_fts_docsize
                                EXCEPT SELECT id, sz FROM main.message_fts_docsize)
                            UNION ALL
                            SELECT 2, 0, 'totals differ: ' || hex(stored.block) || ' against ' || hex(fresh.block)
                            FROM main.message_fts_data AS stored, temp.fresh_fts_data AS fresh
                            WHERE stored.id = 1 AND fresh.id = 1 AND stored.block != fresh.block
                            \(words))
                        ORDER BY part, doc, line LIMIT ?
                        """, arguments: [limit])
            }
            try db.execute(sql: drop)
            return try found.get()
        }
    }
}

extension TestSupport {
    /// Back to the search index as v21 left it: two columns, no scope (`IndexScope`), migration v22 not applied,
    /// the index rebuilt. The tests that fake older archives start here; an archive without the scope is left as it is.
    static func undoSearchScope(_ db: Database) throws {
        guard try IndexScope.indexed(db) else { return }
        try db.execute(
            sql: """
                DROP TABLE message_vocab;
                DROP TABLE message_fts;
                CREATE VIRTUAL TABLE message_fts USING fts5(
                    search_text, search_extra, content = 'message', content_rowid = 'id',
                    tokenize = '\(SQLiteArchive.indexTokenizer)');
                \(Migrations.indexMergePolicy)
                CREATE VIRTUAL TABLE message_vocab USING fts5vocab(message_fts, 'row');
                DROP VIEW \(IndexScope.contentView);
                DELETE FROM grdb_migrations WHERE identifier = '\(Migrations.searchScope)';
                """)
        try Migrations.rebuildIndexInSmallLeaves(db)
    }
}
