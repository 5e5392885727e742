import Foundation
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@testable import SlackIndexTestSupport

/// Dates read the same way everywhere, names that match nothing get the closest ones, `conversations` lists what
/// there is, and read commands never make an archive (issue 16).
@Suite struct DateExpressionTests {
    /// A Tuesday.
    static let today = Day(year: 2026, month: 11, day: 24)!

    static func days(_ first: String, _ last: String? = nil) -> DateExpression {
        func day(_ text: String) -> Day {
            let parts = text.split(separator: "-").map { Int($0)! }
            return Day(year: parts[0], month: parts[1], day: parts[2])!
        }
        return .days(DayRange(first: day(first), last: day(last ?? first))!)
    }

    @Test(arguments: [
        ("2024-05-01", days("2024-05-01")),
        ("2024-5-1", days("2024-05-01")),
        ("today", days("2026-11-24")),
        ("Yesterday", days("2026-11-23")),
        ("monday", days("2026-11-23")),
        ("tue", days("2026-11-24")),  // today is a Tuesday: the latest one is today
        ("wednesday", days("2026-11-18")),
        ("this week", days("2026-11-23", "2026-11-24")),
        ("last  week", days("2026-11-16", "2026-11-22")),
        ("last month", days("2026-10-01", "2026-10-31")),
        ("this month", days("2026-11-01", "2026-11-30")),
        ("last year", days("2025-01-01", "2025-12-31")),
        ("january", days("2026-01-01", "2026-01-31")),
        ("December", days("2025-12-01", "2025-12-31")),
        ("may 2024", days("2024-05-01", "2024-05-31")),
        ("2024 feb", days("2024-02-01", "2024-02-29")),
        ("2024-05", days("2024-05-01", "2024-05-31")),
        ("2024", days("2024-01-01", "2024-12-31")),
        ("3 days ago", days("2026-11-21")),
        ("1 week ago", days("2026-11-17")),
        ("2024-05-01T14:30", .time(Day(year: 2024, month: 5, day: 1)!, secondsIntoDay: 52_200)),
        ("2024-05-01 14:30:05", .time(Day(year: 2024, month: 5, day: 1)!, secondsIntoDay: 52_205)),
    ] as [(String, DateExpression)])
    func readsWhatPeopleType(text: String, expected: DateExpression) {
        #expect(DateExpression.parse(text, today: Self.today) == expected, "\(text)")
    }

    @Test(arguments: [
        "03/15/2024", "15.03.2024", "2024-13-01", "2024-02-30", "2024-05-01T25:00", "2024-05-01T14:60", "last fortnight",
        "next week", "", "   ", "1714000000", "-3 days ago", "99999999999 days ago", "2024-05-01 14:30 extra words",
    ])
    func refusesWhatItCannotRead(text: String) {
        #expect(DateExpression.parse(text, today: Self.today) == nil, "\(text)")
    }

    @Test func pointsAreTsOnlyWhenTheyLookLikeOne() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        let now = Date(timeIntervalSince1970: 1_795_996_800)  // 2026-11-24T00:00Z
        let year = try #require(TimelinePoint.parse("2024", timeZone: utc, now: now))
        #expect(year.ts == nil && year.tsKey == 1_704_067_200_000_000)
        let ts = try #require(TimelinePoint.parse("1714000000.000100", timeZone: utc, now: now))
        #expect(ts.ts == "1714000000.000100" && ts.tsKey == 1_714_000_000_000_100)
        let handle = try #require(TimelinePoint.parse("#general/1714000000.000100", timeZone: utc, now: now))
        #expect(handle.conversationID == "#general" && handle.ts == "1714000000.000100")
        let yesterday = try #require(TimelinePoint.parse("yesterday", timeZone: utc, now: now))
        #expect(yesterday.tsKey == 1_795_910_400_000_000)
        #expect(TimelinePoint.parse("03/15/2024", timeZone: utc, now: now) == nil)
        #expect(TimelinePoint.parse("general/2024", timeZone: utc, now: now) == nil)
    }

    @Test func searchModifiersUseTheSameDates() {
        let week = QueryParser.parse("deploy after:\"last week\" on:2024-05 before:monday", today: Self.today)
        #expect(
            week.filters == [
                .after(Day(year: 2026, month: 11, day: 22)!),
                .during(DayRange.month(5, of: 2024)!),
                .before(Day(year: 2026, month: 11, day: 23)!),
            ])
        #expect(week.unreadDates.isEmpty)
        let flag = QueryParser.filter("after", value: "last week", today: Self.today)
        #expect(flag == .after(Day(year: 2026, month: 11, day: 22)!))
        let bad = QueryParser.parse("deploy before:03/15/2024", today: Self.today)
        #expect(bad.unreadDates == ["before:03/15/2024"])
        #expect(bad.filters.isEmpty)
    }
}

