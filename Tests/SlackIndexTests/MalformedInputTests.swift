import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

@Suite struct MalformedInputTests {
    static let good = TestSupport.goodDayFile

    private func importExport(_ url: URL) throws -> (Archive, ImportSummary) {
        let archive = try TestSupport.makeArchive()
        return (archive, try Importer(archive: archive).importExport(at: url.path))
    }

    @Test func truncatedDayFileIsReportedAndTheRestImports() throws {
        let export = try TestSupport.minimalExport(days: [
            "2023-11-14": Self.good, "2023-11-15": #"[{"type":"message","text":"cut"#,
        ])
        let (archive, summary) = try importExport(export)
        #expect(summary.messagesAdded == 1)
        #expect(summary.skippedFiles.count == 1)
        #expect(summary.skippedFiles.first?.path.hasSuffix("general/2023-11-15.json") == true)
        #expect(summary.skippedFiles.first?.reason.contains("truncated") == true)
        #expect(summary.hasSkips)
        #expect(try archive.stats().messages == 1)
    }

    @Test func dayFileThatIsNotAnArrayIsSkipped() throws {
        let export = try TestSupport.minimalExport(days: [
            "2023-11-14": Self.good, "2023-11-15": #"{"ok": true}"#,
        ])
        let (_, summary) = try importExport(export)
        #expect(summary.messagesAdded == 1)
        #expect(summary.skippedFiles.first?.reason.contains("JSON array") == true)
    }

