import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// A small archive for running hostile queries through the real engine: two users, a channel, a DM, a thread,
/// reactions (with a skin tone), a file, links, mentions and CJK text.
private func fuzzArchive() throws -> Archive {
    let users = #"""
        [{"id": "U1", "name": "ann", "real_name": "Ann Lee", "team_id": "T1", "profile": {"display_name": "annie"}},
         {"id": "U2", "name": "bob", "real_name": "Bob Kim", "team_id": "T1"}]
        """#
    let general = #"""
        [{"type": "message", "user": "U1", "text": "hello world budget planning", "ts": "1714550400.000100"},
         {"type": "message", "user": "U2", "text": "Café naïve résumé <@U1> see <https://example.com/a|docs>",
          "ts": "1714550500.000100", "thread_ts": "1714550500.000100", "reply_count": 1,
          "reactions": [{"name": "+1::skin-tone-3", "users": ["U1"], "count": 1}]},
         {"type": "message", "user": "U1", "text": "日本語のテキスト 漢字 NEAR AND OR NOT body text",
          "ts": "1714550600.000100", "thread_ts": "1714550500.000100"},
         {"type": "message", "user": "U2", "text": "", "ts": "1714550700.000100", "upload": true,
          "files": [{"id": "F1", "name": "the quick brown fox 42.txt", "title": "fox",
                     "permalink": "https://acme.slack.com/files/U2/F1/fox.txt"}],
          "reactions": [{"name": "tada", "users": ["U2"], "count": 1}]}]
        """#
    let dm = #"[{"type": "message", "user": "U2", "text": "hi ann, budget?", "ts": "1714550800.000100"}]"#
    let folder = try TestSupport.minimalExport(
        days: ["2024-05-01": general],
        extra: [
            "users.json": users,
            "channels.json": #"[{"id": "C1", "name": "general", "created": "1433558319", "members": ["U1", "U2"]}]"#,
            "dms.json": #"[{"id": "D1", "created": 1433558319, "members": ["U1", "U2"]}]"#,
            "D1/2024-05-01.json": dm,
        ])
    let archive = try TestSupport.makeArchive()
    _ = try Importer(archive: archive).importExport(at: folder.path)
    return archive
}

/// Runs `text` through the engine; returns nil on success or an allowed `SearchError`, else a failure message.
private func unexpectedError(_ engine: SearchEngine, _ text: String, _ options: SearchOptions) -> String? {
    do {
        _ = try engine.search(text, options: options)
        _ = try engine.count(text, options: options)
        return nil
    } catch let error as SearchError {
        switch error {
        case .unknownUser, .ambiguousUser, .unknownConversation, .ambiguousConversation, .meUnknown,
             .nothingToSearch:
            return nil
        }
    } catch let error as DatabaseError {
        return "DatabaseError \(error.resultCode): \(error.message ?? "") SQL: \(error.sql ?? "")"
    } catch {
        return "unexpected \(type(of: error)): \(error)"
    }
}

@Suite struct QueryFuzzTests {
    // MARK: Parser level (ported from the standalone package's FuzzTests)

    @Test func validatorRejectsBrokenExpressions() {
        #expect(FTSSubsetValidator.isValid("\"a\" AND \"b\" *", joinedBy: "AND"))
        #expect(FTSSubsetValidator.isValid("\"say \"\"hi\"\"\"", joinedBy: "AND"))
        #expect(!FTSSubsetValidator.isValid("\"a\" OR \"b\"", joinedBy: "AND"))
        #expect(!FTSSubsetValidator.isValid("\"a", joinedBy: "AND"))
        #expect(!FTSSubsetValidator.isValid("\"a\"\"", joinedBy: "AND"))
        #expect(!FTSSubsetValidator.isValid("\"!!\"", joinedBy: "AND"))
        #expect(!FTSSubsetValidator.isValid("a", joinedBy: "AND"))
        #expect(!FTSSubsetValidator.isValid("", joinedBy: "AND"))
    }

    @Test func hostileTermsCompileToLiterals() {
        let terms: [SearchQuery.Term] = [
            .init(.word, "NEAR("), .init(.word, "body:x"), .init(.word, "a\"b"), .init(.word, "x\0y"),
            .init(.phrase, "AND OR NOT"), .init(.prefix, "^abc"), .init(.word, ""), .init(.word, "\"\""),
            .init(.word, "🎉"), .init(.word, "-"), .init(.word, "\u{301}"), .init(.word, "*", negated: true),
            .init(.word, "x", negated: true), .init(.phrase, "a\"b c", negated: true),
        ]
        let match = SearchQuery(terms: terms).ftsMatch()
        #expect(match.positive
            == "\"NEAR(\" AND \"body:x\" AND \"a\"\"b\" AND \"x y\" AND \"AND OR NOT\" AND \"^abc\" *")
        #expect(match.negative == "\"x\" OR \"a\"\"b c\"")
        #expect(FTSSubsetValidator.isValid(match.positive ?? "", joinedBy: "AND"))
        #expect(FTSSubsetValidator.isValid(match.negative ?? "", joinedBy: "OR"))
    }

    @Test func filterOnlyQueriesHaveNoPositiveExpression() {
        let match = QueryParser.parse("in:#general -draft", today: queryTestToday).ftsMatch()
        #expect(match.positive == nil)
        #expect(match.negative == "\"draft\"")
        let none = QueryParser.parse("from:me", today: queryTestToday).ftsMatch()
        #expect(none.positive == nil && none.negative == nil)
    }

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func randomQueriesParse(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        for iteration in 0..<2_000 {
            let input = QueryFuzzer.randomQuery(using: &rng)
            let query = QueryParser.parse(input, today: queryTestToday)
            let failure = "seed \(seed) #\(iteration): \(input.debugDescription)"
            #expect(query.terms.count <= QueryParser.maxTerms, "\(failure)")
            #expect(query.notes.count <= QueryParser.maxNotes + 1, "\(failure)")
            let match = query.ftsMatch()
            if let positive = match.positive {
                #expect(FTSSubsetValidator.isValid(positive, joinedBy: "AND"), "\(failure) -> \(positive)")
            }
            if let negative = match.negative {
                #expect(FTSSubsetValidator.isValid(negative, joinedBy: "OR"), "\(failure) -> \(negative)")
            }
            // Parsed terms always hold a letter or digit, so nothing is lost in compilation.
            #expect((match.positive == nil) == !query.terms.contains { !$0.negated }, "\(failure)")
            let again = QueryParser.parse(query.slackSyntax, today: queryTestToday)
            #expect(again.terms == query.terms, "\(failure) rendered \(query.slackSyntax.debugDescription)")
            #expect(again.filters == query.filters, "\(failure) rendered \(query.slackSyntax.debugDescription)")
        }
    }

    @Test func longInputsParseInLinearTime() {
        var rng = SeededGenerator(seed: 99)
        let inputs = [
            QueryFuzzer.longQuery(length: 100_000, using: &rng),
            String(repeating: "\"", count: 100_001),
            String(repeating: "a", count: 100_000) + "*",
            "\"" + String(repeating: "word ", count: 20_000),
            String(repeating: "-", count: 100_000),
            String(repeating: "from:\"x ", count: 12_500),
            String(repeating: "(*^", count: 33_334),
            String(repeating: "é", count: 100_000),
        ]
        for input in inputs {
            let start = ContinuousClock.now
            let query = QueryParser.parse(input, today: queryTestToday)
            let elapsed = ContinuousClock.now - start
            #expect(elapsed < .seconds(10))
            #expect(query.terms.count <= QueryParser.maxTerms)
            #expect(query.filters.count <= QueryParser.maxFilters)
            let match = query.ftsMatch()
            if let positive = match.positive {
                #expect(FTSSubsetValidator.isValid(positive, joinedBy: "AND"))
            }
        }
    }

    // MARK: The real engine (replaces the standalone package's FTSSQLiteTests)

    @Test func compiledQueriesMatchWhatTheyShould() throws {
        let archive = try TestSupport.makeArchive()
        let rows = [
            "hello world budget planning", "Café naïve résumé", "日本語のテキスト 漢字", "NEAR AND OR NOT body text",
            "the quick brown fox 42",
        ]
        let messages = rows.enumerated().map { index, text in
            #"{"type": "message", "user": "U1", "text": "\#(text)", "ts": "17145504\#(10 + index).000100"}"#
        }
        let folder = try TestSupport.minimalExport(days: ["2024-05-01": "[" + messages.joined(separator: ",") + "]"])
        _ = try Importer(archive: archive).importExport(at: folder.path)
        let engine = SearchEngine(archive: archive)
        var options = SearchOptions()
        options.me = "ann"
        let expectations: [(String, Int)] = [
            ("budg*", 1), ("budget", 1), ("\"hello world\"", 1), ("\"world hello\"", 0), ("cafe", 1),
            ("resume", 1), ("NEAR", 1), ("AND OR", 1), ("body:text", 1), ("-hello", 4), ("hello -budget", 0),
            ("-hello -fox", 3), ("from:me", 5), ("qu*", 0), ("qui*", 1), ("\"hello NEAR\"", 0), ("漢字", 1),
            ("fox 42", 1), ("\"brown fox\"*", 1), ("NEAR(", 1), ("AND", 1), ("x:y", 0),
        ]
        for (input, expected) in expectations {
            let (count, _) = try engine.count(input, options: options)
            #expect(count == expected, "\(input)")
            options.sort = .newest
            options.limit = 100
            let hits = try engine.search(input, options: options).hits
            #expect(hits.count == expected, "\(input)")
        }
        // Control: the archive does report FTS5 syntax errors for raw user text, so a `DatabaseError` escaping
        // the engine would be seen by the fuzz tests below.
        for raw in ["NEAR(", "x:y", "-x", "\"abc", "AND", "a OR", "^*"] {
            #expect(throws: DatabaseError.self, "\(raw) should fail") {
                try archive.pool.read { db in
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM message_fts WHERE message_fts MATCH ?",
                                     arguments: [raw])
                }
            }
        }
    }

    /// 5 × 2,000 = 10,000 seeded random queries through `SearchEngine.search` and `count` on a real archive: no
    /// crash, and only `SearchError`s escape (never a `DatabaseError`).
    @Test(arguments: [11, 12, 13, 14, 15] as [UInt64])
    func randomQueriesThroughTheEngine(seed: UInt64) throws {
        let engine = SearchEngine(archive: try fuzzArchive())
        var rng = SeededGenerator(seed: seed)
        var failures = 0
        for iteration in 0..<2_000 {
            let input = QueryFuzzer.randomQuery(using: &rng)
            var options = SearchOptions()
            options.sort = SearchSort.allCases[iteration % 3]
            options.me = iteration % 2 == 0 ? "ann" : nil
            options.limit = [0, 1, 20, 1_000][iteration % 4]
            options.candidateWindow = [1, 2_000][iteration % 2]
            options.timeZone = TimeZone(identifier: iteration % 2 == 0 ? "Asia/Tokyo" : "America/Los_Angeles")
                ?? .current
            if let problem = unexpectedError(engine, input, options) {
                failures += 1
                if failures <= 20 {
                    Issue.record("seed \(seed) #\(iteration) \(input.debugDescription): \(problem)")
                }
            }
        }
        #expect(failures == 0)
    }

    @Test func longAndBinaryInputsThroughTheEngine() throws {
        let engine = SearchEngine(archive: try fuzzArchive())
        var rng = SeededGenerator(seed: 7)
        var inputs = (0..<3).map { _ in QueryFuzzer.longQuery(length: 100_000, using: &rng) }
        inputs += [
            String(repeating: "a", count: 100_000) + "*",
            String(repeating: "\"", count: 100_001),
            (0..<200).map { "w\($0)" }.joined(separator: " "),
            (0..<200).map { "-w\($0)" }.joined(separator: " ") + " hello",
            (0..<200).map { _ in "from:@ann in:#general has::tada:" }.joined(separator: " "),
            String(decoding: (0..<4_096).map { UInt8(truncatingIfNeeded: $0 &* 37) }, as: UTF8.self),
            String(decoding: [0xFF, 0xFE, 0x22, 0xC0, 0x80, 0x2A, 0xED, 0xA0, 0x80, 0x3A], as: UTF8.self),
            "\0", "\"\0\"", "hello\0world", "body:hello", "search_extra:U1", "{search_text}: hello", "rowid:1",
        ]
        for input in inputs {
            var options = SearchOptions()
            options.me = "ann"
            for sort in SearchSort.allCases {
                options.sort = sort
                let start = ContinuousClock.now
                let problem = unexpectedError(engine, input, options)
                #expect(problem == nil, "\(input.prefix(60).debugDescription): \(problem ?? "")")
                #expect(ContinuousClock.now - start < .seconds(5))
            }
        }
    }
}
