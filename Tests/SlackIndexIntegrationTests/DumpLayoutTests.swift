import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// Issue 17's "must show": one workspace in every layout, each imported into an empty archive, gives the export's
/// messages, threads and reply counts; all of them into one archive give no duplicates, and again nothing changes.
@Suite struct DumpLayoutTests {
    static let fixture = DumpFixture()

    /// Writes `layout` of the fixture under a new temporary folder and returns the path to import.
    static func write(_ layout: String) throws -> String {
        let root = TestSupport.temporaryDirectory().appendingPathComponent(layout)
        switch layout {
        case "export": return try fixture.export(in: root).path
        case "tree": return try fixture.tree(in: root).path
        case "api-script": return try fixture.apiScript(in: root).path
        case "mixed": return try fixture.mixedFolder(in: root).path
        case "lines": return try fixture.jsonLines(at: root.appendingPathComponent("dump.jsonl")).path
        case "lines-as-json": return try fixture.jsonLines(at: root.appendingPathComponent("dump.json")).path
        default: return try fixture.slackdump(layout, in: root).path
        }
    }

    static let layouts = ["tree", "api-script", "mixed", "lines", "lines-as-json", "slackdump", "slackdump-file", "slackdump-dump"]

    @Test(arguments: layouts)
    func eachLayoutImportsLikeTheExport(layout: String) throws {
        let reference = try TestSupport.makeArchive()
        let exported = Importer(archive: reference).importPaths([try Self.write("export")])
        #expect(!exported.hasSkips, "\(exported)")
        let expected = try DumpFixture.contents(of: reference)
        #expect(expected.count == Self.fixture.messages.count + 3)

        let archive = try TestSupport.makeArchive()
        let path = try Self.write(layout)
        // Transactions of a few messages: pages pass through the writer thread in many sets, each written in ts
        // order, newest page first.
        let summary = Importer(archive: archive, commitMessages: 4).importPaths([path])
        #expect(!summary.hasSkips, "\(summary.skippedFiles) \(summary.skipReasons)")
        // Thread parents come in history and replies pages: each is one message added, not also "unchanged".
        #expect(summary.messagesAdded == 21, "\(summary)")
        #expect(summary.messagesUpdated == 0 && summary.messagesUnchanged == 0, "\(summary)")
        #expect(summary.conversationsAdded == 3 && summary.placeholderUsers == 0, "\(summary)")
        // Every message, thread and reply count, and each conversation's kind (the group DM's `G…` id named
        // `mpdm-…` by names.json is a group DM, not a private channel).
        let got = try DumpFixture.contents(of: archive)
        #expect(got == expected, "\(Set(got).symmetricDifference(expected).sorted().prefix(8))")
        let stats = try archive.stats()
        #expect(stats.messages == 21 && stats.threads == 2 && stats.replies == 3)
        #expect(try archive.conversation(named: "secret").id == "G0PRIVATE01")
        let dm = try archive.conversation(named: "D0DIRECT001")
        #expect(dm.kind == .dm && dm.displayName.contains("bob"), "\(dm.displayName)")
        let again = Importer(archive: archive).importPaths([path])
        #expect(again.messagesAdded == 0 && again.messagesUpdated == 0 && again.conversationsAdded == 0, "\(again)")
        #expect(again.messagesUnchanged == 21, "each message once: \(again)")
    }

    /// A dump onto the export's archive adds nothing and counts the conversations it lists as updated or
    /// unchanged (issue 55: they were counted 0/0/0).
    @Test(arguments: layouts)
    func aDumpOntoTheExportsArchiveAddsNothingAndCountsItsConversations(layout: String) throws {
        let archive = try TestSupport.makeArchive()
        _ = Importer(archive: archive).importPaths([try Self.write("export")])
        let summary = Importer(archive: archive).importPaths([try Self.write(layout)])
        #expect(!summary.hasSkips, "\(summary.skippedFiles) \(summary.skipReasons)")
        #expect(summary.messagesAdded == 0 && summary.conversationsAdded == 0, "\(summary)")
        #expect(summary.conversationsUpdated + summary.conversationsUnchanged >= 3, "\(summary)")
        #expect(try archive.stats().messages == 21)
    }

    /// A file in a dump that is not JSON is reported as not imported, not passed over in silence (issue 55).
    @Test func aDumpsFilesThatAreNotJSONAreReported() throws {
        let path = try Self.write("api-script")
        let readme = path + "/readme.txt"
        try Data("made by a script".utf8).write(to: URL(fileURLWithPath: readme))
        let summary = Importer(archive: try TestSupport.makeArchive()).importPaths([path])
        #expect(summary.ignoredFiles == [readme], "\(summary)")
        #expect(!summary.hasSkips && summary.messagesAdded == 21, "\(summary)")
    }

