import Foundation
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@testable import SlackIndexTestSupport

/// API pages into an archive that has never seen their conversation (issue 17, first part): the conversation is
/// created from its id, users become placeholders, and a later export names both without duplicating anything.
@Suite struct APIDumpTests {
    static let page = #"""
        {"ok": true, "has_more": false, "pin_count": 0, "messages": [
          {"type": "message", "user": "U0AAAAAAAA1", "text": "third, about the deploy", "ts": "1700000300.000100"},
          {"type": "message", "user": "U0AAAAAAAA2", "text": "second", "ts": "1700000200.000100"},
          {"type": "message", "user": "U0AAAAAAAA1", "text": "first", "ts": "1700000100.000100"}],
         "response_metadata": {"next_cursor": ""}}
        """#

    @Test func aPageFolderNamedByAConversationIdCreatesIt() throws {
        let dump = TestSupport.temporaryDirectory().appendingPathComponent("dump/C0VFAZVVNIR")
        try FileManager.default.createDirectory(at: dump, withIntermediateDirectories: true)
        try Data(Self.page.utf8).write(to: dump.appendingPathComponent("0001.json"))
        let archive = try TestSupport.makeArchive()
        let summary = Importer(archive: archive).importPaths([dump.path])
        #expect(summary.skippedFiles.isEmpty, "\(summary.skippedFiles)")
        #expect(summary.conversationsAdded == 1 && summary.messagesAdded == 3)
        #expect(summary.notes.contains { $0.contains("C0VFAZVVNIR was not in the archive") })
        let created = try archive.conversation(named: "C0VFAZVVNIR")
        #expect(created.kind == .channel && created.name == "C0VFAZVVNIR")
        #expect(try archive.stats().placeholderUsers == 2)
        #expect(try SearchEngine(archive: archive).count("deploy in:C0VFAZVVNIR").0 == 1)
        // Again: nothing new.
        let again = Importer(archive: archive).importPaths([dump.path])
        #expect(again.conversationsAdded == 0 && again.messagesAdded == 0 && again.messagesUnchanged == 3)

        // The workspace's export, later: it names the channel and its users, and adds what the pages lacked.
        let day = #"""
            [{"type": "message", "user": "U0AAAAAAAA1", "text": "first", "ts": "1700000100.000100"},
             {"type": "message", "user": "U0AAAAAAAA2", "text": "fourth", "ts": "1700000400.000100"}]
            """#
        let export = try TestSupport.writeExport([
            "users.json": #"[{"id": "U0AAAAAAAA1", "name": "ann"}, {"id": "U0AAAAAAAA2", "name": "bob"}]"#,
            "channels.json": #"[{"id": "C0VFAZVVNIR", "name": "general", "created": 1433558319}]"#,
            "general/2023-11-14.json": day,
        ])
        let merged = try Importer(archive: archive).importExport(at: export.path)
        #expect(merged.conversationsAdded == 0 && merged.conversationsUpdated == 1)
        #expect(merged.messagesAdded == 1 && merged.messagesUnchanged == 1)
        let named = try archive.conversation(named: "general")
        #expect(named.id == "C0VFAZVVNIR" && named.rowID == created.rowID)
        let stats = try archive.stats()
        #expect(stats.messages == 4 && stats.conversations == 1 && stats.placeholderUsers == 0)
    }

    @Test(arguments: [("D0ABCDEFGH1", ConversationKind.dm), ("G0ABCDEFGH1", .private), ("C0ABCDEFGH1", .channel)])
    func theConversationFlagNamesTheKindByItsPrefix(id: String, kind: ConversationKind) throws {
        let file = TestSupport.temporaryDirectory().appendingPathComponent("page.json")
        try Data(Self.page.utf8).write(to: file)
        let archive = try TestSupport.makeArchive()
        let summary = Importer(archive: archive).importPaths([file.path], conversation: id)
        #expect(summary.messagesAdded == 3, "\(summary.skippedFiles)")
        #expect(try archive.conversation(named: id).kind == kind)
    }

    @Test func aNameThatIsNoIdStillNeedsTheConversation() throws {
        let file = TestSupport.temporaryDirectory().appendingPathComponent("page.json")
        try Data(Self.page.utf8).write(to: file)
        let archive = try TestSupport.makeArchive()
        for name in ["general", "c0vfazvvnir", "C0VF", "X0ABCDEFGH1"] {
            let summary = Importer(archive: archive).importPaths([file.path], conversation: name)
            #expect(summary.messagesAdded == 0)
            #expect(summary.skippedFiles.first?.reason.contains("No conversation called '\(name)'") == true, "\(name)")
        }
        #expect(try archive.stats().conversations == 0)
    }
}

@Suite struct APIDumpTreeTests {
    /// A conversations.replies response for the thread of `parent`, as a per-thread reply file.
    static func replies(_ parent: String, _ replyTS: String) -> String {
        #"{"ok": true, "has_more": false, "messages": [{"type": "message", "user": "U0AAAAAAAA1", "text": "third, about the deploy", "ts": "\#(parent)", "thread_ts": "\#(parent)", "reply_count": 1}, {"type": "message", "user": "U0AAAAAAAA2", "text": "a reply", "ts": "\#(replyTS)", "thread_ts": "\#(parent)"}]}"#
    }

    @Test(arguments: ["by-conversation", "messages-and-threads"])
    func aTreeOfResponsesImportsEveryConversation(layout: String) throws {
        let root = TestSupport.temporaryDirectory().appendingPathComponent("dump")
        var files: [String: String] = [:]
        let reply = Self.replies("1700000300.000100", "1700000350.000100")
        // As conversations.history shows a thread's parent: with its thread_ts and reply_count.
        let threaded = APIDumpTests.page.replacingOccurrences(
            of: #""ts": "1700000300.000100"}"#,
            with: #""ts": "1700000300.000100", "thread_ts": "1700000300.000100", "reply_count": 1}"#)
        if layout == "by-conversation" {
            files["C0VFAZVVNIR/0001.json"] = threaded
            files["C0VFAZVVNIR/threads/1700000300.000100.json"] = reply
            files["D0ABCDEFGH1/0001.json"] = APIDumpTests.page
        } else {
            files["messages/C0VFAZVVNIR/1.json"] = threaded
            files["threads/C0VFAZVVNIR/1700000300.000100.json"] = reply
            files["messages/D0ABCDEFGH1/1.json"] = APIDumpTests.page
        }
        // Users and conversations as dumping tools write them: one object per file, list and info responses.
        files["users/U0AAAAAAAA1.json"] = #"{"id": "U0AAAAAAAA1", "name": "ann", "real_name": "Ann Lee"}"#
        files["channels.json"] =
            #"{"ok": true, "channels": [{"id": "C0VFAZVVNIR", "name": "general", "is_private": false}], "response_metadata": {"next_cursor": ""}}"#
        files["info/D0ABCDEFGH1.json"] = #"{"ok": true, "channel": {"id": "D0ABCDEFGH1", "is_im": true, "user": "U0AAAAAAAA1"}}"#
        files["notes.json"] = #"{"exported_by": "my script"}"#
        _ = try TestSupport.writeExport(files, in: root)
        let archive = try TestSupport.makeArchive()
        let summary = Importer(archive: archive).importPaths([root.path])
        #expect(summary.conversationsAdded == 2 && summary.usersAdded == 1)
        #expect(summary.messagesAdded == 7, "\(summary)")
        #expect(summary.skippedFiles.map(\.path) == [root.path + "/notes.json"], "\(summary.skippedFiles)")
        #expect(summary.skippedFiles.first?.reason.contains("not an API page, user, conversation or id map") == true)
        #expect(try archive.conversation(named: "general").id == "C0VFAZVVNIR")
        let dm = try archive.conversation(named: "D0ABCDEFGH1")
        #expect(dm.kind == .dm && dm.displayName.contains("ann"), "\(dm.displayName)")
        #expect(try archive.stats().placeholderUsers == 1)  // U0AAAAAAAA2 is only in messages
        let stats = try archive.stats(conversation: archive.conversation(named: "C0VFAZVVNIR"))
        #expect(stats.messages == 4 && stats.threads == 1 && stats.replies == 1)
        // Twice: nothing new.
        let again = Importer(archive: archive).importPaths([root.path])
        #expect(again.messagesAdded == 0 && again.messagesUpdated == 0 && again.conversationsAdded == 0, "\(again)")
        // The thread's parent is in its history page and its reply file: one message, counted once (issue 55).
        #expect(again.messagesUnchanged == 7, "\(again)")
    }

    @Test func theCLIImportsATreeIntoANewArchive() throws {
        let root = TestSupport.temporaryDirectory().appendingPathComponent("dump")
        _ = try TestSupport.writeExport(["messages/C0VFAZVVNIR/1.json": APIDumpTests.page], in: root)
        let db = TestSupport.temporaryDirectory().appendingPathComponent("a.sqlite").path
        let run = try CLITests.run(["--db", db, "import", root.path, "--json", "--quiet"])
        #expect(run.status == 0, "\(run.stderr)")
        let summary = try CLITests.json(run.stdout.split(separator: "\n")[0])
        #expect(summary["messages_added"] as? Int == 3 && summary["conversations_added"] as? Int == 1)
        let history = try CLITests.run(["--db", db, "history", "C0VFAZVVNIR", "--compact"])
        #expect(history.status == 0 && history.stdout.contains("third, about the deploy"), "\(history.stdout)")
    }
}

extension APIDumpTreeTests {
    @Test func anExportWithoutListingsIsStillReadAsAnExport() throws {
        let root = TestSupport.temporaryDirectory().appendingPathComponent("export")
        _ = try TestSupport.writeExport(["D0ABCDEFGH1/2023-11-14.json": TestSupport.goodDayFile], in: root)
        #expect(!Importer.looksLikeSyncPages(root.path))
        let tree = TestSupport.temporaryDirectory().appendingPathComponent("dump")
        _ = try TestSupport.writeExport(["D0ABCDEFGH1/1.json": APIDumpTests.page], in: tree)
        #expect(Importer.looksLikeSyncPages(tree.path))
    }
}
