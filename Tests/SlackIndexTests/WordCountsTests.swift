import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// The kept counts of each word's messages (`message_word`, migration v21, `WordCounts`): after every kind of
/// write they are what FTS5's vocabulary counts, a prefix search reads them, and `check` finds and repairs drift.
@Suite struct WordCountsTests {
    /// The kept counts that differ from the vocabulary's, both ways (empty when they agree).
    static func drift(_ archive: Archive) throws -> [String] {
        try archive.pool.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT 'kept ' || word || ' ' || messages FROM (
                        SELECT word, messages FROM message_word
                        EXCEPT SELECT term, doc FROM message_vocab WHERE term >= char(4) AND doc > 0)
                    UNION ALL
                    SELECT 'indexed ' || term || ' ' || doc FROM (
                        SELECT term, doc FROM message_vocab WHERE term >= char(4) AND doc > 0
                        EXCEPT SELECT word, messages FROM message_word)
                    LIMIT 10
                    """)
        }
    }

    /// Two files carried by messages that are not deleted.
    static func twoFileIDs(_ archive: Archive) throws -> [String] {
        let ids = try archive.pool.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT f.file_id FROM file f JOIN message m ON m.id = f.message_id WHERE m.is_deleted = 0
                    GROUP BY f.file_id ORDER BY f.file_id LIMIT 2
                    """)
        }
        #expect(ids.count == 2)
        return ids
    }

    static func count(_ word: String, _ archive: Archive) throws -> Int? {
        try archive.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT messages FROM message_word WHERE word = ?", arguments: [word])
        }
    }

    /// An export in 100-message transactions (no merge), pages with edits and deletions, file text added to the
    /// messages carrying a file, and a rolled-back transaction: the counts follow each.
    @Test func theCountsFollowEveryWrite() throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("archive.sqlite").path
        let archive = Archive(store: try SQLiteArchive(path: path, mergeIndexAfter: 1_000_000))
        _ = try Importer(archive: archive, commitMessages: 100).importExport(at: TestSupport.sampleFolder)
        #expect(try Self.count("deploy", archive) ?? 0 > 10)
        #expect(try Self.drift(archive) == [])
        let pages = Importer(archive: archive).importPaths([TestSupport.samplePages])
        #expect(pages.messagesUpdated > 0, "\(pages)")
        #expect(try archive.pool.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM message WHERE is_deleted") ?? 0 } > 0)
        #expect(try Self.drift(archive) == [])

        let fileIDs = try Self.twoFileIDs(archive)
        let carrying = try archive.store.indexFileText(fileID: fileIDs[0], text: "quokkaword quokkaword")
        #expect(carrying > 0)
        #expect(try Self.count("quokkaword", archive) == carrying)

        // A transaction that counted a message's words and rolled back leaves no count behind.
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try archive.pool.write { db in
                try MessageWriter.indexInsert(id: 1, "rolledbackword", "", scope: (0, nil), in: db)
                throw Stop()
            }
        }
        try archive.store.indexFileText(fileID: fileIDs[1], text: "wombatword")
        #expect(try Self.count("rolledbackword", archive) == nil)
        #expect(try Self.count("wombatword", archive) ?? 0 > 0)
        #expect(try Self.drift(archive) == [])
        try IndexOracle.expectExact(archive)
    }

    /// A file's text that fills the disk: SQLite rolls the transaction back on its own (GRDB tells no observer),
    /// so the counts made before the failing statement must be forgotten, not stored with the next write.
    @Test func aWriteThatFillsTheDiskLeavesNoCounts() throws {
        let archive = try TestSupport.sampleArchive()
        let fileIDs = try Self.twoFileIDs(archive)
        try archive.store.limitSizeForTesting(pages: try archive.store.pageCount())
        let words = (0..<20_000).map { "filler\($0)word" }.joined(separator: " ")
        #expect(throws: (any Error).self) { try archive.store.indexFileText(fileID: fileIDs[0], text: "numbatword " + words) }
        try archive.store.limitSizeForTesting(pages: nil)
        // The next writes neither carry the failed one's counts nor are refused for them.
        try archive.pool.write { db in try db.execute(sql: "DELETE FROM web_session WHERE 0") }
        try archive.store.indexFileText(fileID: fileIDs[1], text: "bilbyword")
        #expect(try Self.count("numbatword", archive) == nil)
        #expect(try Self.count("bilbyword", archive) ?? 0 > 0)
        #expect(try Self.drift(archive) == [])
    }

    /// Texts at the tokenizer's edges (over-long words cut at 64 bytes, accents, CJK, "the" pairs), and a file's text
    /// repeating words of its message's own text (a message holding a word in both columns counts once).
    @Test func edgeTextsAndWordsInBothColumnsCountOnce() throws {
        let archive = try IndexPairsTests.archive()
        #expect(try Self.drift(archive) == [])
        let (fileID, text) = try #require(
            try archive.pool.read { db in
                try Row.fetchOne(
                    db,
                    sql: """
                        SELECT f.file_id, m.text FROM file f JOIN message m ON m.id = f.message_id
                        WHERE m.is_deleted = 0 AND m.text GLOB '*[a-z][a-z][a-z]*' ORDER BY m.id LIMIT 1
                        """
                ).map { ($0[0] as String, $0[1] as String) }
            })
        try archive.store.indexFileText(fileID: fileID, text: text + " " + String(repeating: "q", count: 90))
        #expect(try Self.drift(archive) == [])
        try IndexOracle.expectExact(archive)
    }

    /// A write path that forgot to store its counts cannot commit: the transaction fails and writes nothing.
    @Test func aTransactionWithCountsNotStoredDoesNotCommit() throws {
        let archive = try TestSupport.sampleArchive()
        let before = try Self.count("deploy", archive)
        #expect(throws: DatabaseError.self) {
            try archive.pool.write { db in
                try MessageWriter.indexInsert(id: 1, "deploy forgotten", "", scope: (0, nil), in: db)
            }
        }
        #expect(try Self.count("deploy", archive) == before)
        #expect(try Self.count("forgotten", archive) == nil)
        try IndexOracle.expectExact(archive)
    }

    /// A prefix expands to the kept words, most frequent first, with their counts: the vocabulary's answer.
    @Test func aPrefixReadsTheKeptCounts() throws {
        let archive = try TestSupport.sampleArchive()
        for stem in ["dep", "t", "valu", "zzz", "a"] {
            let kept = try archive.pool.read { db in try SQLiteArchive.prefixExpansion(stem, limit: 64, db: db) }
            let vocabulary = try archive.pool.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT term, doc FROM message_vocab WHERE term >= ? AND term < ?
                        ORDER BY doc DESC, term LIMIT 64
                        """, arguments: [stem, stem + "\u{10FFFF}"]
                ).map { FTS5Query.PrefixWord(text: $0[0], documents: $0[1]) }
            }
            #expect(kept.words == vocabulary, "\(stem)")
            #expect(kept.total >= kept.words.count)
        }
        // Read from the table: a count changed there changes the order.
        let before = try archive.pool.read { db in try SQLiteArchive.prefixExpansion("dep", limit: 64, db: db) }
        let last = try #require(before.words.last)
        try archive.pool.write { db in
            try db.execute(sql: "UPDATE message_word SET messages = 10000000 WHERE word = ?", arguments: [last.text])
        }
        let after = try archive.pool.read { db in try SQLiteArchive.prefixExpansion("dep", limit: 64, db: db) }
        #expect(after.words.first == FTS5Query.PrefixWord(text: last.text, documents: 10_000_000))
    }

    /// Counts changed by hand are found, named and recounted by `check --repair`.
    @Test func checkFindsAndRepairsDriftedCounts() throws {
        let archive = try TestSupport.sampleArchive()
        #expect(try ArchiveChecker(archive: archive).run().healthy)
        try archive.pool.write { db in
            try db.execute(
                sql: """
                    UPDATE message_word SET messages = messages + 1 WHERE word = 'deploy';
                    DELETE FROM message_word WHERE word = 'staging';
                    INSERT INTO message_word (word, messages) VALUES ('neverindexed', 3);
                    """)
        }
        let report = try ArchiveChecker(archive: archive).run()
        let finding = try #require(report.findings.first { $0.area == "words" })
        #expect(finding.count == 3)
        #expect(finding.examples.contains { $0.hasPrefix("deploy: kept") }, "\(finding.examples)")
        #expect(report.findings.allSatisfy { $0.area == "words" }, "\(report.findings.map(\.area))")
        let outcome = try ArchiveChecker(archive: archive).repair(report)
        #expect(outcome.recountedWords && !outcome.rebuiltIndex)
        #expect(try ArchiveChecker(archive: archive).run().healthy)
        #expect(try Self.drift(archive) == [])
    }
}