    @Test func elementsThatAreNotMessagesAreCountedWithAReason() throws {
        let day = #"""
            [1, "x", null, {"type":"message","text":"no ts here"},
             {"type":"message","user":"U1","text":"kept","ts":"1700000000.000100"}]
            """#
        let (_, summary) = try importExport(try TestSupport.minimalExport(days: ["2023-11-14": day]))
        #expect(summary.messagesAdded == 1)
        #expect(summary.messagesSkipped == 4)
        #expect(summary.skipReasons["not a message object"] == 3)
        #expect(summary.skipReasons["no valid ts"] == 1)
    }

    @Test func stringNumbersAndEmptyListingsAreRead() throws {
        let day = #"""
            [{"type":"message","user":"U1","text":"parent","ts":"1700000000.000100","thread_ts":"1700000000.000100",
              "reply_count":"1","reactions":[{"name":"tada","count":"2","users":["U1", 7]}]},
             {"type":"message","user":"U1","text":"reply","ts":1700000001.5,"thread_ts":"1700000000.000100"}]
            """#
        let export = try TestSupport.minimalExport(
            days: ["2023-11-14": day], extra: ["canvases.json": #"[""]"#, "groups.json": #"[""]"#])
        let (archive, summary) = try importExport(export)
        #expect(summary.messagesAdded == 2)
        #expect(!summary.hasSkips)
        let general = try archive.conversation(named: "#general")
        let page = try archive.historyPage(conversation: general, direction: .before, from: nil, limit: 10)
        #expect(page.map(\.text) == ["parent"])
        #expect(page.first?.replyCount == 1)
        #expect(try SearchEngine(archive: archive).search("has::tada:").hits.count == 1)
    }

    @Test func unknownUsersBecomePlaceholders() throws {
        let day = #"""
            [{"type":"message","user":"USLACKBOT","text":"reminder","ts":"1700000000.000100"},
             {"type":"message","user":"W123","text":"hello from outside","ts":"1700000000.000200",
              "user_profile":{"name":"ext","real_name":"External Person","display_name":"ext-p"}},
             {"type":"message","subtype":"bot_message","bot_id":"B9","username":"deploybot","text":"",
              "ts":"1700000000.000300","attachments":[{"fallback":"deployed v1.2","title":"Deploy finished"}]}]
            """#
        let (archive, summary) = try importExport(try TestSupport.minimalExport(days: ["2023-11-14": day]))
        #expect(summary.messagesAdded == 3)
        #expect(summary.placeholderUsers == 3)
        let engine = SearchEngine(archive: archive)
        #expect(try engine.search("from:ext-p").hits.map(\.message.user) == ["ext-p"])
        #expect(try engine.search("deploy finished").hits.map(\.message.user) == ["deploybot"])
        #expect(try engine.search("reminder").hits.first?.message.userID == "USLACKBOT")
    }

    @Test func emptyTextWithBlocksOrFilesIsSearchable() throws {
        let day = #"""
            [{"type":"message","user":"U1","text":"","ts":"1700000000.000100","blocks":[{"type":"rich_text",
              "elements":[{"type":"rich_text_section","elements":[{"type":"text","text":"quarterly roadmap"},
              {"type":"user","user_id":"U1"}]}]}]},
             {"type":"message","user":"U1","text":"","ts":"1700000000.000200","files":[
              {"id":"F1","name":"budget-2024.xlsx","title":"Budget plan",
               "url_private":"https://files.slack.com/a/budget-2024.xlsx?t=xoxe-secret"}]},
             {"type":"message","user":"U1","text":"","ts":"1700000000.000300","files":[{"id":"F2",
              "mode":"hidden_by_limit"}]}]
            """#
        let (archive, summary) = try importExport(try TestSupport.minimalExport(days: ["2023-11-14": day]))
        #expect(summary.messagesAdded == 3)
        let engine = SearchEngine(archive: archive)
        #expect(try engine.search("roadmap").hits.count == 1)
        #expect(try engine.search("budget plan").hits.count == 1)
        #expect(try engine.search("has:file").hits.count == 2)
        let urls = try archive.pool.read { db in try String.fetchAll(db, sql: "SELECT url_private FROM file WHERE url_private IS NOT NULL") }
        #expect(urls.count == 1)
        #expect(urls.allSatisfy { !$0.contains("xoxe") })
    }

    @Test func nonDayFilesAndUnlistedFoldersAreReported() throws {
        let export = try TestSupport.minimalExport(
            days: ["2023-11-14": Self.good],
            extra: [
                "general/canvas_in_the_conversation.json": "{}",
                "FC_F05_My notes/2023-11-14.json": Self.good,
            ])
        let (archive, summary) = try importExport(export)
        #expect(summary.messagesAdded == 2)
        #expect(summary.ignoredFiles.contains { $0.hasSuffix("canvas_in_the_conversation.json") })
        #expect(summary.notes.contains { $0.contains("FC_F05_My notes") })
        #expect(try archive.conversation(named: "FC_F05_My notes").kind == .channel)
    }

    @Test func exportWithoutUsersStillImports() throws {
        let export = try TestSupport.writeExport([
            "channels.json": #"[{"id": "C1", "name": "general"}]"#,
            "general/2023-11-14.json": Self.good,
        ])
        let (_, summary) = try importExport(export)
        #expect(summary.messagesAdded == 1)
        #expect(summary.placeholderUsers == 1)
    }

    @Test func malformedListingIsReportedAndMessagesStillImport() throws {
        let export = try TestSupport.minimalExport(
            days: ["2023-11-14": Self.good], extra: ["users.json": "[{not json"])
        let (_, summary) = try importExport(export)
        #expect(summary.messagesAdded == 1)
        #expect(summary.skippedFiles.contains { $0.path.hasSuffix("users.json") })
    }

    @Test func notAnExportSaysSo() throws {
        let folder = TestSupport.temporaryDirectory()
        try Data("hello".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        let archive = try TestSupport.makeArchive()
        #expect(throws: ImportError.self) { try Importer(archive: archive).importExport(at: folder.path) }
        #expect(throws: ImportError.self) {
            try Importer(archive: archive).importExport(at: folder.appendingPathComponent("notes.txt").path)
        }
        #expect(throws: ImportError.self) { try Importer(archive: archive).importExport(at: "/nonexistent/x.zip") }
        let summary = Importer(archive: archive).importPaths([folder.path, TestSupport.sampleZip])
        #expect(summary.skippedFiles.first?.reason.contains("is not a Slack export") == true)
        #expect(summary.messagesAdded > 0)
    }

    @Test func zipNamesInUTF8WithoutTheFlagAndInCodePage437() throws {
        var zip = ZipWriter()
        zip.add("users.json", #"[{"id": "U1", "name": "ann"}]"#)
        zip.add(
            "channels.json",
            #"[{"id": "C1", "name": "東京オフィス"}, {"id": "C2", "name": "équipe"}, {"id": "C3", "name": "café"}]"#)
        // Slack's zips: UTF-8 bytes, flag not set.
        zip.add("東京オフィス/2023-11-14.json", Self.good, utf8Flag: false)
        zip.add("équipe/2023-11-14.json", Self.good.replacingOccurrences(of: "0100", with: "0200"), utf8Flag: false)
        // A real code page 437 name: "café" with é = 0x82.
        zip.add(
            nameBytes: Array("caf".utf8) + [0x82] + Array("/2023-11-14.json".utf8),
            contents: Data(Self.good.replacingOccurrences(of: "0100", with: "0300").utf8), utf8Flag: false)
        let url = TestSupport.temporaryDirectory().appendingPathComponent("names.zip")
        try zip.data().write(to: url)
        let archive = try TestSupport.makeArchive()
        let summary = try Importer(archive: archive).importExport(at: url.path)
        #expect(summary.notes.isEmpty)
        #expect(summary.messagesAdded == 3)
        for name in ["東京オフィス", "équipe", "café"] {
            #expect(try archive.stats(conversation: archive.conversation(named: name)).messages == 1)
        }
    }

    @Test func corruptZipEntryIsReported() throws {
        var zip = ZipWriter()
        zip.add("channels.json", #"[{"id": "C1", "name": "general"}]"#)
        zip.add("general/2023-11-14.json", Self.good)
        var data = zip.data()
        // Flip a byte inside the day file's stored contents: its CRC no longer matches.
        if let range = data.range(of: Data("fine words".utf8)) { data[range.lowerBound] = UInt8(ascii: "F") }
        let url = TestSupport.temporaryDirectory().appendingPathComponent("corrupt.zip")
        try data.write(to: url)
        let summary = try Importer(archive: TestSupport.makeArchive()).importExport(at: url.path)
        #expect(summary.skippedFiles.first?.reason.contains("CRC") == true)
    }

    /// A listing that cannot be read is skipped and reported like a malformed one; the messages still import (it
    /// used to stop the whole import: the export's check for a listing read the first one it found).
    @Test func unreadableListingInAZipIsReportedAndMessagesStillImport() throws {
        var zip = ZipWriter()
        zip.add("users.json", #"[{"id": "U1", "name": "ann", "real_name": "Unreadable Ann"}]"#)
        zip.add("channels.json", #"[{"id": "C1", "name": "general"}]"#)
        zip.add("general/2023-11-14.json", Self.good)
        var data = zip.data()
        let range = try #require(data.range(of: Data("Unreadable".utf8)))
        data[range.lowerBound] = UInt8(ascii: "u")
        let url = TestSupport.temporaryDirectory().appendingPathComponent("users-corrupt.zip")
        try data.write(to: url)
        let summary = try Importer(archive: TestSupport.makeArchive()).importExport(at: url.path)
        #expect(summary.messagesAdded == 1)
        #expect(summary.skippedFiles.count == 1)
        let skipped = try #require(summary.skippedFiles.first)
        #expect(skipped.path.hasSuffix("users.json"))
        #expect(skipped.reason.contains("CRC"), "\(skipped.reason)")
    }

    @Test func listingThatIsAFolderIsReportedAndMessagesStillImport() throws {
        let export = try TestSupport.minimalExport(days: ["2023-11-14": Self.good])
        try FileManager.default.removeItem(at: export.appendingPathComponent("users.json"))
        try FileManager.default.createDirectory(
            at: export.appendingPathComponent("users.json"), withIntermediateDirectories: false)
        let (_, summary) = try importExport(export)
        #expect(summary.messagesAdded == 1)
        let skipped = try #require(summary.skippedFiles.first)
        #expect(summary.skippedFiles.count == 1)
        #expect(skipped.path.hasSuffix("users.json"))
        #expect(skipped.reason.contains("folder"), "\(skipped.reason)")
    }
}
