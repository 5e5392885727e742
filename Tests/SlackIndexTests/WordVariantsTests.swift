import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// Word variants: the inflectional stemmer, the stem tokens the tokenizer adds, the ranking that puts exact forms first,
/// and what stays exact (quotes, prefixes, other scripts).
@Suite struct WordVariantsTests {
    // MARK: - Stemmer

    /// Inflectional stems: Porter2's steps 0–1c from the algorithm's description (plurals, -ed, -ing, final y), and
    /// derivations left as their own words (`deployment`, `iteration`, `universe`: issue 54's over-stemming).
    @Test(arguments: [
        ("deploy", "deploy"), ("deployed", "deploy"), ("deploying", "deploy"), ("deploys", "deploy"),
        ("deployment", "deployment"), ("deployments", "deployment"), ("assignment", "assignment"),
        ("assignments", "assignment"), ("submit", "submit"),
        ("submitted", "submit"), ("submitting", "submit"), ("running", "run"), ("runs", "run"),
        ("happy", "happi"), ("happiness", "happiness"), ("caresses", "caress"),
        ("ponies", "poni"), ("pony", "poni"), ("ties", "tie"), ("cats", "cat"), ("gas", "gas"), ("this", "this"),
        ("hoping", "hope"), ("hopping", "hop"), ("agreed", "agree"), ("feed", "feed"), ("cry", "cri"),
        ("cries", "cri"), ("cried", "cri"), ("news", "news"), ("skies", "sky"), ("dying", "die"), ("added", "add"),
        ("national", "national"), ("communication", "communication"), ("yelling", "yell"), ("Deployed", "deploy"),
        ("formats", "format"), ("formatted", "format"), ("formatting", "format"), ("formation", "formation"),
        ("iterators", "iterator"), ("iterator", "iterator"), ("iteration", "iteration"), ("iterables", "iterable"),
        ("university", "universiti"), ("universities", "universiti"), ("universe", "universe"),
        ("universal", "universal"),
    ])
    func stems(word: String, stem: String) {
        #expect(WordVariants.stem(word) == stem)
    }

    @Test(arguments: ["ab", "café", "deploy2", "x86", "東京", "москва", "", String(repeating: "a", count: 65)])
    func leavesOtherWordsAlone(word: String) {
        #expect(WordVariants.stem(word) == nil)
        #expect(WordVariants.variantTokens(of: word) == nil)
    }

    @Test func variantTokensNameTheStemAndTheStemWord() {
        #expect(WordVariants.variantTokens(of: "deploy") == ["\u{1}deploy"])
        #expect(WordVariants.variantTokens(of: "deployed") == ["\u{1}deploy", "deploy"])
        // "value" is its own stem: a message holding the word "value" is a variant too.
        #expect(WordVariants.variantTokens(of: "values") == ["\u{1}value", "value"])
        #expect(WordVariants.variantTokens(of: "iterators") == ["\u{1}iterator", "iterator"])
    }

    // MARK: - Search