    @Test func everyLayoutIntoOneArchiveHasNoDuplicates() throws {
        let reference = try TestSupport.makeArchive()
        _ = Importer(archive: reference).importPaths([try Self.write("export")])
        let expected = try DumpFixture.contents(of: reference)
        let archive = try TestSupport.makeArchive()
        // Dumps first (conversations created from ids), the export last (it names them), and back again.
        let paths = try (Self.layouts + ["export"]).map(Self.write)
        for path in paths + paths.reversed() {
            let summary = Importer(archive: archive).importPaths([path])
            #expect(!summary.hasSkips, "\(path): \(summary.skippedFiles) \(summary.skipReasons)")
        }
        #expect(try DumpFixture.contents(of: archive) == expected)
        #expect(try archive.stats().messages == 21)
        #expect(try SearchEngine(archive: archive).count("reply in:#general").0 == 2)
        try IndexOracle.expectExact(archive)
    }
}

extension DumpLayoutTests {
    @Test func idMapsNameOnlyWhatNothingElseNamed() throws {
        let root = TestSupport.temporaryDirectory().appendingPathComponent("dump")
        _ = try TestSupport.writeExport(
            [
                "C0VFAZVVNIR.json": APIDumpTests.page,
                "maps/channels.json": #"{"C0VFAZVVNIR": "general", "G0ABCDEFGH1": "secret"}"#,
                "maps/users.json": #"{"U0AAAAAAAA1": "ann"}"#,
            ], in: root)
        let archive = try TestSupport.makeArchive()
        let summary = Importer(archive: archive).importPaths([root.path])
        #expect(!summary.hasSkips, "\(summary.skippedFiles)")
        #expect(summary.recognised == ["API pages": 1, "id maps": 2])
        #expect(try archive.conversation(named: "general").id == "C0VFAZVVNIR")
        #expect(try archive.conversation(named: "secret").kind == .private)
        #expect(try archive.store.users(matching: "ann").map(\.id) == ["U0AAAAAAAA1"])
        // An export names them for real; the map, imported again, changes nothing.
        let export = try TestSupport.writeExport([
            "users.json": #"[{"id": "U0AAAAAAAA1", "name": "annie"}]"#,
            "channels.json": #"[{"id": "C0VFAZVVNIR", "name": "town-square"}]"#,
        ])
        _ = try Importer(archive: archive).importExport(at: export.path)
        let again = Importer(archive: archive).importPaths([root.path])
        #expect(again.conversationsUpdated == 0 && again.placeholderUsers == 0, "\(again)")
        #expect(try archive.conversation(named: "town-square").id == "C0VFAZVVNIR")
        #expect(try archive.store.users(matching: "annie").map(\.id) == ["U0AAAAAAAA1"])
    }

    /// Issue 55's "must show": a Web-API script's dump (`channels.json` of ids, `names.json`, `messages/<id>/<n>.json`,
    /// `threads/`, `users/<id>.json`) of a generated export with 22 conversations, 45 users and its threads, made by
    /// `scripts/export-to-dump.py --layout api-script`, imports with the export's exact counts into an empty archive,
    /// and onto the export's archive adds nothing.
    @Test func aWebAPIScriptDumpOfAGeneratedExportImportsWithExactCounts() throws {
        let dump = TestSupport.temporaryDirectory().appendingPathComponent("api-script")
        let convert = try CLITests.run(
            executable: URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", TestSupport.root.appendingPathComponent("scripts/export-to-dump.py").path,
             TestSupport.sampleFolder, dump.path, "--layout", "api-script"])
        try #require(convert.status == 0, "\(convert.stderr)")
        let reference = try TestSupport.sampleArchive()
        let expected = try DumpFixture.contents(of: reference)
        let referenceStats = try reference.stats()
        #expect(referenceStats.conversations >= 20 && referenceStats.threads > 20)

        let archive = try TestSupport.makeArchive()
        let summary = Importer(archive: archive, commitMessages: 500).importPaths([dump.path])
        #expect(!summary.hasSkips, "\(summary.skippedFiles) \(summary.skipReasons)")
        #expect(summary.messagesAdded == referenceStats.messages, "\(summary)")
        #expect(summary.messagesUpdated == 0 && summary.messagesUnchanged == 0, "\(summary)")
        #expect(summary.conversationsAdded == referenceStats.conversations, "\(summary)")
        // The export's two authors missing from users.json, as the export's import finds them.
        #expect(summary.placeholderUsers == referenceStats.placeholderUsers, "\(summary)")
        // Every message, thread and reply count, and each conversation's kind (the group DM's `G…` id named
        // `mpdm-…` by names.json is a group DM, not a private channel).
        let got = try DumpFixture.contents(of: archive)
        #expect(got == expected, "\(Set(got).symmetricDifference(expected).sorted().prefix(8))")
        let stats = try archive.stats()
        #expect(stats.messages == referenceStats.messages && stats.threads == referenceStats.threads)
        #expect(stats.replies == referenceStats.replies && stats.users == referenceStats.users, "\(stats)")

