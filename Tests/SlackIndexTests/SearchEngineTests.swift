import Foundation
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// The sample export imported once, and the same export read by the brute-force oracle. Read-only: shared by the
/// table rows below (importing 3,000 messages per row would cost ~0.2 s each).
private struct SampleFixture: Sendable {
    let engine: SearchEngine
    let oracle: SampleOracle

    static let shared: Result<SampleFixture, any Error> = Result {
        let archive = try TestSupport.sampleArchive()
        return SampleFixture(engine: SearchEngine(archive: archive), oracle: try SampleOracle(folder: TestSupport.sampleFolder))
    }
}

/// One end-to-end case: a query (with `{u:handle}` / `{c:folder}` placeholders), the time zone and the brute
/// force predicate. `nonEmpty` says the expected set must not be empty (a guard against vacuous rows).
struct EndToEndCase: Sendable, CustomTestStringConvertible {
    let query: String
    let zone: String
    let expect: Expect
    let nonEmpty: Bool
    var testDescription: String { "\(query) [\(zone)]" }
}

private func row(_ query: String, _ expect: Expect, zone: String = "UTC", nonEmpty: Bool = true) -> EndToEndCase {
    EndToEndCase(query: query, zone: zone, expect: expect, nonEmpty: nonEmpty)
}

private let tokyo = 9

private let endToEndCases: [EndToEndCase] = [
    // Words: rare, common; case; phrases; prefixes; negations.
    row("achieved", .word("achieved")),
    row("aliasing", .word("aliasing")),
    row("casefold", .word("casefold")),
    row("asterisk", .word("asterisk")),
    row("breakpoint", .word("breakpoint")),
    row("Annotation", .word("annotation")),
    row("class", .word("class")),
    row("object", .word("object")),
    row("EXCEPTION", .word("exception")),
    row("class object", .word("class") && .word("object")),
    row("zzzznotaword", .word("zzzznotaword"), nonEmpty: false),
    row("\"user defined\"", .phrase("user defined")),
    row("\"by default\"", .phrase("by default")),
    row("\"data descriptor\"", .phrase("data descriptor")),
    row("excep*", .prefix("excep")),
    row("annot*", .prefix("annot")),
    row("casef*", .prefix("casef")),
    row("class -object", .word("class") && !.word("object")),
    row("function -\"by default\"", .word("function") && !.phrase("by default")),
    row("exception -excep*", .word("exception") && !.prefix("excep"), nonEmpty: false),
    // Conversations.
    row("class in:#marketing", .word("class") && .inFolder("marketing")),
    row("class in:marketing", .word("class") && .inFolder("marketing")),
    row("class in:{c:ios}", .word("class") && .inFolder("ios")),
    row("class in:<#{c:ios}|ios>", .word("class") && .inFolder("ios")),
    row("class -in:#marketing", .word("class") && !.inFolder("marketing")),
    row("in:@matthew.thompson", .dmWith("matthew.thompson")),
    row("the in:@andrew.jones", .word("the") && .dmWith("andrew.jones")),
    // People.
    row("from:@andrew.jones", .from("andrew.jones")),
    row("class from:\"Andrew Jones\"", .word("class") && .from("andrew.jones")),
    row("class from:Andrew", .word("class") && .from("andrew.jones")),
    row("from:{u:susan.jones}", .from("susan.jones")),
    row("from:<@{u:susan.jones}>", .from("susan.jones")),
    row("class -from:@andrew.jones", .word("class") && !.from("andrew.jones")),
    row("to:@susan.jones", .to("susan.jones")),
    row("to:@andrew.jones", .to("andrew.jones")),
    row("class to:@kwame.silva", .word("class") && .to("kwame.silva")),
    row("with:@ryan.novak", .with("ryan.novak")),
    row("with:@cynthia.smithjones", .with("cynthia.smithjones")),
    row("the with:@william.allen", .word("the") && .with("william.allen")),
    // Dates at day boundaries, in UTC and Tokyo.
    row("class before:2024-04-01", .word("class") && .before("2024-04-01", offset: 0)),
    row("class before:2024-04-01", .word("class") && .before("2024-04-01", offset: tokyo), zone: "Asia/Tokyo"),
    row("after:2024-06-20", .after("2024-06-20", offset: 0)),
    row("after:2024-06-20", .after("2024-06-20", offset: tokyo), zone: "Asia/Tokyo"),
    row("on:2024-05-15", .between("2024-05-15", "2024-05-15", offset: 0)),
    row("on:2024-05-15", .between("2024-05-15", "2024-05-15", offset: tokyo), zone: "Asia/Tokyo"),
    row("the on:2024-06-03", .word("the") && .between("2024-06-03", "2024-06-03", offset: tokyo), zone: "Asia/Tokyo"),
    row("during:2024-04", .between("2024-04-01", "2024-04-30", offset: 0)),
    row("the during:2024-04", .word("the") && .between("2024-04-01", "2024-04-30", offset: tokyo), zone: "Asia/Tokyo"),
    row("during:2024", .between("2024-01-01", "2024-12-31", offset: 0)),
    row("during:2023", .between("2023-01-01", "2023-12-31", offset: 0), nonEmpty: false),
    row("class after:2024-04-30 before:2024-06-01", .word("class") && .between("2024-05-01", "2024-05-31", offset: 0)),
    row("after:2024-05-02 before:2024-05-03", .between("2024-05-03", "2024-05-02", offset: 0), nonEmpty: false),
    // has:, is:
    row("has:link", .hasLink),
    row("has:file", .hasFile),
    row("has:reaction", .hasReaction),
    row("has::+1:", .reaction("+1")),
    row("has::white_check_mark:", .reaction("white_check_mark")),
    row("has::+1::skin-tone-3:", .phrase("has 1 skin tone 3"), nonEmpty: false),  // not an emoji name: words
    row("has:pin", Expect { _, m in m.isPinned }, nonEmpty: false),
    row("is:thread", .isThread),
    row("class is:thread", .word("class") && .isThread),
    // Combinations and filter-only queries.
    row("from:@andrew.jones in:#ios has:reaction", .from("andrew.jones") && .inFolder("ios") && .hasReaction),
    row("class -object in:#marketing after:2024-05-01", .word("class") && !.word("object") && .inFolder("marketing")
        && .after("2024-05-01", offset: 0)),
    row("has:reaction is:thread -in:#marketing", .hasReaction && .isThread && !.inFolder("marketing")),
    row("-class -in:#marketing has:file", !.word("class") && !.inFolder("marketing") && .hasFile),
    row("in:#general", .inFolder("general")),
    // Accents and non-Latin scripts.
    row("cafe", .word("cafe")),
    row("café", .word("cafe")),
    row("CAFÉ", .word("cafe")),
    row("istanbul", .word("istanbul")),
    row("prüfen", .word("prufen")),
    row("リリース", .substring("リリース")),
    row("東京", .substring("東京")),
    row("検索", .substring("検索")),
    row("开会", .substring("开会")),
    row("錯誤", .substring("錯誤")),
    row("ขอบคุณ", .substring("ขอบคุณ")),
]