    static let day = #"""
        [{"type":"message","user":"U1","text":"we deploy on fridays","ts":"1700000000.000100"},
         {"type":"message","user":"U1","text":"we deployed on fridays","ts":"1700000000.000200"},
         {"type":"message","user":"U1","text":"still deploying on fridays","ts":"1700000000.000300"},
         {"type":"message","user":"U1","text":"the deployment on fridays","ts":"1700000000.000400"},
         {"type":"message","user":"U1","text":"one assignment here","ts":"1700000000.000500"},
         {"type":"message","user":"U1","text":"two assignments there","ts":"1700000000.000600"},
         {"type":"message","user":"U1","text":"déployé en français","ts":"1700000000.000700"},
         {"type":"message","user":"U1","text":"submitting and submitted","ts":"1700000000.000800"},
         {"type":"message","user":"U1","text":"deployer2 x86 builds","ts":"1700000000.000900"}]
        """#

    static func archive() throws -> Archive {
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.minimalExport(days: ["2023-11-14": day]).path)
        return archive
    }

    static func search(_ archive: Archive, _ query: String, variants: Bool = true) throws -> [String] {
        var options = SearchOptions()
        options.wordVariants = variants
        return try SearchEngine(archive: archive).search(query, options: options).hits.map(\.message.ts)
    }

    @Test func aWordFindsItsVariantsWithTheExactFormFirst() throws {
        let archive = try Self.archive()
        let hits = try Self.search(archive, "deploy")
        #expect(Set(hits) == ["1700000000.000100", "1700000000.000200", "1700000000.000300"])
        #expect(hits.first == "1700000000.000100")
        // A derivation is a word of its own, both ways.
        #expect(try Self.search(archive, "deployment") == ["1700000000.000400"])
        let deployed = try Self.search(archive, "deployed")
        #expect(Set(deployed) == Set(hits))
        #expect(deployed.first == "1700000000.000200")
        #expect(try Self.search(archive, "deploying").first == "1700000000.000300")
    }

    @Test func pluralsAndIngForms() throws {
        let archive = try Self.archive()
        #expect(Set(try Self.search(archive, "assignment")) == ["1700000000.000500", "1700000000.000600"])
        #expect(try Self.search(archive, "assignments").first == "1700000000.000600")
        #expect(try Self.search(archive, "submit") == ["1700000000.000800"])
    }

    @Test func quotesPrefixesAndExclusions() throws {
        let archive = try Self.archive()
        #expect(try Self.search(archive, "\"deploy\"") == ["1700000000.000100"])
        #expect(try Self.search(archive, "\"we deployed\"") == ["1700000000.000200"])
        #expect(Set(try Self.search(archive, "deployi*")) == ["1700000000.000300"])
        // -word excludes every variant of the word.
        #expect(try Self.search(archive, "fridays -deploy") == ["1700000000.000400"])
        #expect(try Self.search(archive, "fridays -\"deploy\"").count == 3)
        // Off: exact words only.
        #expect(try Self.search(archive, "deploy", variants: false) == ["1700000000.000100"])
    }

    @Test func otherLanguagesAndTokensWithDigitsAreNotStemmed() throws {
        let archive = try Self.archive()
        // déployé folds to deploye (accents still fold) but is not stemmed: no English variant finds it.
        #expect(try Self.search(archive, "déployé") == ["1700000000.000700"])
        #expect(try Self.search(archive, "DEPLOYÉ") == ["1700000000.000700"])
        #expect(try Self.search(archive, "deployer2") == ["1700000000.000900"])
        let deploy = try Self.search(archive, "deploy")
        #expect(!deploy.contains("1700000000.000700") && !deploy.contains("1700000000.000900"))
    }

    @Test func variantsAreHighlightedInSnippets() throws {
        var options = SearchOptions()
        options.wordVariants = true
        let hits = try SearchEngine(archive: Self.archive()).search("deploy", options: options).hits
        let snippet = try #require(hits.first { $0.message.ts == "1700000000.000200" }).snippet
        #expect(snippet.contains(Highlight.start + "deployed" + Highlight.end))
    }

    // MARK: - Ranking

    /// Messages holding the typed form come first whatever they score, scores stay in hit order, and without a typed
    /// set the order is by score, newest first on ties.
    @Test func typedFormsRankFirstWithScoresInOrder() {
        let day: Int64 = 86_400
        let candidates: [(id: Int64, seconds: Int64, relevance: Double)] = [
            (1, 10 * day, 9.0), (2, 10 * day, 0.0), (3, 9 * day, 4.0), (4, 10 * day, 0.0), (5, 1 * day, 7.5),
        ]
        let typed = Relevance.order(candidates, exact: [2, 3])
        #expect(typed.map(\.id) == [3, 2, 1, 5, 4])
        #expect(typed.map(\.score) == typed.map(\.score).sorted(by: >))
        #expect(Set(typed.map(\.score)).count == typed.count)
        #expect(Relevance.order(candidates, exact: nil).map(\.id) == [1, 5, 3, 4, 2])
        #expect(Relevance.order(candidates, exact: [1, 2, 3, 4, 5]).map(\.id) == [1, 5, 3, 4, 2])
        #expect(Relevance.order([], exact: [1]).isEmpty)
    }

    /// SQLite's bm25 (`a`) and `slackindex_rank` without groups (`b`) for each matching row, every column weighted
    /// (the scope column too: `bm25` counts its tokens in each length, and the rank then does).
    static let bm25AndRank =
        "bm25(message_fts, 1.0, 0.4, 1.0) AS a, slackindex_rank(message_fts, '', 1.0, 1.0, 0.4, 1.0) AS b"

    /// Each row's `a` (bm25) equals its `b` (the rank), to rounding.
    static func expectBM25(_ rows: [Row], sourceLocation: SourceLocation = #_sourceLocation) {
        for row in rows {
            let a: Double = row["a"]
            let b: Double = row["b"]
            #expect(abs(a - b) < 1e-9 * max(1, abs(a)), sourceLocation: sourceLocation)
        }
    }

    /// With no variants (each phrase its own group, weight 1) `slackindex_rank` is SQLite's bm25, row for row.
    @Test(arguments: ["fridays", "we OR the", "\"on fridays\"", "deploy* OR assignment", "fridays NOT deployed"])
    func rankWithoutGroupsIsBM25(match: String) throws {
        let archive = try Self.archive()
        let rows = try archive.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.bm25AndRank) FROM message_fts WHERE message_fts MATCH ?
                    """, arguments: [match])
        }
        #expect(!rows.isEmpty)
        Self.expectBM25(rows)
    }

    /// The rank's cached document lengths (`slack_rank.c`, `si_lengths`) are never used after the archive changed:
    /// messages ranked once, then edited by sync pages (new texts of other lengths) through the writer, are ranked
    /// again by the same reader connection and still score exactly SQLite's bm25, which reads each length afresh.
    @Test func rankedLengthsAreNotReusedAfterAnEdit() throws {
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.sampleFolder)
        let match = "the OR to OR and OR of OR is OR we"
        func ranked() throws -> [(id: Int64, bm25: Double, rank: Double, size: Data)] {
            try archive.pool.read { db in
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT f.rowid AS id, \(Self.bm25AndRank), d.sz AS sz
                        FROM message_fts f JOIN message_fts_docsize d ON d.id = f.rowid
                        WHERE message_fts MATCH ?
                        """, arguments: [match]
                ).map { ($0["id"], $0["a"], $0["b"], $0["sz"]) }
            }
        }
        let before = try ranked()
        _ = try ranked()  // every length now cached
        let edits = Importer(archive: archive).importPaths([TestSupport.samplePages])
        #expect(edits.messagesUpdated > 0)
        let after = try ranked()
        let sizesBefore = Dictionary(before.map { ($0.id, $0.size) }, uniquingKeysWith: { a, _ in a })
        let changed = after.filter { row in sizesBefore[row.id].map { $0 != row.size } ?? false }
        #expect(!changed.isEmpty, "no ranked message changed its length: the test shows nothing")
        for row in after {
            #expect(abs(row.bm25 - row.rank) < 1e-9 * max(1, abs(row.bm25)), "row \(row.id)")
        }
    }

    /// Nor are lengths ranked inside a write transaction that is then rolled back: the writer ranks a message whose
    /// text it has just made longer, rolls back, and ranks it again with its old length.
    @Test func lengthsRankedInARolledBackWriteAreNotReused() throws {
        let archive = try Self.archive()
        let sql = """
            SELECT f.rowid AS id, \(Self.bm25AndRank) FROM message_fts f WHERE message_fts MATCH 'fridays'
            """
        let rows = try archive.pool.writeWithoutTransaction { db -> [Row] in
            let target = try #require(try Row.fetchOne(
                db, sql: "SELECT id, search_text, search_extra, search_scope FROM message_search WHERE id IN (SELECT rowid FROM message_fts WHERE message_fts MATCH 'fridays') LIMIT 1"))
            let id: Int64 = target["id"]
            let text: String = target["search_text"]
            let extra: String = target["search_extra"]
            let scope: String = target["search_scope"]
            try db.inTransaction {
                try db.execute(
                    sql: """
                        INSERT INTO message_fts(message_fts, rowid, search_text, search_extra, search_scope)
                        VALUES('delete', ?, ?, ?, ?)
                        """,
                    arguments: [id, text, extra, scope])
                try db.execute(
                    sql: "INSERT INTO message_fts(rowid, search_text, search_extra, search_scope) VALUES(?, ?, ?, ?)",
                    arguments: [id, text + String(repeating: " and more words", count: 20), extra, scope])
                _ = try Row.fetchAll(db, sql: sql)
                return .rollback
            }
            return try Row.fetchAll(db, sql: sql)
        }
        #expect(!rows.isEmpty)
        Self.expectBM25(rows)
    }

    /// With "~CAP" a phrase found CAP times is counted as the documented estimate (CAP × all documents over the
    /// documents up to its CAP-th), computed here apart and given as `@N`; below the cap, or when the CAP-th lies
    /// too far in to place cheaply, it counts exactly; a malformed "~" is skipped whole. The estimate goes by
    /// position among the messages, so a message years older than the rest (a gap in time) does not move it.
    @Test func cappedCountsEstimateFromTheShareOfMessages() throws {
        let archive = try TestSupport.sampleArchive()
        let match = "\"to\" AND \"deploy\""  // `to`: in a quarter of the messages (`the`, in over half, has an IDF of ~0 either way)
        func scores(_ spec: String) throws -> [Int64: Double] {
            try archive.pool.read { db in
                try Row.fetchAll(
                    db, sql: "SELECT rowid, slackindex_rank(message_fts, ?, 1.0, 1.0, 0.4) AS r FROM message_fts WHERE message_fts MATCH ?",
                    arguments: [spec, match]
                ).reduce(into: [:]) { $0[$1["rowid"]] = $1["r"] }
            }
        }
        func estimate(cap: Int) throws -> (estimate: Double, total: Int) {
            try archive.pool.read { db in
                let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM message_fts WHERE message_fts MATCH 'to'") ?? 0
                let documents = try Int.fetchOne(db, sql: "SELECT count(*) FROM message_fts_docsize") ?? 0
                let last = try Int64.fetchOne(
                    db, sql: "SELECT rowid FROM message_fts WHERE message_fts MATCH 'to' ORDER BY rowid LIMIT 1 OFFSET ?",
                    arguments: [cap - 1]) ?? 0
                let before = try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM message_fts_docsize WHERE id <= ?", arguments: [last]) ?? 1
                return (Double(cap) * Double(documents) / Double(before), total)
            }
        }
        let cap = 50
        let (estimated, total) = try estimate(cap: cap)
        #expect(total > cap * 4)
        #expect(estimated > Double(total) / 2 && estimated < Double(total) * 2, "\(estimated) for \(total)")
        let counted = try scores("0e 1e")
        #expect(counted.count > 3)
        #expect(try scores("~\(total + 1) 0e 1e") == counted, "below the cap: counted")
        #expect(try scores("~x1 0e 1e") == counted, "a malformed cap is skipped whole")
        let capped = try scores("~\(cap) 0e 1e")
        let given = try scores("0e@\(Int(estimated.rounded())) 1e")
        #expect(capped != counted)
        #expect(Set(capped.keys) == Set(given.keys))
        for (row, score) in capped {
            #expect(abs(score - (given[row] ?? 0)) < 1e-4 * abs(score), "\(row)")
        }

        // A message ten years older than the rest: the estimate by time would have fallen to about the cap.
        let ids = try archive.pool.read { db in try Int64.fetchAll(db, sql: "SELECT rowid FROM message_fts ORDER BY rowid") }
        let oldest = try #require(ids.first)
        try archive.pool.write { db in
            try db.execute(
                sql: "INSERT INTO message_fts (rowid, search_text, search_extra) VALUES (?, 'an early word', '')",
                arguments: [oldest - 10 * 365 * 86_400 * MessageID.perSecond])
        }
        let (afterGap, _) = try estimate(cap: cap)
        #expect(afterGap > Double(total) / 2 && afterGap < Double(total) * 2, "\(afterGap) for \(total)")
        let cappedAfterGap = try scores("~\(cap) 0e 1e")
        let givenAfterGap = try scores("0e@\(Int(afterGap.rounded())) 1e")
        for (row, score) in cappedAfterGap {
            #expect(abs(score - (givenAfterGap[row] ?? 0)) < 1e-4 * abs(score), "\(row)")
        }
        // What the engine writes: the cap, for IDF ranks only.
        #expect(SQLiteArchive.countingAtMost("0e 1e") == "~\(SQLiteArchive.idfCountCap) 0e 1e")
        #expect(SQLiteArchive.countingAtMost("!0e 0v") == "!0e 0v")
    }

    /// Document counts given in the spec (`@N`, a prefix's words from the vocabulary) are used instead of counting,
    /// and give the same score as counting when they are right; excluded phrases (`x`) change no score.
    @Test func givenCountsAndExcludedPhrasesScoreAsCounted() throws {
        let archive = try Self.archive()
        func scores(_ match: String, _ spec: String) throws -> [Int64: Double] {
            try archive.pool.read { db in
                try Row.fetchAll(
                    db, sql: "SELECT rowid, slackindex_rank(message_fts, ?, 1.0, 1.0, 0.4) AS r FROM message_fts WHERE message_fts MATCH ?",
                    arguments: [spec, match]
                ).reduce(into: [:]) { $0[$1["rowid"]] = $1["r"] }
            }
        }
        let words = ["deploy", "deployed", "assignment", "assignments"]
        let documents = try archive.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT term, doc FROM message_vocab WHERE term IN ('deploy', 'deployed', 'assignment', 'assignments')")
                .reduce(into: [String: Int]()) { $0[$1["term"]] = $1["doc"] }
        }
        let counts = try words.map { try #require(documents[$0]) }
        let match = "(" + words.map { "\"\($0)\"" }.joined(separator: " OR ") + ") NOT \"here\""
        let counted = try scores(match, "0e 1e 2e 3e")
        #expect(counted.count == 3)
        let given = counts.indices.map { "\($0)e@\(counts[$0])" }.joined(separator: " ")
        #expect(try scores(match, given + " 4x") == counted)
        #expect(try scores(match, given) == counted)
        // A wrong count is used as given (the counts are not read again).
        #expect(try scores(match, "0e@\(counts[0] + 40) 1e 2e 3e") != counted)
        // What the engine writes: the prefix's words with their counts, the exclusion marked.
        var search = ResolvedSearch()
        search.wordVariants = false
        search.words = [SearchTerm(.prefix, "depl"), SearchTerm(.word, "on")]
        search.excluded = [SearchTerm(.word, "fridays")]
        let prefix = [FTS5Query.PrefixWord(text: "deploy", documents: 7), .init(text: "deployed", documents: 3)]
        #expect(FTS5Query.rankSpec(search, expansions: ["depl": prefix]) == "0e@7 1e@3 2e 3x")
    }

    /// `!` (one term): the same order as with the IDF, without counting documents.
    @Test func rankWithoutIDFKeepsTheOrder() throws {
        let archive = try Self.archive()
        let rows = try archive.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT rowid, slackindex_rank(message_fts, '0e 0v', 0.2, 1.0, 0.4) AS a,
                        slackindex_rank(message_fts, '!0e 0v', 0.2, 1.0, 0.4) AS b
                    FROM message_fts WHERE message_fts MATCH ?
                    """, arguments: ["(\"deploy\" OR \"\u{1}deploy\")"])
        }
        #expect(rows.count == 3)
        let byA = rows.sorted { ($0["a"] as Double, $0["rowid"] as Int64) < ($1["a"] as Double, $1["rowid"] as Int64) }
        let byB = rows.sorted { ($0["b"] as Double, $0["rowid"] as Int64) < ($1["b"] as Double, $1["rowid"] as Int64) }
        #expect(byA.map { $0["rowid"] as Int64 } == byB.map { $0["rowid"] as Int64 })
    }

    @Test(arguments: ["", "0", "0x", "999999999999v 0e", "\u{1}", "-1e -2v", "0e 0e 0e 0e 0e", "!", "!!0e", "!0e 1e"])
    func oddRankSpecsDoNotFail(spec: String) throws {
        let archive = try Self.archive()
        let count = try archive.pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT slackindex_rank(message_fts, ?, 2.5) FROM message_fts WHERE message_fts MATCH ?",
                arguments: [spec, "fridays OR deploy"]
            ).count
        }
        #expect(count == 4)
    }

    /// 3,000 seeded hostile queries with variants on: no crash, and only `SearchError`s escape.
    @Test func hostileQueriesWithVariants() throws {
        let engine = SearchEngine(archive: try Self.archive())
        var rng = SeededGenerator(seed: 18)
        var failures: [String] = []
        for iteration in 0..<3_000 {
            let input = iteration % 7 == 0 ? "deploy\u{1}s depl\u{1}oy* \"\u{1}deploy\"" : QueryFuzzer.randomQuery(using: &rng)
            var options = SearchOptions()
            options.wordVariants = true
            options.variantWeight = [0.5, -1, .nan, 2][iteration % 4]
            options.sort = SearchSort.allCases[iteration % 3]
            do {
                _ = try engine.search(input, options: options)
                _ = try engine.count(input, options: options)
            } catch is SearchError {
            } catch {
                failures.append("\(input.debugDescription): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    // MARK: - Existing archives

    /// An archive indexed by the previous tokenizer (no stem tokens) is re-indexed when opened for writing.
    @Test func anOlderIndexIsRebuiltOnOpen() throws {
        let archive = try Self.archive()
        let path = archive.path
        try archive.pool.write { db in
            try db.execute(sql: "INSERT INTO message_fts (message_fts) VALUES ('delete-all')")
            try db.execute(sql: "UPDATE meta SET value = 'slackindex-1 icu-72.1' WHERE key = 'tokenizer'")
        }
        #expect(try Self.search(archive, "deploy").isEmpty)
        #expect(throws: StoreError.self) { try Archive(path: path, access: .readOnly) }
        let reopened = try Archive(path: path)
        #expect(try Self.search(reopened, "deploy").count == 3)
    }
}
