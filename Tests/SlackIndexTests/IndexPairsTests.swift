import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// The index's word pairs of "the" (tokenize = 'slackindex pairs', migration v20): a phrase finds exactly what it
/// finds in an index without pairs, and an archive indexed before them reads alike, then upgrades.
@Suite struct IndexPairsTests {
    /// Texts at the pairs' edges: "the" first, last, twice, beside accented, CJK and over-long words, after
    /// punctuation that splits a word, in capitals, and inside attachments' extra text.
    static let edgeTexts = [
        "the café the menu", "café the menu", "über the top of the stack", "node.the end", "e-mail the list",
        "THE The the end", "東京 the office the 東京", "the " + String(repeating: "x", count: 70) + " the tail",
        String(repeating: "y", count: 80) + " the end", "size the buffer", "the", "the the", "of the size",
        "resize the buffer size the other", "the2 the 2the", "it was the best of the worst", "the\u{301} end",
    ]

    static func archive() throws -> Archive {
        let messages = edgeTexts.enumerated().map { index, text in
            let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            return #"{"type":"message","user":"U1","text":"\#(escaped)","ts":"\#(1_700_000_000 + index).000100"}"#
        }
        let edges = try TestSupport.minimalExport(days: ["2023-11-14": "[" + messages.joined(separator: ",") + "]"])
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: edges.path)
        _ = try Importer(archive: archive).importExport(at: TestSupport.sampleFolder)
        return archive
    }

    /// Phrases around "the" in the archive's own texts (the word before, after, both, two before), and the edges.
    static func phrases(_ archive: Archive) throws -> [String] {
        let texts = try archive.pool.read { db in
            try String.fetchAll(db, sql: "SELECT text FROM message WHERE text LIKE '%the%' ORDER BY id")
        }
        var found = Set<String>()
        for text in texts {
            let words = text.split(whereSeparator: \.isWhitespace).map(String.init)
            for (i, word) in words.enumerated() where word.lowercased().hasPrefix("the") {
                for (a, b) in [(i - 1, i + 1), (i, i + 2), (i - 1, i + 2), (i - 2, i + 1)] where a >= 0 && b <= words.count {
                    found.insert(words[a..<b].joined(separator: " "))
                }
            }
        }
        return found.sorted() + edgeTexts
    }

    /// The row ids `match` finds in `table`.
    static func ids(_ table: String, _ match: String, _ db: Database) throws -> [Int64] {
        let name = table.split(separator: ".").last.map(String.init) ?? table
        return try Int64.fetchAll(
            db, sql: "SELECT rowid FROM \(table) WHERE \(name) MATCH ? ORDER BY rowid", arguments: [match])
    }

    @Test func phrasesFindWhatAnIndexWithoutPairsFinds() throws {
        let archive = try Self.archive()
        let phrases = try Self.phrases(archive)
        #expect(phrases.count > 1_000)
        try archive.pool.write { db in
            #expect(try SQLiteArchive.indexHasPairs(db))
            try db.execute(
                sql: """
                    CREATE VIRTUAL TABLE temp.plain_fts USING fts5(search_text, search_extra, tokenize = 'slackindex');
                    INSERT INTO temp.plain_fts (rowid, search_text, search_extra)
                        SELECT id, \(SearchTextColumn.sql("message")), search_extra FROM message WHERE is_deleted = 0;
                    """)
            var matched = 0
            for phrase in phrases {
                guard let literal = FTS5Query.literal(phrase) else { continue }
                for match in [literal, literal + " *", "search_text : " + literal, "\"deploy\" OR " + literal] {
                    let paired = try Self.ids("message_fts", match, db)
                    #expect(paired == (try Self.ids("temp.plain_fts", match, db)), "\(match)")
                    if !paired.isEmpty { matched += 1 }
                }
            }
            #expect(matched > 1_000)
            // The documents hold the pairs a phrase is asked as: `of the` finds the messages of the pair's token.
            let pairDocuments = try Int.fetchOne(
                db, sql: "SELECT doc FROM message_vocab WHERE term = ?", arguments: ["\u{2}of\u{2}the"])
            #expect(pairDocuments == (try Self.ids("message_fts", "\"of the\"", db)).count)
            #expect((pairDocuments ?? 0) > 10)
        }
        try IndexOracle.expectExact(archive)
        #expect(try archive.store.indexAgreement().agrees)
    }

    /// What a phrase query asks the index for: its words, each paired with the word before when one is "the"; the
    /// first word stays, so `^`, NEAR and `+` see the phrase's own length and start.
    @Test func phraseQueriesAskForPairs() {
        let cases: [(String, [String])] = [
            ("size of the buffer", ["size", "of", "\u{2}of\u{2}the", "\u{2}the\u{2}buffer"]),
            ("the size", ["the", "\u{2}the\u{2}size"]),
            ("The END", ["the", "\u{2}the\u{2}end"]),
            ("the the", ["the", "\u{2}the\u{2}the"]),
            ("café the 東京", ["cafe", "\u{2}cafe\u{2}the", "\u{2}the\u{2}東京"]),
            ("the", ["the"]),
            ("size of buffer", ["size", "of", "buffer"]),
        ]
        for (phrase, expected) in cases {
            #expect(IndexTokenizer.phraseQueryTokens(in: phrase).map(\.text) == expected, "\(phrase)")
        }
        // A stored text has no pairs outside the index (PostgreSQL's words, snippets).
        #expect(IndexTokenizer.tokens(in: "size the", stems: true).map(\.text) == ["size", "the"])
    }

    /// Phrases of the index's FTS5 syntax that place a phrase: its start (`^`), its distance (NEAR) and `+`.
    @Test func phrasesKeepTheirStartAndLength() throws {
        let archive = try Self.archive()
        try archive.pool.write { db in
            try db.execute(
                sql: """
                    CREATE VIRTUAL TABLE temp.plain_fts USING fts5(search_text, search_extra, tokenize = 'slackindex');
                    INSERT INTO temp.plain_fts (rowid, search_text, search_extra)
                        SELECT id, \(SearchTextColumn.sql("message")), search_extra FROM message WHERE is_deleted = 0;
                    """)
            let matches = [
                "^\"of the\"", "^\"the size\"", "NEAR(\"the\" \"of the\", 1)", "NEAR(\"size\" \"the buffer\", 0)",
                "\"of\" + \"of the\"", "\"resize\" + \"the buffer\"", "\"it was the\" + \"best\"", "^\"the the\"",
            ]
            for match in matches {
                #expect(try Self.ids("message_fts", match, db) == Self.ids("temp.plain_fts", match, db), "\(match)")
            }
            #expect(try !Self.ids("message_fts", "\"resize\" + \"the buffer\"", db).isEmpty)
        }
    }

    /// Every edge text is found by its whole text as a phrase, through the engine (among the edges' messages: the
    /// sample's come later).
    @Test func edgeTextsFindThemselves() throws {
        let archive = try Self.archive()
        let engine = SearchEngine(archive: archive)
        var options = SearchOptions()
        options.limit = 100
        for text in Self.edgeTexts {
            let quoted = "\"" + text + "\" before:2024-01-01"
            let hits = try engine.search(quoted, options: options).hits.map(\.message.text)
            #expect(hits.contains(text), "\(quoted)")
        }
    }

    /// An archive indexed before v20 (no pairs) is read as it is, read-only, with the same answers; a write-open
    /// re-creates the index with pairs, and the check and a fresh index agree with it.
    @Test func anArchiveIndexedBeforePairsReadsAlikeAndUpgrades() throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("archive.sqlite").path
        do {
            let archive = try Archive(path: path)
            _ = try Importer(archive: archive).importExport(at: TestSupport.sampleFolder)
        }
        // Prefixes too: read-only, before v21, they are expanded through the vocabulary; after, through the counts.
        let queries = [
            "\"of the\"", "\"the exception\"", "\"raise the\" error", "the -and", "\"to staging\"", "valu*", "dep*", "t*",
        ]
        func answers(_ archive: Archive) throws -> [[String]] { try IndexMergeTests.answers(archive, queries) }
        let expected = try answers(Archive(path: path))
        #expect(expected.filter { !$0.isEmpty }.count >= 4)
        // As before v20: the same index without pairs.
        try Archive(path: path).pool.write { db in
            try db.execute(
                sql: """
                    DROP TABLE message_vocab;
                    DROP TABLE message_fts;
                    CREATE VIRTUAL TABLE message_fts USING fts5(
                        search_text, search_extra, content = 'message', content_rowid = 'id', tokenize = 'slackindex');
                    CREATE VIRTUAL TABLE message_vocab USING fts5vocab(message_fts, 'row');
                    DELETE FROM grdb_migrations WHERE identifier = '\(Migrations.wordPairs)';
                    DELETE FROM grdb_migrations WHERE identifier = '\(Migrations.wordCounts)';
                    DROP TABLE message_word;
                    DROP VIEW \(IndexScope.contentView);
                    DELETE FROM grdb_migrations WHERE identifier = '\(Migrations.searchScope)';
                    """)
            try Migrations.rebuildIndexInSmallLeaves(db)
            #expect(try !SQLiteArchive.indexHasPairs(db))
        }
        let old = try Archive(path: path, access: .readOnly)
        #expect(try answers(old) == expected)
        #expect(try old.store.indexAgreement().agrees)
        let upgraded = try Archive(path: path)
        #expect(upgraded.store.upgradedOnOpen)
        #expect(try upgraded.pool.read { try SQLiteArchive.indexHasPairs($0) })
        #expect(try answers(upgraded) == expected)
        #expect(try upgraded.store.indexAgreement().agrees)
        try IndexOracle.expectExact(upgraded)
        #expect(try upgraded.store.wordCountMismatches(limit: 5).count == 0)
    }
}
