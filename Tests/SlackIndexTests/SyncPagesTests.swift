import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// Sync pages (the generator's history pages and delta) applied on top of the sample export.
@Suite struct SyncPagesTests {
    struct Expected: Decodable {
        struct Edit: Decodable {
            var ts: String
            var new_text: String
        }
        var id: String
        var final_messages: Int
        var edited: [Edit]
        var deleted_ts: [String]
    }

    static func expected() throws -> [Expected] {
        try ["marketing", "exec", "D0VC4NV56E1"].map { folder in
            let url = URL(fileURLWithPath: TestSupport.samplePages).appendingPathComponent("\(folder)/expected.json")
            return try JSONDecoder().decode(Expected.self, from: Data(contentsOf: url))
        }
    }

    /// - Parameter deletedMayBeAbsent: a live sync never receives deleted messages, so it has no row to mark.
    static func check(_ archive: Archive, deletedMayBeAbsent: Bool = false) throws {
        let engine = SearchEngine(archive: archive)
        for expected in try Self.expected() {
            let conversation = try archive.conversation(named: expected.id)
            #expect(try archive.stats(conversation: conversation).messages == expected.final_messages)
            for edit in expected.edited {
                let message = try #require(
                    try archive.store.message(conversation: conversation, tsKey: SlackTimestamp.parseKey(edit.ts) ?? 0))
                #expect(message.text == edit.new_text)
            }
            var options = SearchOptions()
            options.limit = 100_000
            options.sort = .newest
            let listed = Set(try engine.search("in:\(expected.id)", options: options).hits.map(\.message.ts))
            let timeline = Timeline(archive: archive)
            var page = try timeline.history(conversation, at: .oldest, limit: 500, includeDeleted: false)
            var history = Set(page.messages.map(\.ts))
            while let next = page.next {
                page = try timeline.page(next, limit: 500)
                history.formUnion(page.messages.map(\.ts))
            }
            for ts in expected.deleted_ts {
                #expect(!listed.contains(ts), "deleted \(ts) still searchable")
                #expect(!history.contains(ts), "deleted \(ts) still in history")
                let stored = try archive.store.message(conversation: conversation, tsKey: SlackTimestamp.parseKey(ts) ?? 0)
                #expect(stored?.isDeleted == true || (deletedMayBeAbsent && stored == nil), "deleted \(ts) is stored")
            }
        }
        // Edits, deletions and pending events left the index exactly what the stored messages say.
        try IndexOracle.expectExact(archive)
    }

    @Test func exportHistoryAndDeltaGiveTheExpectedArchive() throws {
        let archive = try TestSupport.makeArchive()
        let importer = Importer(archive: archive)
        _ = try importer.importExport(at: TestSupport.sampleFolder)
        let pages = importer.importPaths([TestSupport.samplePages])
        #expect(!pages.hasSkips)
        #expect(pages.messagesUpdated == (try Self.expected().reduce(0) { $0 + $1.edited.count }))
        try Self.check(archive)
        // Applying everything again changes nothing.
        let before = try ImportTests.dump(archive)
        let again = importer.importPaths([TestSupport.samplePages])
        #expect(again.messagesAdded == 0 && again.messagesUpdated == 0)
        #expect(try ImportTests.dump(archive) == before)
    }

    @Test func pagesOutOfOrderReachTheSameState() throws {
        let inOrder = try TestSupport.makeArchive()
        _ = try Importer(archive: inOrder).importExport(at: TestSupport.sampleFolder)
        _ = Importer(archive: inOrder).importPaths([TestSupport.samplePages])

        // Delta first (its deletions wait for their messages), then history pages, then the export.
        let shuffled = try TestSupport.makeArchive()
        let importer = Importer(archive: shuffled)
        _ = try importer.importExport(at: TestSupport.sampleFolder)  // conversations and users first
        try shuffled.pool.write { db in try db.execute(sql: "DELETE FROM message; DELETE FROM reaction; DELETE FROM file;") }
        try shuffled.pool.write { db in
            try db.execute(sql: "INSERT INTO message_fts (message_fts) VALUES ('delete-all'); DELETE FROM message_word")
        }
        for folder in ["marketing", "exec", "D0VC4NV56E1"] {
            let base = TestSupport.samplePages + "/" + folder
            for sub in ["delta", "history"] {
                let files = try FileManager.default.contentsOfDirectory(atPath: base + "/" + sub).sorted().reversed()
                for file in files {
                    let summary = try importer.importPages(at: base + "/" + sub + "/" + file, conversation: folder)
                    #expect(!summary.hasSkips)
                }
            }
        }
        _ = try importer.importExport(at: TestSupport.sampleFolder)
        try Self.check(shuffled)
        let a = try ImportTests.dump(shuffled, raw: false)
        let b = try ImportTests.dump(inOrder, raw: false)
        #expect(a.count == b.count)
        let differing = zip(a, b).filter { $0 != $1 }.prefix(2)
        #expect(differing.isEmpty, "\(differing.map { "\($0.0.prefix(300))\n≠ \($0.1.prefix(300))" })")
    }

    @Test func pageShapesAndErrors() throws {
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(
            at: TestSupport.minimalExport(days: ["2023-11-14": MalformedInputTests.good]).path)
        let dir = TestSupport.temporaryDirectory()
        let bare = dir.appendingPathComponent("bare.json")
        try Data(#"[{"type":"message","user":"U1","text":"from a bare array","ts":"1700000001.000000"}]"#.utf8)
            .write(to: bare)
        let wrapped = dir.appendingPathComponent("wrapped.json")
        try Data(
            #"{"messages":[{"type":"message","user":"U1","text":"reply","ts":"1700000002.000000","thread_ts":"1700000000.000100"}]}"#
                .utf8
        ).write(to: wrapped)
        let failed = dir.appendingPathComponent("error.json")
        try Data(#"{"ok": false, "error": "channel_not_found"}"#.utf8).write(to: failed)
        let importer = Importer(archive: archive)
        let summary = importer.importPaths([bare.path, wrapped.path, failed.path], conversation: "general")
        #expect(summary.messagesAdded == 2)
        #expect(summary.skippedFiles.count == 1)
        #expect(summary.skippedFiles.first?.reason.contains("channel_not_found") == true)
        // The reply raised its parent's reply count.
        let general = try archive.conversation(named: "general")
        #expect(try archive.store.message(conversation: general, tsKey: 1_700_000_000_000_100)?.replyCount == 1)
        // Pages for a conversation the archive does not know say so.
        let unknown = importer.importPaths([bare.path], conversation: "nope")
        #expect(unknown.skippedFiles.first?.reason.contains("No conversation called 'nope'") == true)
    }

    @Test func reactionEventsAreAppliedOnceAndWaitForTheirMessage() throws {
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(
            at: TestSupport.minimalExport(days: ["2023-11-14": MalformedInputTests.good]).path)
        let dir = TestSupport.temporaryDirectory()
        func page(_ name: String, _ events: String) throws -> String {
            let url = dir.appendingPathComponent(name)
            try Data(events.utf8).write(to: url)
            return url.path
        }
        let added = try page(
            "added.json",
            #"""
            [{"type":"reaction_added","user":"U1","reaction":"tada","item":{"type":"message","ts":"1700000000.000100"}},
             {"type":"reaction_added","user":"U2","reaction":"tada","item":{"type":"message","ts":"1700000000.000100"}},
             {"type":"reaction_added","user":"U1","reaction":"eyes","item":{"type":"message","ts":"1700000099.000000"}}]
            """#)
        let importer = Importer(archive: archive)
        let engine = SearchEngine(archive: archive)
        _ = importer.importPaths([added], conversation: "general")
        _ = importer.importPaths([added], conversation: "general")  // twice: counted once
        let general = try archive.conversation(named: "general")
        let id = try #require(try archive.store.message(conversation: general, tsKey: 1_700_000_000_000_100)).rowID
        #expect(try archive.store.details(of: [id])[id]?.reactions == [StoredReaction(name: "tada", count: 2, users: ["U1", "U2"])])
        #expect(try engine.search("has::tada:").hits.count == 1)
        // The reaction on a message not archived yet waits for it.
        #expect(try engine.search("has::eyes:").hits.isEmpty)
        let late = try page(
            "late.json", #"[{"type":"message","user":"U1","text":"late one","ts":"1700000099.000000"}]"#)
        _ = importer.importPaths([late], conversation: "general")
        #expect(try engine.search("has::eyes:").hits.map(\.message.text) == ["late one"])
        let removed = try page(
            "removed.json",
            #"""
            [{"type":"reaction_removed","user":"U1","reaction":"tada","item":{"type":"message","ts":"1700000000.000100"}},
             {"type":"reaction_removed","user":"U2","reaction":"tada","item":{"type":"message","ts":"1700000000.000100"}}]
            """#)
        _ = importer.importPaths([removed], conversation: "general")
        #expect(try engine.search("has::tada:").hits.isEmpty)
        #expect(try engine.search("has:reaction").hits.map(\.message.text) == ["late one"])
    }
}

@Suite struct SyncGapTests {
    @Test func aMissingPageIsReportedAsAGap() throws {
        let archive = try TestSupport.makeArchive()
        let importer = Importer(archive: archive)
        _ = try importer.importExport(at: TestSupport.sampleFolder)
        let history = TestSupport.samplePages + "/marketing/history"
        let files = try FileManager.default.contentsOfDirectory(atPath: history).sorted()
        #expect(files.count >= 4)
        for file in files where file != files[2] {
            _ = try importer.importPages(at: history + "/" + file, conversation: "marketing")
        }
        let gaps = try archive.syncGaps()
        #expect(gaps.count == 1)
        // The gap starts at the first message of the missing page and ends at the next page that is there.
        let missing = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: history + "/" + files[2])))
                as? [String: Any])
        let messages = try #require(missing["messages"] as? [[String: Any]])
        #expect(gaps.first?.newestTS == messages.first?["ts"] as? String)
        let after = try #require(
            JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: history + "/" + files[3])))
                as? [String: Any])
        #expect(gaps.first?.olderTS == (after["messages"] as? [[String: Any]])?.first?["ts"] as? String)
        // With the page, the sequence connects.
        _ = try importer.importPages(at: history + "/" + files[2], conversation: "marketing")
        #expect(try archive.syncGaps().isEmpty)
    }
}