@Suite struct SearchEngineTests {
    private static func options(zone: String, sort: SearchSort) -> SearchOptions {
        var options = SearchOptions()
        options.sort = sort
        options.limit = 10_000
        options.candidateWindow = 10_000
        options.timeZone = TimeZone(identifier: zone) ?? .current
        options.now = Date(timeIntervalSince1970: 1_719_792_000)  // 2024-07-01
        return options
    }

    @Test func oracleReadsTheWholeSample() throws {
        let fixture = try SampleFixture.shared.get()
        #expect(fixture.oracle.messages.count == 3_000)
        #expect(Set(fixture.oracle.messages.map(\.key)).count == 3_000)
        let (count, _) = try fixture.engine.count("during:2024", options: Self.options(zone: "UTC", sort: .newest))
        #expect(count == 3_000)
    }

    /// The set of (conversation, ts) the engine returns equals the brute-force set, with every sort order, and
    /// `count` agrees; so does the total a search gives back, whether its hits walked every match (the count then
    /// comes from them) or a small limit and window left matches unread (the count walks them), capped or not.
    @Test(arguments: endToEndCases)
    func matchesBruteForce(_ row: EndToEndCase) throws {
        let fixture = try SampleFixture.shared.get()
        let oracle = fixture.oracle
        let query = oracle.expand(row.query)
        let expected = Set(oracle.messages.filter { row.expect.test(oracle, $0) }.map(\.key))
        if row.nonEmpty { #expect(!expected.isEmpty, "vacuous row") }
        for sort in SearchSort.allCases {
            var options = Self.options(zone: row.zone, sort: sort)
            options.countCap = Int.max
            let results = try fixture.engine.search(query, options: options)
            #expect(results.total == expected.count, "\(sort): total")
            for (limit, window, cap) in [(3, 8, Int.max), (3, 8, 5), (10_000, 10_000, 5)] {
                var small = options
                (small.limit, small.candidateWindow, small.countCap) = (limit, window, cap)
                let total = try fixture.engine.search(query, options: small).total
                #expect(total == min(cap, expected.count), "\(sort): total with limit \(limit), window \(window), cap \(cap)")
            }
            let keys = results.hits.map { $0.message.conversationID + " " + $0.message.ts }
            #expect(keys.count == Set(keys).count, "duplicates with \(sort)")
            let got = Set(keys)
            let missing = expected.subtracting(got).sorted().prefix(5)
            let extra = got.subtracting(expected).sorted().prefix(5)
            #expect(got == expected, "\(sort): \(got.count) vs \(expected.count); missing \(missing); extra \(extra)")
            #expect(!results.windowed)
        }
        let (count, _) = try fixture.engine.count(query, options: Self.options(zone: row.zone, sort: .relevance))
        #expect(count == expected.count)
    }

    @Test func sortOrders() throws {
        let fixture = try SampleFixture.shared.get()
        for query in ["class", "in:#ios", "has:reaction exception"] {
            let newest = try fixture.engine.search(query, options: Self.options(zone: "UTC", sort: .newest)).hits
            let oldest = try fixture.engine.search(query, options: Self.options(zone: "UTC", sort: .oldest)).hits
            #expect(newest.count > 1)
            let newestKeys = newest.map(\.message.rowID)
            #expect(newestKeys == newestKeys.sorted(by: >), "\(query)")
            #expect(oldest.map(\.message.rowID) == newestKeys.reversed(), "\(query)")
            #expect(newest.map(\.message.tsKey) == newest.map(\.message.tsKey).sorted(by: >))
            // A small limit returns the newest (oldest) prefix of the full list.
            var limited = Self.options(zone: "UTC", sort: .newest)
            limited.limit = 5
            #expect(try fixture.engine.search(query, options: limited).hits.map(\.message.rowID)
                == Array(newestKeys.prefix(5)))
        }
    }

