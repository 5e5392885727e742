import Foundation
import Testing

@_spi(Benchmarks) @testable import SlackIndex

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
