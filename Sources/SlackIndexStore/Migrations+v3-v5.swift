import CSlackTokenizer
import Foundation
import GRDB

extension Migrations {
    /// Migration v3 vocabulary.
    static func v3Vocabulary(_ db: Database) throws {
        // The index's vocabulary (term → documents), for benchmarks drawn from the archive's own words.
        try db.execute(sql: "CREATE VIRTUAL TABLE message_vocab USING fts5vocab(message_fts, 'row')")
    }

    /// Migration v4 index merge policy.
    static func v4IndexMergePolicy(_ db: Database) throws {
        // Bigger leaf pages and lazier merging: measured 30.9 s → 23.6 s for the 1M-message import (with the
        // larger WAL the importer sets), the index's writes being the largest part of the writer's time.
        try db.execute(
            sql: indexMergePolicy)
    }

    /// Migration v5 history index.
    static func v5HistoryIndex(_ db: Database) throws {
        // The channel view's own index: a history page reads 50 index entries and 50 rows, not the thread
        // replies in between (the newest pages of a busy channel went 0.18 → ~0.1 ms per page of 50).
        try db.execute(
            sql: """
                CREATE INDEX message_history ON message(conversation_id, ts_key)
                WHERE (flags & 96) != 0 AND is_deleted = 0
                """)
    }
}