    /// Dates wholly outside the archive find nothing and say where the archive runs (issue 55: `during:may` is
    /// the latest May, after sample-data's 2024-03-03 to 2024-06-30, and said nothing).
    @Test func datesOutsideTheArchiveSayWhereItRuns() throws {
        let fixture = try SampleFixture.shared.get()
        var options = Self.options(zone: "UTC", sort: .newest)
        options.now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18: `may` is May 2026
        for (query, side) in [("class during:may", "after"), ("class after:2030-01-01", "after"), ("before:2001-05-01", "before")] {
            let results = try fixture.engine.search(query, options: options)
            #expect(results.hits.isEmpty, "\(query)")
            #expect(
                results.notes.contains(
                    "The dates asked for lie \(side) the archive's messages, which run from 2024-03-03 to 2024-06-30. "
                        + "A month or weekday name alone means the latest one; add a year for another (during:\"may 2024\")."),
                "\(query): \(results.notes)")
        }
        // Inside the archive's span, with or without hits, no such note.
        for query in ["class during:\"may 2024\"", "zzzqqq during:\"may 2024\""] {
            let notes = try fixture.engine.search(query, options: options).notes
            #expect(!notes.contains { $0.hasPrefix("The dates asked for") }, "\(query): \(notes)")
        }
    }

    @Test func hasEmojiIsNotASkinToneName() throws {
        // `has::+1::skin-tone-3:` is not an emoji name the parser accepts; it is searched as words instead.
        let query = QueryParser.parse("has::+1::skin-tone-3:", today: queryTestToday)
        #expect(query.filters.isEmpty)
        // `has::+1:` includes the skin-tone variants.
        let fixture = try SampleFixture.shared.get()
        let hits = try fixture.engine.search("has::+1:", options: Self.options(zone: "UTC", sort: .newest)).hits
        let oracle = fixture.oracle
        let toned = oracle.messages.filter { $0.reactions.contains("+1::skin-tone-3") && !$0.reactions.contains("+1") }
        #expect(!toned.isEmpty)
        #expect(Set(toned.map(\.key)).isSubset(of: Set(hits.map { $0.message.conversationID + " " + $0.message.ts })))
    }

    @Test func snippetsHighlightAndPermalinks() throws {
        let fixture = try SampleFixture.shared.get()
        var options = Self.options(zone: "UTC", sort: .relevance)
        options.limit = 50
        let hits = try fixture.engine.search("exception", options: options).hits
        #expect(hits.count == 50)
        for hit in hits {
            let snippet = hit.snippet
            #expect(snippet.contains(Highlight.start) && snippet.contains(Highlight.end), "\(snippet)")
            if let start = snippet.range(of: Highlight.start),
               let end = snippet.range(of: Highlight.end, range: start.upperBound..<snippet.endIndex) {
                #expect(snippet[start.upperBound..<end.lowerBound].lowercased() == "exception", "\(snippet)")
            }
            let message = hit.message
            #expect(message.workspaceDomain == "acme")
            let permalink = try #require(message.permalink)
            #expect(permalink.hasPrefix(
                "https://acme.slack.com/archives/\(message.conversationID)/p\(message.ts.replacingOccurrences(of: ".", with: ""))"))
            if let thread = message.threadTS, thread != message.ts {
                #expect(permalink.hasSuffix("?thread_ts=\(thread)&cid=\(message.conversationID)"))
            }
        }
        // Relevance order is deterministic.
        let again = try fixture.engine.search("exception", options: options).hits
        #expect(again.map(\.message.rowID) == hits.map(\.message.rowID))
        #expect(hits.map(\.score) == hits.map(\.score).sorted(by: >))
    }

    /// `in:` finds a conversation by id or name (any case), read whole (its workspace's domain too) as listings read
    /// it.
    @Test func conversationsMatchingANameReadAsListed() throws {
        let archive = try TestSupport.sampleArchive()
        let listed = try archive.store.conversationSummaries().map(\.conversation)
        #expect(listed.count > 5 && listed.allSatisfy { $0.workspaceDomain == "acme" })
        for conversation in listed {
            #expect(try archive.store.conversations(matching: conversation.id) == [conversation])
            if !conversation.name.isEmpty {
                #expect(try archive.store.conversations(matching: conversation.name.uppercased()).contains(conversation))
            }
        }
    }

    @Test func namesErrors() throws {
        let fixture = try SampleFixture.shared.get()
        let options = Self.options(zone: "UTC", sort: .relevance)
        // Two users have the display name "John".
        do {
            _ = try fixture.engine.search("from:John", options: options)
            Issue.record("from:John should be ambiguous")
        } catch SearchError.ambiguousUser(let name, let candidates) {
            #expect(name == "John")
            #expect(candidates.count == 2)
            #expect(candidates.contains { $0.contains("@john.fernandez") && $0.contains("U0A7YGSWCE4") })
            #expect(candidates.contains { $0.contains("@john.ukaszewicz") && $0.contains("U0XL7O0RQZU") })
        }
        // A handle picks one of them.
        #expect(try fixture.engine.search("from:@john.fernandez", options: options).hits.allSatisfy {
            $0.message.userID == "U0A7YGSWCE4"
        })
        #expect(throws: SearchError.self) { try fixture.engine.search("from:@nobody.here", options: options) }
        #expect(throws: SearchError.self) { try fixture.engine.search("in:#no-such-channel", options: options) }
        #expect(throws: SearchError.self) { try fixture.engine.search("from:me", options: options) }
        #expect(throws: SearchError.self) { try fixture.engine.search("( * )", options: options) }
        #expect(throws: SearchError.self) { try fixture.engine.search("", options: options) }
        var me = options
        me.me = "andrew.jones"
        let mine = try fixture.engine.search("from:me", options: me).hits
        #expect(!mine.isEmpty && mine.allSatisfy { $0.message.userID == fixture.oracle.userIDs["andrew.jones"] })
        // in:@user with --me: only the DM between the two.
        let dm = try fixture.engine.search("in:@matthew.thompson", options: me).hits
        #expect(!dm.isEmpty && dm.allSatisfy { $0.message.conversationID == "D0VC4NV56E1" })
    }
}

