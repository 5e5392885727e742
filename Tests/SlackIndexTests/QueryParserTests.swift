import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// One row of the parser table: input text and the expected query.
struct QueryParseCase: Sendable, CustomTestStringConvertible {
    let input: String
    let expected: SearchQuery

    var testDescription: String { input.debugDescription }
}

private typealias Term = SearchQuery.Term

private func word(_ text: String, negated: Bool = false) -> Term { Term(.word, text, negated: negated) }
private func phrase(_ text: String, negated: Bool = false) -> Term { Term(.phrase, text, negated: negated) }
private func prefix(_ text: String, negated: Bool = false) -> Term { Term(.prefix, text, negated: negated) }

private func day(_ year: Int, _ month: Int, _ dayOfMonth: Int) -> Day {
    Day(year: year, month: month, day: dayOfMonth) ?? Day.earliest
}

private func month(_ year: Int, _ month: Int) -> DayRange {
    DayRange.month(month, of: year) ?? DayRange(single: Day.earliest)
}

private func row(
    _ input: String, _ terms: [Term] = [], _ filters: [SearchQuery.Filter] = [], notes: [String] = []
) -> QueryParseCase {
    QueryParseCase(input: input, expected: SearchQuery(terms: terms, filters: filters, notes: notes))
}

/// A date modifier whose value is no date: searched as words, with a note, and listed in `unreadDates`.
private func unreadDate(_ input: String, _ terms: [Term]) -> QueryParseCase {
    let name = String(input.prefix { $0 != ":" })
    var expected = SearchQuery(
        terms: terms,
        notes: ["\(name): needs a date like 2024-05-01, today, monday, may, 2024-05 or \"last week\"; \"\(input)\" searched as words"])
    expected.unreadDates = [input]
    return QueryParseCase(input: input, expected: expected)
}