        let onto = Importer(archive: reference).importPaths([dump.path])
        #expect(!onto.hasSkips, "\(onto.skippedFiles) \(onto.skipReasons)")
        #expect(onto.messagesAdded == 0 && onto.messagesUpdated == 0 && onto.conversationsAdded == 0, "\(onto)")
        #expect(onto.messagesUnchanged == referenceStats.messages, "\(onto)")
        #expect(try DumpFixture.contents(of: reference) == expected)
        #expect(try reference.stats().messages == referenceStats.messages)
    }

    @Test func theMessagesChannelFieldWinsOverTheFolderAndTheFlagOverBoth() throws {
        let root = TestSupport.temporaryDirectory().appendingPathComponent("C0FOLDER001")
        let page = #"[{"type": "message", "user": "U0AAAAAAAA1", "text": "here", "ts": "1700000100.000100"}, {"type": "message", "channel": "C0OTHER0001", "user": "U0AAAAAAAA1", "text": "there", "ts": "1700000200.000100"}, {"type": "message", "channel": "general", "user": "U0AAAAAAAA1", "text": "nowhere", "ts": "1700000300.000100"}]"#
        _ = try TestSupport.writeExport(["1.json": page], in: root)
        let archive = try TestSupport.makeArchive()
        let summary = Importer(archive: archive).importPaths([root.path])
        #expect(summary.messagesAdded == 2 && summary.messagesSkipped == 1)
        #expect(summary.skipReasons.keys.first?.contains("No conversation called 'general'") == true, "\(summary)")
        #expect(try archive.stats(conversation: archive.conversation(named: "C0FOLDER001")).messages == 1)
        #expect(try archive.stats(conversation: archive.conversation(named: "C0OTHER0001")).messages == 1)
        let forced = try TestSupport.makeArchive()
        let all = Importer(archive: forced).importPaths([root.path], conversation: "D0FORCED001")
        #expect(try all.messagesAdded == 3 && forced.stats().conversations == 1, "\(all)")
    }

    @Test(arguments: ["tree", "slackdump"])
    func aFullDiskStopsADumpsImportAndTheSameImportFinishesIt(layout: String) throws {
        // 1,203 messages: more than the empty archive's pages hold.
        let fixture = DumpFixture(perConversation: 400)
        let root = TestSupport.temporaryDirectory().appendingPathComponent(layout)
        let path = try (layout == "tree" ? fixture.tree(in: root) : fixture.slackdumpArchive(in: root)).path
        let archive = try TestSupport.makeArchive()
        // No page may be added to the file: the writer thread's first transaction that grows it fails.
        let pages = try archive.pool.read { db in
            try Int.fetchOne(db, sql: "PRAGMA page_count")! - Int.fetchOne(db, sql: "PRAGMA freelist_count")!
        }
        try archive.store.limitSizeForTesting(pages: pages)
        let importer = Importer(archive: archive, commitMessages: 100)
        let stopped = importer.importPaths([path])
        // Stopped with the documented message and what was committed, not a skipped file (issue 47's D6).
        #expect(stopped.stopped?.contains("is full") == true, "\(stopped)")
        #expect(stopped.skippedFiles.isEmpty, "\(stopped.skippedFiles)")
        #expect(try archive.stats().messages < 1_203)
        #expect(try archive.stats().messages == stopped.messagesAdded)
        try archive.store.limitSizeForTesting(pages: nil)
        let again = importer.importPaths([path])
        #expect(!again.hasSkips, "\(again.skippedFiles)")
        #expect(try archive.stats().messages == 1_203)
        let reference = try TestSupport.makeArchive()
        _ = Importer(archive: reference).importPaths([try fixture.export(in: root.appendingPathComponent("export")).path])
        #expect(try DumpFixture.contents(of: archive) == DumpFixture.contents(of: reference))
    }

    @Test func pagesAreReadInTheOrderOfTheirOldestTimestamp() throws {
        let root = TestSupport.temporaryDirectory().appendingPathComponent("order")
        let files = [
            "C0AAAAAAAA1/1.json": #"{"ok": true, "messages": [{"thread_ts": "1500000000.000100", "ts" : "1700000300.000100"}]}"#,
            "C0AAAAAAAA1/2.json": "{\n  \"messages\": [\n    {\n      \"ts\":\n \"1700000100.000100\"}]}",
            "C0BBBBBBBB1/1.json": #"[{"type": "message", "ts": "1700000200.000100"}, {"ts": "1700000050.000100"}]"#,
            "users.json": #"{"ok": true, "members": []}"#,
        ]
        _ = try TestSupport.writeExport(files, in: root)
        let sets = [
            PageSet(owner: .reference("C0AAAAAAAA1"), files: ["1.json", "2.json"].map { root.path + "/C0AAAAAAAA1/" + $0 }),
            PageSet(owner: .reference("C0BBBBBBBB1"), files: [root.path + "/C0BBBBBBBB1/1.json", root.path + "/users.json"]),
        ]
        #expect(Importer.timeHint(of: sets[0].files[0]) == SlackTimestamp.parseKey("1700000300.000100"))
        #expect(Importer.timeHint(of: sets[1].files[1]) == nil)
        let order = Importer.timeOrder(sets).map { sets[$0.set].files[$0.file].dropFirst(root.path.count + 1) }
        #expect(order == ["users.json", "C0BBBBBBBB1/1.json", "C0AAAAAAAA1/2.json", "C0AAAAAAAA1/1.json"])
    }

    @Test func linesAreReadInTheOrderOfTheirOldestTimestamp() throws {
        let file = TestSupport.temporaryDirectory().appendingPathComponent("order.jsonl")
        let lines = [
            #"{"messages": [{"ts": "1700000300.000100"}, {"ts": "1700000250.000100"}]}"#,
            #"{"ts": "1700000100.000100"}"#, "", #"{"ok": true, "members": []}"#, #"[{"ts": "1700000200.000100"}]"#,
        ]
        try Data(lines.joined(separator: "\r\n").utf8).write(to: file)
        var reader = try OrderedLines(path: file.path)
        var order: [Int] = []
        while let line = try reader.next() {
            order.append(reader.number)
            #expect(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == lines[reader.number - 1])
        }
        #expect(order == [3, 4, 2, 5, 1])
    }

    @Test func brokenLinesAreReportedByLineAndTheRestImports() throws {
        let file = TestSupport.temporaryDirectory().appendingPathComponent("dump.jsonl")
        let lines = [
            #"{"type": "message", "channel": "C0VFAZVVNIR", "user": "U0AAAAAAAA1", "text": "one", "ts": "1700000100.000100"}"#,
            #"{"type": "message", "channel": "C0VFAZVVNIR", "text": "cut"#,
            #"{"exported_by": "a script"}"#,
            #"{"type": "message", "channel": "C0VFAZVVNIR", "user": "U0AAAAAAAA1", "text": "two", "ts": "1700000200.000100"}"#,
        ]
        try Data(lines.joined(separator: "\r\n").utf8).write(to: file)
        let archive = try TestSupport.makeArchive()
        let summary = Importer(archive: archive).importPaths([file.path])
        #expect(summary.messagesAdded == 2 && summary.recognised == ["JSON lines files": 1], "\(summary)")
        #expect(summary.skippedFiles.map(\.path) == [file.path + ":2", file.path + ":3"], "\(summary.skippedFiles)")
    }

    @Test func pagesConcatenatedOnOneLineAreReportedNotHalfImported() throws {
        let file = TestSupport.temporaryDirectory().appendingPathComponent("C0VFAZVVNIR.json")
        try Data((APIDumpTests.page + APIDumpTests.page).replacingOccurrences(of: "\n", with: " ").utf8).write(to: file)
        let archive = try TestSupport.makeArchive()
        let summary = Importer(archive: archive).importPaths([file.path])
        #expect(summary.messagesAdded == 0 && summary.skippedFiles.count == 1, "\(summary)")
        #expect(summary.skippedFiles.first?.reason.contains("truncated or not JSON") == true)
    }
}