/// Small constructed exports for ranking, ties, accents in NFD, pins and deletions.
@Suite struct SearchEngineSmallExportTests {
    private static func engine(_ days: [String: String], extra: [String: String] = [:]) throws -> SearchEngine {
        let archive = try TestSupport.makeArchive()
        let folder = try TestSupport.minimalExport(days: days, extra: extra)
        _ = try Importer(archive: archive).importExport(at: folder.path)
        return SearchEngine(archive: archive)
    }

    private static func message(_ ts: String, _ text: String, extra: String = "") -> String {
        #"{"type": "message", "user": "U1", "text": "\#(text)", "ts": "\#(ts)"\#(extra)}"#
    }

    private static var options: SearchOptions {
        var options = SearchOptions()
        options.limit = 100
        options.timeZone = TimeZone(identifier: "UTC") ?? .current
        return options
    }

    @Test func relevancePrefersDenseAndShortMessages() throws {
        let filler = (0..<60).map { "filler\($0)" }.joined(separator: " ")
        let engine = try Self.engine(["2024-05-01": "[" + [
            Self.message("1714550400.000100", "\(filler) kiwi \(filler)"),  // oldest: long, once
            Self.message("1714550460.000100", "kiwi kiwi kiwi"),  // several times
            Self.message("1714550520.000100", "a kiwi smoothie"),  // short, once
            Self.message("1714550580.000100", "\(filler) kiwi"),  // newest: long, once
        ].joined(separator: ",") + "]"])
        let hits = try engine.search("kiwi", options: Self.options).hits
        let order = hits.map(\.message.ts)
        #expect(order.count == 4)
        #expect(order.first == "1714550460.000100")
        #expect(Set(order.suffix(2)) == ["1714550400.000100", "1714550580.000100"])
        #expect(order.firstIndex(of: "1714550520.000100")! < order.firstIndex(of: "1714550580.000100")!)
        #expect(hits.map(\.score) == hits.map(\.score).sorted(by: >))
        for hit in hits { #expect(hit.snippet.contains("\u{E000}kiwi\u{E001}"), "\(hit.snippet)") }
        var newest = Self.options
        newest.sort = .newest
        #expect(try engine.search("kiwi", options: newest).hits.map(\.message.ts)
            == ["1714550580.000100", "1714550520.000100", "1714550460.000100", "1714550400.000100"])
        newest.sort = .oldest
        #expect(try engine.search("kiwi", options: newest).hits.map(\.message.ts)
            == ["1714550400.000100", "1714550460.000100", "1714550520.000100", "1714550580.000100"])
    }

    @Test func tiesAreBrokenNewestFirstAndRepeatable() throws {
        // The same text at the same ts in three channels: equal bm25 and recency, so only the tie-break orders them.
        let same = "[" + Self.message("1714550400.000100", "durian pie") + "]"
        let channels = #"""
            [{"id": "C1", "name": "general", "created": "1433558319", "members": ["U1"]},
             {"id": "C2", "name": "second", "created": "1433558319", "members": ["U1"]},
             {"id": "C3", "name": "third", "created": "1433558319", "members": ["U1"]}]
            """#
        let engine = try Self.engine(
            ["2024-05-01": same],
            extra: ["channels.json": channels, "second/2024-05-01.json": same, "third/2024-05-01.json": same])
        let first = try engine.search("durian", options: Self.options).hits
        #expect(first.count == 3)
        #expect(Set(first.map(\.score)).count == 1)
        #expect(first.map(\.message.rowID) == first.map(\.message.rowID).sorted(by: >))
        for _ in 0..<3 {
            #expect(try engine.search("durian", options: Self.options).hits.map(\.message.rowID)
                == first.map(\.message.rowID))
        }
    }

    @Test func accentsFoldIncludingDecomposedText() throws {
        let engine = try Self.engine(["2024-05-01": "[" + [
            Self.message("1714550400.000100", "Le re\u{301}sume\u{301} est pre\u{302}t"),  // NFD
            Self.message("1714550460.000100", "Un café au İstanbul"),  // NFC
            Self.message("1714550520.000100", "resume cafe istanbul plain"),
        ].joined(separator: ",") + "]"])
        for (query, count) in [("résumé", 2), ("resume", 2), ("RÉSUMÉ", 2), ("re\u{301}sume\u{301}", 2),
                               ("cafe", 2), ("café", 2), ("cafe\u{301}", 2), ("istanbul", 2), ("İSTANBUL", 2),
                               ("prêt", 1), ("pret", 1), ("\"le resume\"", 1)] {
            #expect(try engine.count(query, options: Self.options).0 == count, "\(query)")
        }
    }

    @Test func pinsAndDeletedMessages() throws {
        let engine = try Self.engine(["2024-05-01": "[" + [
            Self.message("1714550400.000100", "mango pinned note", extra: #", "pinned_to": ["C1"]"#),
            Self.message("1714550460.000100", "mango to delete"),
            Self.message("1714550520.000100", "mango stays"),
            #"{"type": "message", "subtype": "message_deleted", "hidden": true, "ts": "1714550580.000100", "#
                + #""deleted_ts": "1714550460.000100"}"#,
        ].joined(separator: ",") + "]"])
        var options = Self.options
        options.sort = .newest
        #expect(try engine.search("has:pin", options: options).hits.map(\.message.ts) == ["1714550400.000100"])
        #expect(try engine.search("mango", options: options).hits.map(\.message.ts)
            == ["1714550520.000100", "1714550400.000100"])
        #expect(try engine.search("delete", options: options).hits.isEmpty)
        #expect(try engine.count("mango", options: options).0 == 2)
        #expect(try engine.search("in:#general", options: options).hits.map(\.message.ts)
            == ["1714550520.000100", "1714550400.000100"])
        #expect(try engine.count("-stays", options: options).0 == 1)
    }
}