@Suite struct ClosestNamesTests {
    @Test func typosPrefixesAndFragmentsFindTheName() {
        let names = ["#general", "#general-chat", "#random", "#design", "#dev", "@ann", "#marketing"]
        #expect(ClosestNames.closest(to: "genral", among: names) == ["#general"])
        #expect(ClosestNames.closest(to: "gneeral", among: names) == ["#general"])
        #expect(ClosestNames.closest(to: "gen", among: names) == ["#general", "#general-chat"])
        #expect(ClosestNames.closest(to: "#MARKET", among: names) == ["#marketing"])
        #expect(ClosestNames.closest(to: "désign", among: names).first == "#design")
        #expect(ClosestNames.closest(to: "zzzzzz", among: names).isEmpty)
        #expect(ClosestNames.closest(to: "", among: names).isEmpty)
    }
}

@Suite struct ReadCommandsOnAMissingArchiveTests {
    /// Every read command fails with exit 2 and the same message, and makes no file or folder.
    @Test(arguments: [
        ["search", "anything"], ["history", "general"], ["thread", "general", "1714000000.000100"], ["stats"],
        ["conversations"], ["ls"], ["serve", "--listen", "127.0.0.1:0"], ["serve", "--read-only"],
        ["bench", "search"], ["bench", "timeline"], ["token", "list"], ["token", "users"],
    ])
    func exitsTwoAndCreatesNothing(arguments: [String]) throws {
        let folder = TestSupport.temporaryDirectory()
        let db = folder.appendingPathComponent("missing/archive.sqlite").path
        let run = try CLITests.run(["--db", db] + arguments)
        #expect(run.status == 2, "\(arguments): \(run.stderr)")
        #expect(run.stderr.contains("There is no archive at \(db)"), "\(arguments): \(run.stderr)")
        #expect(run.stderr.contains("slackindex import EXPORT.zip"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "\(arguments)")
    }

    @Test func aFailedFirstImportLeavesNothingBehind() throws {
        let folder = TestSupport.temporaryDirectory()
        let db = folder.appendingPathComponent("new/archive.sqlite").path
        let notAnExport = folder.appendingPathComponent("notes.txt")
        try Data("hello".utf8).write(to: notAnExport)
        let run = try CLITests.run(["--db", db, "import", notAnExport.path, "--quiet"])
        #expect(run.status == 1, "\(run.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["notes.txt"])
        // An archive that existed stays, even when the import adds nothing.
        let ok = try CLITests.run(["--db", db, "import", TestSupport.sampleFolder, "--quiet"])
        #expect(ok.status == 0)
        #expect(try CLITests.run(["--db", db, "import", notAnExport.path, "--quiet"]).status == 1)
        #expect(FileManager.default.fileExists(atPath: db))
    }
}

@Suite struct ConversationsCommandTests {
    static let db: String = {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("ls.sqlite").path
        _ = try? CLITests.run(["--db", path, "import", TestSupport.sampleFolder, "--quiet"])
        return path
    }()