extension DumpLayoutTests {
    @Test func slackdumpsLatestChunkWinsAndTheFileIsOpenedReadOnly() throws {
        let path = try Self.write("slackdump")
        let database = path + "/slackdump.sqlite"
        let before = try Data(contentsOf: URL(fileURLWithPath: database))
        let archive = try TestSupport.makeArchive()
        let summary = Importer(archive: archive).importPaths([path])
        #expect(summary.recognised == ["slackdump archives": 1] && summary.messagesAdded == 21, "\(summary)")
        let engine = SearchEngine(archive: archive)
        #expect(try engine.count("older").0 == 0)
        #expect(try engine.count("\"general message 0\"").0 == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: path) == ["slackdump.sqlite"])
    }

    @Test func aFileThatIsNotSlackdumpsDatabaseIsReported() throws {
        let file = TestSupport.temporaryDirectory().appendingPathComponent("other.sqlite")
        let queue = try DatabaseQueue(path: file.path)
        try queue.write { try $0.execute(sql: "CREATE TABLE t (x)") }
        try queue.close()
        let summary = Importer(archive: try TestSupport.makeArchive()).importPaths([file.path])
        #expect(summary.messagesAdded == 0)
        #expect(summary.skippedFiles.first?.reason.contains("is not a slackdump archive database") == true, "\(summary)")
    }
}
