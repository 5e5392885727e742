import Foundation
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

@Suite struct TimelineTests {
    /// The export's top-level messages and broadcasts of one folder, by ts: what history must show.
    static func exportTimeline(folder: String) throws -> [String] {
        let dir = URL(fileURLWithPath: TestSupport.sampleFolder).appendingPathComponent(folder)
        var ts: [(Int64, String)] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: dir.path) where file.hasSuffix(".json") {
            let data = try Data(contentsOf: dir.appendingPathComponent(file))
            let messages = try #require(JSONSerialization.jsonObject(with: data) as? [[String: Any]])
            for m in messages {
                let t = try #require(m["ts"] as? String)
                let thread = m["thread_ts"] as? String
                if thread == nil || thread == t || (m["subtype"] as? String) == "thread_broadcast" {
                    ts.append((try #require(SlackTimestamp.parseKey(t)), t))
                }
            }
        }
        return ts.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Walks a whole listing with cursors in one direction.
    static func walk(_ timeline: Timeline, start: TimelinePage, forward: Bool, limit: Int) throws -> [String] {
        var page = start
        var seen = page.messages.map(\.ts)
        var guardCount = 0
        while let cursor = forward ? page.next : page.previous {
            page = try timeline.page(cursor, limit: limit)
            seen = forward ? seen + page.messages.map(\.ts) : page.messages.map(\.ts) + seen
            guardCount += 1
            if guardCount > 10_000 { break }
        }
        return seen
    }

    @Test(arguments: [7, 50])
    func walkingForwardsAndBackwardsYieldsTheWholeConversation(limit: Int) throws {
        let archive = try TestSupport.sampleArchive()
        let timeline = Timeline(archive: archive, maxPages: 8)
        for folder in ["marketing", "general", "exec"] {
            let expected = try Self.exportTimeline(folder: folder)
            let conversation = try archive.conversation(named: folder)
            let backwards = try Self.walk(
                timeline, start: try timeline.history(conversation, at: .newest, limit: limit), forward: false,
                limit: limit)
            let forwards = try Self.walk(
                timeline, start: try timeline.history(conversation, at: .oldest, limit: limit), forward: true,
                limit: limit)
            #expect(backwards == expected, "backwards \(folder)")
            #expect(forwards == expected, "forwards \(folder)")
        }
    }

    @Test func manyMessagesInOneSecondAreNeverSkippedOrRepeated() throws {
        let messages = (0..<257).map { i in
            #"{"type":"message","user":"U1","text":"tick \#(i)","ts":"1700000000.\#(String(format: "%06d", i * 3))"}"#
        }
        let export = try TestSupport.minimalExport(days: ["2023-11-14": "[" + messages.joined(separator: ",") + "]"])
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: export.path)
        let timeline = Timeline(archive: archive)
        let general = try archive.conversation(named: "general")
        let expected = (0..<257).map { "1700000000." + String(format: "%06d", $0 * 3) }
        for limit in [1, 10, 64, 300] {
            let back = try Self.walk(
                timeline, start: try timeline.history(general, limit: limit), forward: false, limit: limit)
            let forward = try Self.walk(
                timeline, start: try timeline.history(general, at: .oldest, limit: limit), forward: true, limit: limit)
            #expect(back == expected)
            #expect(forward == expected)
        }
    }

    @Test func cursorsStayValidWhileHistoryChanges() throws {
        let base = (0..<40).map { i in
            #"{"type":"message","user":"U1","text":"m\#(i)","ts":"17000\#(String(format: "%05d", i * 10)).000000"}"#
        }
        let export = try TestSupport.minimalExport(days: ["2023-11-14": "[" + base.joined(separator: ",") + "]"])
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: export.path)
        let timeline = Timeline(archive: archive)
        let general = try archive.conversation(named: "general")
        let first = try timeline.history(general, limit: 10)
        let previous = try #require(first.previous)
        // Older history imported behind the cursor, a new message, and an edit.
        let older = #"[{"type":"message","user":"U1","text":"older","ts":"1699999000.000000"}]"#
        let newer = #"""
            [{"type":"message","user":"U1","text":"newest","ts":"1700009999.000000"},
             {"type":"message","user":"U1","text":"m5 edited","ts":"1700000050.000000",
              "edited":{"user":"U1","ts":"1700010000.000000"}}]
            """#
        _ = try Importer(archive: archive).importExport(
            at: try TestSupport.minimalExport(days: ["2023-11-13": older, "2023-11-15": newer]).path)
        let rest = try Self.walk(timeline, start: try timeline.page(previous, limit: 10), forward: false, limit: 10)
        let texts = try rest.map { ts in
            try archive.store.message(conversation: general, tsKey: SlackTimestamp.parseKey(ts) ?? 0)?.text ?? ""
        }
        #expect(texts.first == "older")
        #expect(texts.contains("m5 edited"))
        #expect(texts.count == 31)  // m0…m29 and "older": nothing skipped or repeated
        #expect(try timeline.history(general, limit: 1).messages.map(\.text) == ["newest"])
    }

    @Test func aroundReturnsThePointCentred() throws {
        let archive = try TestSupport.sampleArchive()
        let timeline = Timeline(archive: archive)
        let marketing = try archive.conversation(named: "marketing")
        let expected = try Self.exportTimeline(folder: "marketing")
        let middle = expected[expected.count / 2]
        let page = try timeline.history(
            marketing, at: .around(SlackTimestamp.parseKey(middle) ?? 0), limit: 11)
        #expect(page.messages.count == 11)
        #expect(page.messages[5].ts == middle)
        #expect(page.messages.map(\.ts) == Array(expected[(expected.count / 2 - 5)...(expected.count / 2 + 5)]))
        #expect(page.previous != nil && page.next != nil)
    }

    @Test func threadsMatchTheExport() throws {
        let archive = try TestSupport.sampleArchive()
        let timeline = Timeline(archive: archive)
        // Collect every thread of #marketing from the export.
        let dir = URL(fileURLWithPath: TestSupport.sampleFolder).appendingPathComponent("marketing")
        var threads: [String: [(Int64, String)]] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: dir.path) {
            let data = try Data(contentsOf: dir.appendingPathComponent(file))
            for m in try #require(JSONSerialization.jsonObject(with: data) as? [[String: Any]]) {
                guard let thread = m["thread_ts"] as? String, let ts = m["ts"] as? String else { continue }
                threads[thread, default: []].append((SlackTimestamp.parseKey(ts) ?? 0, ts))
            }
        }
        #expect(threads.count > 5)
        let marketing = try archive.conversation(named: "marketing")
        for (parent, members) in threads {
            let expected = members.sorted { $0.0 < $1.0 }.map(\.1)
            let start = try timeline.thread(marketing, threadTS: parent, limit: 3)
            #expect(try Self.walk(timeline, start: start, forward: true, limit: 3) == expected)
            #expect(start.messages.first?.ts == parent)
            // Opening the thread from a reply shows the same thread.
            if let reply = expected.last, reply != parent {
                #expect(try timeline.thread(marketing, threadTS: reply, limit: 500).messages.map(\.ts) == expected)
            }
        }
    }

    @Test func editThenReadReturnsTheNewTextFromAWarmCache() throws {
        let day = #"[{"type":"message","user":"U1","text":"before","ts":"1700000000.000100"}]"#
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.minimalExport(days: ["2023-11-14": day]).path)
        let timeline = Timeline(archive: archive)
        let general = try archive.conversation(named: "general")
        #expect(try timeline.history(general).messages.map(\.text) == ["before"])
        #expect(try timeline.history(general).messages.map(\.text) == ["before"])
        #expect(timeline.stats().hits == 1)
        let edit = #"""
            [{"type":"message","user":"U1","text":"after","ts":"1700000000.000100",
              "edited":{"user":"U1","ts":"1700000500.000000"}}]
            """#
        _ = try Importer(archive: archive).importExport(at: TestSupport.minimalExport(days: ["2023-11-14": edit]).path)
        #expect(try timeline.history(general).messages.map(\.text) == ["after"])
        // A write to another conversation leaves this page cached.
        let hitsBefore = timeline.stats().hits
        let other = try TestSupport.writeExport([
            "channels.json": #"[{"id": "C2", "name": "random"}]"#,
            "random/2023-11-14.json": #"[{"type":"message","user":"U1","text":"x","ts":"1700000000.000100"}]"#,
        ])
        _ = try Importer(archive: archive).importExport(at: other.path)
        #expect(try timeline.history(general).messages.map(\.text) == ["after"])
        #expect(timeline.stats().hits == hitsBefore + 1)
    }

    /// Pages name people as the archive names them now: after an import renames a user, the next page (the same
    /// archive, its names cached by the users' version) shows the new name, oldest message first in both directions.
    @Test func pagesShowAUsersNewNameAfterALaterImport() throws {
        let day = #"""
            [{"type":"message","user":"U1","text":"one","ts":"1700000000.000100"},
             {"type":"message","user":"U1","text":"two","ts":"1700000001.000100"}]
            """#
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.minimalExport(days: ["2023-11-14": day]).path)
        let general = try archive.conversation(named: "general")
        func page(_ direction: Archive.PageDirection) throws -> [String] {
            try archive.store.page(conversation: general, direction: direction, from: nil, limit: 50).map {
                "\($0.user ?? "-"): \($0.text)"
            }
        }
        #expect(try page(.before) == ["Ann Lee: one", "Ann Lee: two"])
        #expect(try page(.after) == ["Ann Lee: one", "Ann Lee: two"])
        let renamed = #"[{"id": "U1", "name": "ann", "real_name": "Ann Lee", "profile": {"display_name": "annie"}}]"#
        _ = try Importer(archive: archive).importExport(
            at: TestSupport.minimalExport(days: ["2023-11-14": day], extra: ["users.json": renamed]).path)
        #expect(try page(.before) == ["annie: one", "annie: two"])
        #expect(try page(.after) == ["annie: one", "annie: two"])
    }

    /// A page shows the normalised text where the text holds markup or entities or is empty, and the text itself
    /// otherwise (an attachment's or a file's words are searched, not shown); both ways of reading a row agree.
    @Test func pagesShowTheNormalisedTextOnlyWhereTheTextNeedsIt() throws {
        let day = #"""
            [{"type":"message","user":"U1","text":"hi <@U1> &amp; <https://example.com|the doc>","ts":"1700000000.000100"},
             {"type":"message","user":"U1","text":"see this","ts":"1700000001.000100",
              "attachments":[{"fallback":"Preview of the page","text":"Preview of the page"}]},
             {"type":"message","user":"U1","text":"","ts":"1700000002.000100",
              "files":[{"id":"F1","name":"report.pdf","title":"Quarterly"}]},
             {"type":"message","user":"U1","text":"here it is","ts":"1700000003.000100",
              "files":[{"id":"F2","name":"notes.txt"}]},
             {"type":"message","user":"U1","text":"a & b < c","ts":"1700000004.000100"},
             {"type":"message","user":"U1","text":"plain words","ts":"1700000005.000100"}]
            """#
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.minimalExport(days: ["2023-11-14": day]).path)
        let general = try archive.conversation(named: "general")
        let expected = [
            "hi @Ann Lee & the doc", "see this", "report.pdf Quarterly", "here it is", "a & b < c", "plain words",
        ]
        for direction in [Archive.PageDirection.before, .after] {
            let page = try archive.store.page(conversation: general, direction: direction, from: nil, limit: 50)
            #expect(page.map(\.plainText) == expected)
            for message in page {
                let read = try #require(try archive.store.message(conversation: general, tsKey: message.tsKey))
                #expect(read.plainText == message.plainText)
            }
        }
    }

    @Test func evictionUnderATinyBudgetKeepsResultsCorrect() throws {
        let archive = try TestSupport.sampleArchive()
        let tiny = Timeline(archive: archive, maxPages: 2, maxBytes: 4_000)
        let roomy = Timeline(archive: archive, maxPages: 0)
        let marketing = try archive.conversation(named: "marketing")
        let expected = try Self.exportTimeline(folder: "marketing")
        for limit in [3, 9] {
            let a = try Self.walk(tiny, start: try tiny.history(marketing, limit: limit), forward: false, limit: limit)
            #expect(a == expected)
        }
        #expect(tiny.stats().evictions + tiny.stats().rejections > 0)
        #expect(try roomy.history(marketing, limit: 5).messages.map(\.ts) == Array(expected.suffix(5)))
    }

    @Test(arguments: [
        ("1714000000.000100", "1714000000.000100", nil as String?),
        ("https://acme.slack.com/archives/C0123/p1714000000000100", "1714000000.000100", "C0123"),
        ("https://acme.slack.com/archives/C0123/p1714000000000100?thread_ts=1713999999.000200&cid=C0123",
         "1714000000.000100", "C0123"),
        ("C0123/1714000000.000100", "1714000000.000100", "C0123"),
    ])
    func pointsAreParsed(text: String, ts: String, conversation: String?) throws {
        let point = try #require(TimelinePoint.parse(text, timeZone: .gmt))
        #expect(point.ts == ts)
        #expect(point.conversationID == conversation)
    }

    @Test func datesAreLocalDays() throws {
        let tokyo = try #require(TimeZone(identifier: "Asia/Tokyo"))
        #expect(TimelinePoint.parse("2024-05-01", timeZone: .gmt)?.tsKey == 1_714_521_600_000_000)
        #expect(TimelinePoint.parse("2024-05-01", timeZone: tokyo)?.tsKey == 1_714_489_200_000_000)
        #expect(TimelinePoint.parse("2024-05-01T14:30", timeZone: .gmt)?.tsKey == 1_714_573_800_000_000)
        #expect(TimelinePoint.parse("yesterday-ish", timeZone: .gmt) == nil)
        #expect(throws: TimelineError.self) { try TimelineCursor(parsing: "garbage!") }
    }
}

@Suite struct TimelineDeletionTests {
    @Test func deletedMessagesAreAbsentUnlessAskedFor() throws {
        let day = #"""
            [{"type":"message","user":"U1","text":"stays","ts":"1700000000.000100"},
             {"type":"message","user":"U1","text":"goes away","ts":"1700000000.000200"},
             {"type":"message","subtype":"message_deleted","hidden":true,"ts":"1700000300.000000",
              "deleted_ts":"1700000000.000200"}]
            """#
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.minimalExport(days: ["2023-11-14": day]).path)
        let timeline = Timeline(archive: archive)
        let general = try archive.conversation(named: "general")
        #expect(try timeline.history(general).messages.map(\.text) == ["stays"])
        let all = try timeline.history(general, includeDeleted: true).messages
        #expect(all.map(\.text) == ["stays", "goes away"])
        #expect(all.last?.isDeleted == true)
        #expect(try SearchEngine(archive: archive).search("goes").hits.isEmpty)
        #expect(try archive.stats().messages == 1)
    }
}