private let parseCases: [QueryParseCase] = [
    // Plain terms.
    row(""),
    row("   \t\n  "),
    row("hello", [word("hello")]),
    row("hello world", [word("hello"), word("world")]),
    row("\"exact phrase\"", [phrase("exact phrase")]),
    row("\"  spaced \t out  \"", [phrase("spaced out")]),
    row("-draft", [word("draft", negated: true)]),
    row("-\"bad idea\"", [phrase("bad idea", negated: true)]),
    row("\"abc\"def", [phrase("abc"), word("def")]),
    row("\u{201C}smart quotes\u{201D}", [phrase("smart quotes")]),
    row("NEAR AND OR NOT", [word("NEAR"), word("AND"), word("OR"), word("NOT")]),
    row("日本語 café", [word("日本語"), word("café")]),
    row("12:30", [word("12:30")]),
    row("hello\u{0}world\u{7}x", [word("hello"), word("world"), word("x")]),
    row("don\"t", [word("don\"t")]),
    // Prefixes.
    row("budg*", [prefix("budg")]),
    row("-budg*", [prefix("budg", negated: true)]),
    row("abc**", [prefix("abc")]),
    row("café*", [prefix("café")]),
    row("ab*", [word("ab")], notes: ["prefix search needs 3 or more characters before *; \"ab*\" searched as ab"]),
    // Dropped input.
    row("-", notes: ["ignored a lone \"-\""]),
    row("* ^", notes: ["ignored \"*\": no letters or digits", "ignored \"^\": no letters or digits"]),
    row("( hello )", [word("hello")], notes: ["ignored ( and ): Slack search has no grouping"]),
    row("\"\"", notes: ["ignored empty quotes"]),
    row("\"!!!\" ok", [word("ok")], notes: ["ignored \"!!!\": no letters or digits"]),
    row("🎉", notes: ["ignored \"🎉\": no letters or digits"]),
    // Unbalanced quotes.
    row("\"abc", [word("abc")], notes: ["unbalanced quote: searched \"abc as words"]),
    row("hello \"abc def", [word("hello"), word("abc"), word("def")],
        notes: ["unbalanced quote: searched \"abc as words"]),
    row("-\"abc", [word("abc", negated: true)], notes: ["unbalanced quote: searched \"abc as words"]),
    row("x \"", [word("x")], notes: ["ignored an unbalanced quote"]),
    row("\"a b\" \"c", [phrase("a b"), word("c")], notes: ["unbalanced quote: searched \"c as words"]),
    // in:
    row("in:#general", [], [.inConversation(.name("general"), negated: false)]),
    row("in:general", [], [.inConversation(.name("general"), negated: false)]),
    row("IN:#General", [], [.inConversation(.name("General"), negated: false)]),
    row("-in:#random", [], [.inConversation(.name("random"), negated: true)]),
    row("in:\"my channel\"", [], [.inConversation(.name("my channel"), negated: false)]),
    row("in:\"#my channel\"", [], [.inConversation(.name("my channel"), negated: false)]),
    row("in:C0123ABCD9", [], [.inConversation(.id("C0123ABCD9"), negated: false)]),
    row("in:<#C0123ABCD|general>", [], [.inConversation(.id("C0123ABCD"), negated: false)]),
    row("in:@alice", [], [.inConversation(.dmWith(.handle("alice")), negated: false)]),
    row("in:<@U0123ABCD>", [], [.inConversation(.dmWith(.id("U0123ABCD")), negated: false)]),
    row("in:@me", [], [.inConversation(.dmWith(.me), negated: false)]),
    row("in:#", [word("in:#")],
        notes: ["in: needs a channel like #general or a person like @alice; \"in:#\" searched as words"]),
    // from:, to:, with:
    row("from:@alice", [], [.from(.handle("alice"), negated: false)]),
    row("from:alice", [], [.from(.handle("alice"), negated: false)]),
    row("from:\"Alice Smith\"", [], [.from(.handle("Alice Smith"), negated: false)]),
    row("from:me", [], [.from(.me, negated: false)]),
    row("FROM:@ME", [], [.from(.me, negated: false)]),
    row("from:U0123ABCD9", [], [.from(.id("U0123ABCD9"), negated: false)]),
    row("from:@U0123ABCD9", [], [.from(.handle("U0123ABCD9"), negated: false)]),
    row("from:<@U0123ABCD>", [], [.from(.id("U0123ABCD"), negated: false)]),
    row("from:<@W0123ABCD|alice>", [], [.from(.id("W0123ABCD"), negated: false)]),
    row("-from:@bob", [], [.from(.handle("bob"), negated: true)]),
    row("from:\"alice", [], [.from(.handle("alice"), negated: false)],
        notes: ["unbalanced quote: ignored the \" in from:\"alice"]),
    row("from:", [word("from:")], notes: ["from: needs a person like @alice or me; \"from:\" searched as words"]),
    row("to:me", [], [.to(.me)]),
    row("to:\"Bob Jones\"", [], [.to(.handle("Bob Jones"))]),
    row("with:@carol", [], [.with(.handle("carol"))]),
    row("-to:@bob", [word("to:@bob", negated: true)],
        notes: ["\"-to:\" can't be negated; \"-to:@bob\" searched as words"]),
    // Dates.
    row("before:2024-05-01", [], [.before(day(2024, 5, 1))]),
    row("after:2024-05-01", [], [.after(day(2024, 5, 1))]),
    row("on:2024-02-29", [], [.on(day(2024, 2, 29))]),
    row("on:2024-2-9", [], [.on(day(2024, 2, 9))]),
    row("before:\"2024-05-01\"", [], [.before(day(2024, 5, 1))]),
    row("before:today", [], [.before(day(2024, 6, 15))]),
    row("After:Yesterday", [], [.after(day(2024, 6, 14))]),
    unreadDate("on:2023-02-29", [word("on:2023-02-29")]),
    unreadDate("before:soon", [word("before:soon")]),
    unreadDate("before:\"next week\"", [phrase("next week")]),
    row("during:2024-05", [], [.during(month(2024, 5))]),
    row("during:2024", [], [.during(DayRange.year(2024) ?? month(2024, 1))]),
    row("during:january", [], [.during(month(2024, 1))]),
    row("during:Jun", [], [.during(month(2024, 6))]),
    row("during:dec", [], [.during(month(2023, 12))]),
    row("during:sept", [], [.during(month(2023, 9))]),
    row("during:2024-05-07", [], [.during(DayRange(single: day(2024, 5, 7)))]),
    row("during:today", [], [.during(DayRange(single: day(2024, 6, 15)))]),
    unreadDate("during:2024-13", [word("during:2024-13")]),
    // has:, is:
    row("has:link", [], [.has(.link)]),
    row("has:file", [], [.has(.file)]),
    row("HAS:Reaction", [], [.has(.reaction)]),
    row("has:pin", [], [.has(.pin)]),
    row("has::tada:", [], [.has(.emoji("tada"))]),
    row("has::+1:", [], [.has(.emoji("+1"))]),
    row("has::TADA:", [], [.has(.emoji("tada"))]),
    row("has:star", [word("has:star")],
        notes: ["has: needs link, file, image, reaction, pin or an emoji like :tada:; \"has:star\" searched as words"]),
    row("is:thread", [], [.isThread]),
    row("is:saved", [word("is:saved")], notes: ["is: only supports thread; \"is:saved\" searched as words"]),
    row("-is:thread", [word("is:thread", negated: true)],
        notes: ["\"-is:\" can't be negated; \"-is:thread\" searched as words"]),
    // Unknown modifiers and URLs.
    row("foo:bar", [word("foo:bar")], notes: ["unknown modifier \"foo:\" searched as words"]),
    row("body:secret*", [prefix("body:secret")], notes: ["unknown modifier \"body:\" searched as words"]),
    row("https://example.com/x", [word("https://example.com/x")]),
    // Added in the main package: more ids, references, plurals and quoting.
    row("in:<@U0123ABCD|ann>", [], [.inConversation(.dmWith(.id("U0123ABCD")), negated: false)]),
    row("-in:<#C0123ABCD>", [], [.inConversation(.id("C0123ABCD"), negated: true)]),
    row("in:G0123ABCD9", [], [.inConversation(.id("G0123ABCD9"), negated: false)]),
    row("in:D0123ABCD9", [], [.inConversation(.id("D0123ABCD9"), negated: false)]),
    row("in:c0123abcd9", [], [.inConversation(.name("c0123abcd9"), negated: false)]),
    row("in:<#c0123abcd>", [word("in:<#c0123abcd>")],
        notes: ["in: needs a channel like #general or a person like @alice; \"in:<#c0123abcd>\" searched as words"]),
    row("from:\"@Alice Smith\"", [], [.from(.handle("Alice Smith"), negated: false)]),
    row("from:W0123ABCD9", [], [.from(.id("W0123ABCD9"), negated: false)]),
    row("from:u0123abcd9", [], [.from(.handle("u0123abcd9"), negated: false)]),
    row("to:<@U0123ABCD>", [], [.to(.id("U0123ABCD"))]),
    row("with:me", [], [.with(.me)]),
    row("with:\"me\"", [], [.with(.me)]),
    row("-from:me", [], [.from(.me, negated: true)]),
    row("has:links has:files has:reactions has:pinned", [], [.has(.link), .has(.file), .has(.reaction), .has(.pin)]),
    row("has::white_check_mark:", [], [.has(.emoji("white_check_mark"))]),
    row("has::skin-tone-2:", [], [.has(.emoji("skin-tone-2"))]),
    row("has::", [word("has::")],
        notes: ["has: needs link, file, image, reaction, pin or an emoji like :tada:; \"has::\" searched as words"]),
    row("has::é:", [word("has::é:")],
        notes: ["has: needs link, file, image, reaction, pin or an emoji like :tada:; \"has::é:\" searched as words"]),
    row("is:threads", [], [.isThread]),
    row("-has:link", [word("has:link", negated: true)],
        notes: ["\"-has:\" can't be negated; \"-has:link\" searched as words"]),
    row("-on:2024-01-01", [word("on:2024-01-01", negated: true)],
        notes: ["\"-on:\" can't be negated; \"-on:2024-01-01\" searched as words"]),
    row("https://example.com", [word("https://example.com")]),
    unreadDate("before:2024-05-01T10", [word("before:2024-05-01T10")]),
    unreadDate("on:24-05-01", [word("on:24-05-01")]),
    unreadDate("during:2024-02-30", [word("during:2024-02-30")]),
    row("in:#general hello in:#random", [word("hello")],
        [.inConversation(.name("general"), negated: false), .inConversation(.name("random"), negated: false)]),
    row("\u{FF02}fullwidth quotes\u{FF02}", [phrase("fullwidth quotes")]),
    row("x\u{2028}y", [word("x"), word("y")]),
    // Combined.
    row(
        "budget -draft \"q3 plan\" in:#finance from:@alice after:2024-01-01 has:link",
        [word("budget"), word("draft", negated: true), phrase("q3 plan")],
        [
            .inConversation(.name("finance"), negated: false), .from(.handle("alice"), negated: false),
            .after(day(2024, 1, 1)), .has(.link),
        ]
    ),
]