    @Test func listsEveryConversationWithItsCounts() throws {
        let run = try CLITests.run(["--db", Self.db, "conversations", "--tz", "UTC"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("KIND") == true)
        #expect(lines.count == 1 + 22)
        let general = try #require(lines.first { $0.contains("#general ") })
        #expect(general.hasPrefix("channel  #general"))
        #expect(general.contains("C0H744JLLZR") && general.contains(" 215  2024-03-05  2024-06-30  not synced"))
        // Columns line up: every row has MESSAGES ending where the header's does.
        let end = try #require(lines[0].range(of: "MESSAGES")?.upperBound).utf16Offset(in: lines[0])
        for line in lines.dropFirst() {
            let index = line.utf16.index(line.utf16.startIndex, offsetBy: end - 1)
            #expect(line.utf16[index] != 0x20, "\(line)")
        }
        // Kinds come channels first, DMs last.
        #expect(lines[1].hasPrefix("channel") && lines.last?.hasPrefix("dm") == true)
    }

    @Test func filtersByNameAndKindAndPrintsJSON() throws {
        let run = try CLITests.run(["--db", Self.db, "ls", "GEN", "--kind", "channel", "--json"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 1)
        let row = try CLITests.json(try #require(lines.first))
        #expect(row["name"] as? String == "#general" && row["messages"] as? Int == 215 && row["members"] as? Int == 40)
        #expect(row["first"] as? String == "2024-03-05T13:54:39Z" && row["kind"] as? String == "channel")
        let dms = try CLITests.run(["--db", Self.db, "ls", "--kind", "dm", "--json"])
        #expect(dms.stdout.split(separator: "\n").count == 6)
        let none = try CLITests.run(["--db", Self.db, "ls", "nothing-like-this"])
        #expect(none.status == 1 && none.stderr.contains("No conversations match 'nothing-like-this'"))
    }

    @Test func unknownNamesSuggestTheClosest() throws {
        let history = try CLITests.run(["--db", Self.db, "history", "genral"])
        #expect(history.status == 1)
        #expect(history.stderr.contains("did you mean #general?"), "\(history.stderr)")
        #expect(history.stderr.contains("`slackindex conversations` lists them all"))
        let search = try CLITests.run(["--db", Self.db, "search", "deploy", "in:#marketng"])
        #expect(search.stderr.contains("did you mean #marketing?"), "\(search.stderr)")
        let user = try CLITests.run(["--db", Self.db, "search", "deploy", "from:@andrew.jnoes"])
        #expect(user.stderr.contains("did you mean @andrew.jones"), "\(user.stderr)")
    }

    @Test func datesAreReadTheSameInEveryCommand() throws {
        let bad = try CLITests.run(["--db", Self.db, "history", "general", "--before", "03/15/2024"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("'03/15/2024' is not a point in time") && bad.stderr.contains("\"last week\""))
        let query = try CLITests.run(["--db", Self.db, "search", "deploy before:03/15/2024"])
        #expect(query.status == 64 && query.stderr.contains("'before:03/15/2024' does not hold a date"), "\(query.stderr)")
        #expect(!query.stderr.contains("Usage:"))
        // A flag value is one date, not a date and a word.
        let flag = try CLITests.run(["--db", Self.db, "search", "deploy", "--after", "last week", "--json"])
        #expect(flag.status == 1 && !flag.stderr.contains("searched as words"), "\(flag.stderr)")
        let month = try CLITests.run(["--db", Self.db, "search", "deploy", "--after", "2024-03", "--before", "may 2024", "--json", "--limit", "100"])
        #expect(month.status == 0, "\(month.stderr)")
        for line in month.stdout.split(separator: "\n") {
            let ts = try #require(CLITests.json(line)["ts"] as? String)
            // after:2024-03 is after March (from April 1), before "may 2024" is before May 1.
            #expect(ts >= "1711929600" && ts < "1714521600", "\(ts)")
        }
        let year = try CLITests.run(["--db", Self.db, "history", "general", "--before", "2024", "--json"])
        #expect(year.status == 0 && year.stdout.split(separator: "\n").count == 1, "\(year.stdout)")
    }
}

/// From a search hit to its context: the handle on every text hit opens it, the target is marked, a reply opens
/// its thread, cursors keep their page's options, and a cut list says so.
@Suite struct HitToContextTests {
    static var db: String { ConversationsCommandTests.db }

    @Test func aTextHitsHandleOpensItInContextMarked() throws {
        let search = try CLITests.run(["--db", Self.db, "search", "deploy", "--limit", "3"])
        #expect(search.status == 0)
        let headers = search.stdout.split(separator: "\n").filter { !$0.hasPrefix("  ") }
        #expect(headers.count == 3)
        for header in headers {
            let handle = String(try #require(header.split(separator: " ").last))
            #expect(handle.contains("/") && (handle.hasPrefix("#") || handle.hasPrefix("D") || handle.hasPrefix("G")))
            let ts = String(try #require(handle.split(separator: "/").last))
            let opened = try CLITests.run(["--db", Self.db, "history", handle, "--limit", "5", "--json"])
            #expect(opened.status == 0, "\(handle): \(opened.stderr)")
            let lines = try opened.stdout.split(separator: "\n").dropLast().map(CLITests.json)
            let targets = lines.filter { $0["target"] as? Bool == true }
            #expect(targets.count == 1 && targets.first?["ts"] as? String == ts, "\(handle)")
            let text = try CLITests.run(["--db", Self.db, "history", handle, "--limit", "5"])
            #expect(text.stdout.split(separator: "\n").filter { $0.hasPrefix("▶ ") }.count == 1)
        }
        // Past the limit, stderr says how many there are.
        #expect(search.stderr.contains("3 of ") && search.stderr.contains("shown; --limit "), "\(search.stderr)")
        let all = try CLITests.run(["--db", Self.db, "search", "deploy", "--limit", "1000"])
        #expect(!all.stderr.contains("shown;"))
        // A common word is counted only up to 1,000 (a full count of "the" on 1M messages took 0.6 s).
        let common = try CLITests.run(["--db", Self.db, "search", "the"])
        #expect(common.stderr.contains("20 of 1,000 or more shown; --count for how many."), "\(common.stderr)")
    }

    @Test func aReplyOpensItsThread() throws {
        let search = try CLITests.run(["--db", Self.db, "search", "is:thread", "--limit", "200", "--json"])
        let hits = try search.stdout.split(separator: "\n").map(CLITests.json)
        let replies = hits.filter { hit in
            guard let thread = hit["thread_ts"] as? String, let ts = hit["ts"] as? String else { return false }
            return thread != ts
        }
        let reply = try #require(replies.first)
        let handle = "\(reply["conversation_id"] as? String ?? "")/\(reply["ts"] as? String ?? "")"
        let opened = try CLITests.run(["--db", Self.db, "history", handle, "--limit", "6"])
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdout.hasPrefix("thread in "), "\(opened.stdout)")
        #expect(opened.stderr.contains("is a reply in a thread"))
        #expect(opened.stdout.split(separator: "\n").filter { $0.hasPrefix("▶ ") }.count == 1)
    }

    @Test func cursorsKeepTheirPageSizeAndConversation() throws {
        let first = try CLITests.run(["--db", Self.db, "history", "#general", "--limit", "3", "--json"])
        let last = try #require(first.stdout.split(separator: "\n").last)
        let cursors = try #require(try CLITests.json(last)["cursors"] as? [String: Any])
        let previous = try #require(cursors["previous"] as? String)
        let older = try CLITests.run(["--db", Self.db, "history", "--cursor", previous, "--json"])
        #expect(older.stdout.split(separator: "\n").count == 3 + 1, "the cursor's --limit 3 is kept")
        let overridden = try CLITests.run(["--db", Self.db, "history", "--cursor", previous, "--limit", "5", "--json"])
        #expect(overridden.stdout.split(separator: "\n").count == 5 + 1)
        let same = try CLITests.run(["--db", Self.db, "history", "general", "--cursor", previous, "--json"])
        #expect(same.status == 0)
        let other = try CLITests.run(["--db", Self.db, "history", "random", "--cursor", previous])
        #expect(other.status == 64 && other.stderr.contains("--cursor continues #general, not #random"), "\(other.stderr)")
        #expect(!other.stderr.contains("Usage:"))
    }
}

/// Whole messages: wrapped with a hanging indent at the terminal's width, code blocks and quotes kept, links with
/// their URL, mentions as names, standard emoji as emoji, reactions and files under the text.
@Suite struct WholeMessageTests {
    static var db: String { ConversationsCommandTests.db }

    @Test func historyShowsWholeMessagesWrappedAtTheWidth() throws {
        let run = try CLITests.run(["--db", Self.db, "history", "#general", "--limit", "6", "--tz", "UTC"], environment: ["COLUMNS": "80"])
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        for line in lines where !line.hasPrefix("previous:") && !line.hasPrefix("next:") {
            #expect(line.count <= 80, "\(line)")
        }
        // The long message is whole (its end is there) and continues under its first word.
        let start = try #require(lines.firstIndex { $0.contains("melissaw  However, even if it differs") })
        let indent = try #require(lines[start].range(of: "However")).lowerBound.utf16Offset(in: lines[start])
        #expect(lines[start + 1].prefix(indent).allSatisfy { $0 == " " } && lines[start + 1].dropFirst(indent).first != " ")
        #expect(lines[start...].contains { $0.contains("expression list ✔️  [7 replies]") })
        // Mentions are names, reactions are emoji with counts.
        #expect(lines.contains { $0.contains("@Kwame Novák merged") })
        #expect(lines.contains { $0.trimmingCharacters(in: .whitespaces) == "😂 5" })
        // --compact: one line each.
        let compact = try CLITests.run(["--db", Self.db, "history", "#general", "--limit", "6", "--compact"])
        #expect(compact.stdout.split(separator: "\n").count == 1 + 6 + 2)
    }

    @Test func codeBlocksQuotesAndLinks() {
        var renderer = MessageRenderer(width: 40)
        renderer.userNames = ["U1": "Ann"]
        let text = "see <https://example.com/a|the docs> and <@U1> <!here> :thumbsup::skin-tone-3: :party_parrot:\n"
            + "&gt; quoted &amp; kept\n```let x = 1\n    let y = 2 // a long code line that is never wrapped at all```\ndone"
        let lines = renderer.lines(of: text, indent: 0)
        #expect(
            lines == [
                "see the docs (https://example.com/a) and", "@Ann @here 👍🏼 :party_parrot:", "│ quoted & kept",
                "  let x = 1", "      let y = 2 // a long code line that is never wrapped at all", "done",
            ])
        #expect(MessageRenderer.emoji("+1") == "👍" && MessageRenderer.emoji("man-shrugging") == "🤷‍♂️")
        #expect(MessageRenderer.emojified("at 10:30:00 :tada::rocket:") == "at 10:30:00 🎉🚀")
        #expect(MessageRenderer.columns("日本語 ok 🎉") == 6 + 1 + 2 + 1 + 2)
        #expect(MessageRenderer.wrap("日本語日本語", width: 4, continuation: "") == ["日本", "語日", "本語"])
    }

    /// The table lookup (binary search over its lines) finds every name the table has, with its emoji, and
    /// nothing else.
    @Test func everyStandardEmojiIsFoundByNameAndNothingElse() {
        var expected: [String: String] = [:]
        for line in standardEmojiTable.split(separator: "\n") {
            guard let space = line.firstIndex(of: " ") else { continue }
            expected[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        #expect(expected.count > 2_900)
        for (name, emoji) in expected { #expect(MessageRenderer.standardEmoji(name) == emoji, "\(name)") }
        for name in ["", " ", "+", "0", "thumbs", "thumbsupp", "zzzzzz", "\u{10FFFF}", "tada ", "tad", "Tada", "+1 ", "!"] {
            #expect(MessageRenderer.standardEmoji(name) == nil, "\(name)")
        }
    }

    /// `search`'s and `history`'s times by arithmetic equal what a DateFormatter says, across zones, DST changes,
    /// leap days and times before 1970; out-of-range times are clamped, not trapped.
    @Test func localMinutesEqualTheFormattersAnywhereAnytime() throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        let times: [Int64] = [
            0, -1, -86_400, -86_401, 951_782_400, 951_868_799, 1_710_054_000, 1_710_053_999, 1_730_595_600,
            1_715_023_066, 4_102_444_800, -2_208_988_800, 253_402_200_000, 100_000_000_000,
        ] + (0..<200).map { Int64($0) * 7_919_993 + 946_684_800 }
        for zone in ["UTC", "America/New_York", "Europe/Paris", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Chatham"] {
            let timeZone = try #require(TimeZone(identifier: zone))
            formatter.timeZone = timeZone
            for seconds in times {
                let expected = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
                #expect(Day.localMinute(seconds, in: timeZone) == expected, "\(zone) \(seconds)")
            }
        }
        for extreme in [Int64.min, Int64.max, -100_000_000_000, 300_000_000_000] {
            let text = Day.localMinute(extreme, in: TimeZone(identifier: "Pacific/Chatham")!)
            #expect(text.count == 16 && (text.hasPrefix("0001-01-0") || text.hasPrefix("9999-12-31")), "\(extreme): \(text)")
        }
    }

    @Test func linksBecomeHyperlinkMarkersWithTheirURLsInOrder() {
        var renderer = MessageRenderer(width: 30)
        renderer.hyperlinks = true
        let (start, end) = (MessageRenderer.linkStart, MessageRenderer.linkEnd)
        let text = "read <https://example.com/a b|the long documentation page> then <http://x.org> or "
            + "<slack://open|the app>, <mailto:ann@example.com|Ann>; forged \u{E002}here\u{E003}"
        let rendered = renderer.rendered(text, indent: 0)
        #expect(rendered.links == ["https://example.com/a%20b", "http://x.org", "mailto:ann@example.com"])
        #expect(
            rendered.lines == [
                "read \(start)the long documentation", "page\(end) then \(start)http://x.org\(end) or the",
                "app (slack://open), \(start)Ann\(end);", "forged here",
            ], "\(rendered.lines)")
        // Markers take no columns.
        #expect(MessageRenderer.columns(rendered.lines[0]) == 27)
        renderer.hyperlinks = false
        #expect(renderer.rendered(text, indent: 0).links.isEmpty)
        #expect(renderer.lines(of: "<https://e.com/x|docs>", indent: 0) == ["docs (https://e.com/x)"])
        #expect(MessageRenderer.hyperlinkTarget("https://e.com/\u{1B}]8;;x") == "https://e.com/%1B]8;;x")
        #expect(MessageRenderer.hyperlinkTarget("javascript:alert(1)") == nil)
    }

    @Test func hyperlinksOnlyWhereTheTerminalShowsThem() {
        func on(_ environment: [String: String], color: Bool = true, tty: Bool = true) -> Bool {
            MessageRenderer.hyperlinksSupported(environment: environment, color: color, isTTY: tty)
        }
        #expect(on(["TERM_PROGRAM": "iTerm.app"]) && on(["TERM": "xterm-kitty"]) && on(["VTE_VERSION": "7600"]))
        #expect(on(["WT_SESSION": "1"]) && on(["TERM_PROGRAM": "WezTerm"]))
        #expect(!on(["TERM": "xterm-256color"]) && !on(["VTE_VERSION": "4600"]) && !on(["TERM": "dumb"]))
        #expect(!on(["TERM_PROGRAM": "iTerm.app"], color: false) && !on(["TERM_PROGRAM": "iTerm.app"], tty: false))
        #expect(on(["FORCE_HYPERLINK": "1"], color: false, tty: false))
        #expect(!on(["FORCE_HYPERLINK": "0", "TERM": "xterm-kitty"]))
    }

    @Test func historyWritesOSC8HyperlinksWhenAskedAndNeverFromTheData() throws {
        let link = #"{"type":"message","user":"U1","text":"see <https://example.com/r|the report>","ts":"1700000000.000100"}"#
        let forged =
            #"{"type":"message","user":"U1","text":"forged \u001b]8;;https://evil.example/\u001b\\click\u001b]8;;\u001b\\","ts":"1700000100.000100"}"#
        let export = try TestSupport.minimalExport(days: ["2023-11-14": "[\(link),\(forged)]"])
        let db = TestSupport.temporaryDirectory().appendingPathComponent("links.sqlite").path
        #expect(try CLITests.run(["--db", db, "import", export.path, "--quiet"]).status == 0)
        let linked = try CLITests.run(["--db", db, "history", "general"], environment: ["FORCE_HYPERLINK": "1"])
        #expect(linked.stdout.contains("see \u{1B}]8;;https://example.com/r\u{1B}\\the report\u{1B}]8;;\u{1B}\\"))
        #expect(!linked.stdout.contains("\u{1B}]8;;https://evil"), "\(linked.stdout)")
        #expect(linked.stdout.contains("forged ␛]8;;https://evil.example/␛\\click"), "\(linked.stdout)")
        let plain = try CLITests.run(["--db", db, "history", "general"], environment: ["FORCE_HYPERLINK": "0"])
        #expect(plain.stdout.contains("see the report (https://example.com/r)"))
        let piped = try CLITests.run(["--db", db, "history", "general"])
        #expect(piped.stdout.contains("see the report (https://example.com/r)"))
    }
}

@Suite struct HelpAndCompletionTests {
    /// Help paragraphs come out wrapped by argument-parser at the width, not at the source's line breaks.
    @Test(arguments: ["search", "import", "sync", "serve", "history", "conversations"])
    func helpIsWrappedToTheTerminal(command: String) throws {
        let run = try CLITests.run([command, "--help"], environment: ["COLUMNS": "60"])
        #expect(run.status == 0)
        let prose = run.stdout.split(separator: "\n").prefix { !$0.hasPrefix("Examples:") && !$0.hasPrefix("USAGE") }
        for line in prose { #expect(line.count <= 60, "\(command): \(line)") }
        // Not hand-wrapped: on a wide terminal the first paragraph's first line is as long as the paragraph allows.
        let wide = try CLITests.run([command, "--help"], environment: ["COLUMNS": "400"])
        let paragraphs = wide.stdout.components(separatedBy: "\n\n")
        #expect(paragraphs.count > 2)
        let first = paragraphs[1]
        let firstLine = first.split(separator: "\n").first ?? ""
        #expect(firstLine.count >= min(first.count, 300), "\(command): '\(first)'")
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScriptsNameTheCommands(shell: String) throws {
        let run = try CLITests.run(["--generate-completion-script", shell])
        #expect(run.status == 0)
        for command in ["search", "history", "conversations", "import"] { #expect(run.stdout.contains(command)) }
    }

    @Test func benchTablesAreAligned() throws {
        let run = try CLITests.run(["--db", ConversationsCommandTests.db, "bench", "search", "--runs", "1", "--warmup", "0"])
        #expect(run.status == 0, "\(run.stderr)")
        // The table by kind, then the slowest queries: a header line, then a table whose last column (the query)
        // is not padded.
        let parts = run.stdout.components(separatedBy: "slowest (median of the runs):\n")
        #expect(parts.count == 2, "\(run.stdout)")
        let table = parts[0].split(separator: "\n").dropFirst()
        let ends = Set(table.map { $0.count })
        #expect(table.count >= 3 && ends.count == 1, "\(run.stdout)")
        let slowest = (parts.last ?? "").split(separator: "\n")
        #expect(slowest.count >= 2 && slowest.count <= 6, "\(run.stdout)")
        let queries = Set(slowest.map { line in line.range(of: "  ", options: .backwards).map { line.distance(from: line.startIndex, to: $0.upperBound) } })
        #expect(queries.count == 1, "the query column starts at one place: \(run.stdout)")
    }
}

/// Golden output at a fixed width (COLUMNS=80) and time zone (UTC), as argument-parser's own end-to-end tests do:
/// each file in Tests/Golden holds a command, its stdout, stderr and exit status. `SLACKINDEX_UPDATE_GOLDEN=1
/// swift test --filter GoldenOutputTests` rewrites them (then read the diff).
@Suite struct GoldenOutputTests {
    static let folder = TestSupport.root.appendingPathComponent("Tests/Golden")

    @Test(arguments: [
        ("history-general", ["history", "#general", "--limit", "6", "--tz", "UTC"]),
        ("history-hit-marked", ["history", "#dev/1714146569.016512", "--limit", "3", "--tz", "UTC"]),
        ("history-reply-opens-thread", ["history", "#android/1709763021.521375", "--limit", "4", "--tz", "UTC"]),
        ("history-compact", ["history", "#marketing", "--limit", "3", "--compact", "--tz", "UTC"]),
        ("search-text", ["search", "\"data descriptor\"", "--limit", "2", "--tz", "UTC"]),
        ("search-csv", ["search", "\"data descriptor\"", "--limit", "1", "--format", "csv", "--tz", "UTC"]),
        ("conversations", ["conversations", "--tz", "UTC"]),
        ("unknown-conversation", ["history", "genral"]),
        ("unreadable-date", ["history", "general", "--before", "03/15/2024"]),
    ] as [(String, [String])])
    func outputMatchesTheGoldenFile(name: String, arguments: [String]) throws {
        let run = try CLITests.run(
            ["--db", ConversationsCommandTests.db] + arguments, environment: ["COLUMNS": "80", "NO_COLOR": "1"])
        let text = "$ slackindex \(arguments.joined(separator: " "))\n--- stdout\n\(run.stdout)--- stderr\n\(run.stderr)"
            + "--- status \(run.status)\n"
        let file = Self.folder.appendingPathComponent(name + ".txt")
        if ProcessInfo.processInfo.environment["SLACKINDEX_UPDATE_GOLDEN"] == "1" {
            try FileManager.default.createDirectory(at: Self.folder, withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
        }
        let expected = try String(contentsOf: file, encoding: .utf8)
        #expect(text == expected, "\(name): run with SLACKINDEX_UPDATE_GOLDEN=1 and compare")
    }
}

/// Every status the README's "Exit status" table documents, produced the way it says (2 and 130 have their own
/// suites: `ReadCommandsOnAMissingArchiveTests`, `CLITests.exitStatusesTellWhatHappened`, `InterruptTests`).
@Suite struct ExitStatusTests {
    @Test(arguments: [
        (["search", "\"data descriptor\""], 0, ""),
        (["conversations", "general"], 0, ""),
        (["stats"], 0, ""),
        (["search", "zzqqxxnothing"], 1, ""),
        (["conversations", "nothing-like-this"], 1, "No conversations match"),
        (["history", "genral"], 1, "did you mean"),
        (["search", "from:@nobody-at-all"], 1, "No user called"),
        (["search", ""], 64, "Nothing to search for"),
        (["search", "   "], 64, "Nothing to search for"),
        (["search", "x", "--limit", "0"], 64, "--limit"),
        (["search", "x", "--no-such-flag"], 64, "Unknown option '--no-such-flag'"),
        (["serach", "x"], 64, "Unknown command 'serach'; did you mean 'search'?"),
        (["bench", "serch"], 64, "Unknown command 'serch'; did you mean 'search'?"),
        (["frobnicate"], 64, "The commands are import, copy, sync, search"),
        (["history", "general", "--before", "03/15/2024"], 64, "is not a point in time"),
    ] as [([String], Int32, String)])
    func statusMeansWhatTheREADMESays(arguments: [String], status: Int32, message: String) throws {
        let run = try CLITests.run(["--db", ConversationsCommandTests.db] + arguments)
        #expect(run.status == status, "\(arguments): \(run.stderr)")
        #expect(message.isEmpty || run.stderr.contains(message), "\(arguments): \(run.stderr)")
    }

    @Test func searchHelpDocumentsTheStatusesItUses() throws {
        let help = try CLITests.run(["search", "--help"])
        let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(
            text.contains(
                "Exit status: 0 with hits, 1 with none, 2 with hits that --save-remote could not store (said on "
                    + "stderr), 64 for a bad flag or an empty query."), "\(help.stdout)")
    }
}