@Suite struct QueryParserTests {
    @Test func tableIsLargeEnough() {
        #expect(parseCases.count >= 60)
    }

    @Test(arguments: parseCases)
    func parses(_ row: QueryParseCase) {
        let query = QueryParser.parse(row.input, today: queryTestToday)
        #expect(query == row.expected)
    }

    @Test(arguments: parseCases)
    func roundTripsThroughSlackSyntax(_ row: QueryParseCase) {
        let query = QueryParser.parse(row.input, today: queryTestToday)
        let again = QueryParser.parse(query.slackSyntax, today: queryTestToday)
        #expect(again.terms == query.terms)
        #expect(again.filters == query.filters)
        if query.notes.isEmpty {
            #expect(again == query)
        }
    }

    @Test func rendersSlackSyntax() {
        let query = QueryParser.parse(
            "budget -draft \"q3  plan\" abc* in:\"my channel\" -from:\"Alice Smith\" to:me during:may has::tada:",
            today: queryTestToday
        )
        let expected = "budget -draft \"q3 plan\" abc* in:\"#my channel\" -from:\"@Alice Smith\" to:me "
            + "during:2024-05 has::tada:"
        #expect(query.slackSyntax == expected)
    }

    @Test func capsTermsAndNotes() {
        let many = (0..<200).map { "w\($0)" }.joined(separator: " ")
        let query = QueryParser.parse(many + " in:#x", today: queryTestToday)
        #expect(query.terms.count == QueryParser.maxTerms)
        #expect(query.filters == [.inConversation(.name("x"), negated: false)])
        #expect(query.notes == ["only the first 64 search terms were used"])

        let junk = (0..<200).map { "before:x\($0)" }.joined(separator: " ")
        let noisy = QueryParser.parse(junk, today: queryTestToday)
        #expect(noisy.notes.count == QueryParser.maxNotes + 1)
        #expect(noisy.notes.last?.hasSuffix("more notes left out") == true)
    }

    @Test func shortensLongTerms() {
        let long = String(repeating: "a", count: 1000)
        let query = QueryParser.parse(long, today: queryTestToday)
        #expect(query.terms == [word(String(repeating: "a", count: QueryParser.maxTermLength))])
        let longPhrase = "\"" + Array(repeating: "word", count: 100).joined(separator: " ") + "\""
        let phraseQuery = QueryParser.parse(longPhrase, today: queryTestToday)
        #expect(phraseQuery.terms.count == 1)
        #expect(phraseQuery.terms.first?.text.hasSuffix("word") == true)
        #expect((phraseQuery.terms.first?.text.unicodeScalars.count ?? 0) <= QueryParser.maxTermLength)
    }
}
