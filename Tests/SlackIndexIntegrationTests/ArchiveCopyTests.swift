import Foundation
import SlackIndex
@testable import SlackIndexStore
import Testing
@testable import SlackIndexTestSupport

/// `slackindex copy`: what a copy gives back is what its source gives, either backend either way.
struct ArchiveCopyTests {
    /// sample-data, then an edit, a deletion (of a message met later too) and reaction events in #general.
    static func source() throws -> Archive {
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.sampleFolder)
        let dir = TestSupport.temporaryDirectory()
        let general = try APIFixture.conversationID(folder: "general")
        let user = APIFixture.dmMembers[0]
        let page: [[String: Any]] = [
            ["type": "message", "user": user, "text": "original deploy plan", "ts": "1700000000.000100"],
            ["type": "message", "user": user, "text": "doomed words", "ts": "1700000050.000200"],
            ["type": "message", "user": user, "text": "edited rollout plan", "ts": "1700000000.000100",
             "edited": ["user": user, "ts": "1700000100.000000"]],
            ["type": "message", "subtype": "message_deleted", "deleted_ts": "1700000050.000200", "ts": "1700000060.000000"],
            ["type": "reaction_added", "user": user, "reaction": "tada", "item": ["type": "message", "ts": "1700000000.000100"]],
            ["type": "reaction_added", "user": "U0NYQG8S2T7", "reaction": "tada", "item": ["type": "message", "ts": "1700000000.000100"]],
        ]
        let url = dir.appendingPathComponent("events.json")
        try JSONSerialization.data(withJSONObject: page).write(to: url)
        let summary = Importer(archive: archive).importPaths([url.path], conversation: general)
        #expect(summary.messagesAdded == 2 && summary.stopped == nil, "\(summary)")
        return archive
    }

    /// The same directory, every page and thread, every message's JSON, flags and reactions, and the same hits.
    static func expectSame(_ got: Archive, _ expected: Archive) throws {
        try PostgresContractTests.expectSameDirectory(expected, got)
        try PostgresContractTests.expectSamePages(expected, got)
        let raws = try PostgresContractTests.raws(expected)
        #expect(raws.count > 3_000)
        let copied = try PostgresContractTests.raws(got)
        #expect(copied.count == raws.count)
        let differing = raws.filter { copied[$0.key] != $0.value }
        #expect(differing.isEmpty, "\(differing.first.map { "\($0.key): \($0.value.suffix(160)) vs \(copied[$0.key]?.suffix(160) ?? "none")" } ?? "")")
        var options = SearchOptions()
        options.sort = .newest
        options.limit = 100
        for query in ["deploy", "exception", "rollout plan", "doomed", "has:reaction", "from:@" + APIFixture.dmMembers[0]] {
            func hits(_ archive: Archive) throws -> [String] {
                let found = try SearchEngine(archive: archive).search(query, options: options)
                return found.hits.map { "\($0.message.conversationID) \($0.message.ts)" } + ["\(found.total.map(String.init) ?? "none")"]
            }
            #expect(try hits(got) == hits(expected), "\(query)")
        }
    }

    @Test func aCopyGivesBackWhatItsSourceGivesAndTwiceAddsNothing() throws {
        let source = try Self.source()
        let copy = try TestSupport.makeArchive()
        let first = try Importer(archive: copy).copy(from: source.store, as: nil)
        #expect(first.messagesAdded == (try source.stats()).messages + (try source.stats()).deletedMessages)
        try Self.expectSame(copy, source)
        let again = try Importer(archive: copy).copy(from: source.store, as: nil)
        #expect(again.messagesAdded == 0 && again.messagesUpdated == 0 && again.messagesUnchanged == first.messagesAdded)
    }

    @Test func asAUserTheCopyHoldsOnlyWhatTheyMayRead() throws {
        let source = try Self.source()
        let reader = APIToken(id: 0, userID: APIFixture.outsider, isAdmin: false, created: 0)
        let visible = try source.conversations().filter(reader.mayRead)
        let copy = try TestSupport.makeArchive()
        let summary = try Importer(archive: copy).copy(from: source.store, as: APIFixture.outsider)
        #expect(try copy.conversations().map(\.id).sorted() == visible.map(\.id).sorted())
        #expect(visible.count < (try source.conversations().count), "the outsider does not see every conversation")
        #expect(try copy.conversations().allSatisfy { $0.id != APIFixture.dm })
        let expected = try visible.reduce(0) { $0 + (try source.stats(conversation: $1)).messages }
        #expect(try copy.stats().messages == expected && summary.messagesAdded >= expected)
        // What the outsider's token reads in the source, the copy holds the same.
        for conversation in visible {
            let page = try source.store.page(conversation: conversation, direction: .before, from: nil, limit: 30)
            let other = try copy.conversation(named: conversation.id)
            #expect(
                try copy.store.page(conversation: other, direction: .before, from: nil, limit: 30).map(PostgresContractTests.shown)
                    == page.map(PostgresContractTests.shown))
        }
        #expect(throws: ImportError.self) { _ = try Importer(archive: copy).copy(from: source.store, as: "UNOBODY") }
    }

    @Test func aStoppedCopyIsCompletedByTheSameCopy() throws {
        let source = try Self.source()
        let copy = try TestSupport.makeArchive()
        let stop = StopSignal()
        let stopped = try Importer(archive: copy, stop: stop).copy(from: source.store, as: nil) { progress in
            if progress.conversationsDone == 3 { stop.request() }
        }
        #expect(stopped.interrupted)
        let total = try source.stats().messages + source.stats().deletedMessages
        #expect(stopped.messagesAdded > 0 && stopped.messagesAdded < total)
        let rest = try Importer(archive: copy).copy(from: source.store, as: nil)
        #expect(rest.messagesAdded == total - stopped.messagesAdded && !rest.interrupted)
        try Self.expectSame(copy, source)
    }

    @Test func theCommandSaysWhatWentWrong() throws {
        let db = try ServeCLITests.importSample()
        let same = try CLITests.run(["--db", db, "copy", "--to", db])
        #expect(same.status != 0 && same.stderr.contains("the same archive"), "\(same.stderr)")
        let target = TestSupport.temporaryDirectory().appendingPathComponent("mine.sqlite").path
        let nobody = try CLITests.run(["--db", db, "copy", "--to", target, "--as", "UNOBODY"])
        #expect(nobody.status == 1 && nobody.stderr.contains("No user with id 'UNOBODY'"), "\(nobody.stderr)")
        let made = try CLITests.run(["--db", db, "copy", "--to", target, "--as", APIFixture.outsider, "--json"])
        #expect(made.status == 0, "\(made.stderr)")
        let summary = try JSONSerialization.jsonObject(with: Data(made.stdout.utf8)) as? [String: Any]
        #expect((summary?["messages_added"] as? Int ?? 0) > 1_000, "\(made.stdout)")
        let jobs = try CLITests.run(["--db", db, "copy", "--to", target + "2", "--jobs", "2"])
        #expect(jobs.status == 64 && jobs.stderr.contains("needs a PostgreSQL archive"), "\(jobs.stderr)")
        let missing = try CLITests.run(["copy", "--from", "/nonexistent/a.sqlite", "--to", target])
        #expect(missing.status == 2 && missing.stderr.contains("no archive at /nonexistent/a.sqlite"), "\(missing.stderr)")
    }
}

extension ArchiveCopyTests {
    /// Every conversation's id, shown name (`acme/#general` where two workspaces share a name) and workspace.
    static func workspaces(_ archive: Archive) throws -> [String] {
        try archive.conversations().map { "\($0.id) \($0.displayName) \($0.workspaceID ?? "-")" }.sorted()
    }

    /// Two workspaces in one archive (sample-data's and another export's, both with a `#general`): the copy keeps
    /// each conversation in its workspace, so the shared names read as they did.
    @Test func aCopyKeepsEachConversationsWorkspace() throws {
        let source = try TestSupport.makeArchive()
        _ = try Importer(archive: source).importExport(at: TestSupport.sampleFolder)
        _ = try Importer(archive: source).importExport(at: TwoWorkspaceTests.globexZip)
        let expected = try Self.workspaces(source)
        #expect(Set(expected.map { $0.split(separator: " ").last ?? "" }).count == 2, "two workspaces: \(expected)")
        #expect(expected.contains { $0.contains("/#general") }, "a shared name is labelled: \(expected)")
        let copy = try TestSupport.makeArchive()
        _ = try Importer(archive: copy).copy(from: source.store, as: nil)
        #expect(try Self.workspaces(copy) == expected)
    }
}

/// The same copies across backends: SQLite into PostgreSQL, and PostgreSQL back into a new SQLite file.
@Suite(.enabled(if: PostgresTestServer.isAvailable, "needs a PostgreSQL 15 server (Debian's postgresql-15)"))
struct ArchiveCopyPostgresTests {
    @Test func sqliteToPostgresAndBackGivesTheSame() throws {
        let server = try #require(PostgresTestServer.shared, "\(PostgresTestServer.unavailableReason)")
        let source = try ArchiveCopyTests.source()
        let postgres = try Archive(path: try server.database())
        _ = try Importer(archive: postgres).copy(from: source.store, as: nil)
        try ArchiveCopyTests.expectSame(postgres, source)
        let back = try TestSupport.makeArchive()
        _ = try Importer(archive: back).copy(from: postgres.store, as: nil)
        try ArchiveCopyTests.expectSame(back, source)
        let again = try Importer(archive: postgres).copy(from: source.store, as: nil)
        #expect(again.messagesAdded == 0 && again.messagesUpdated == 0)
    }

    @Test func twoWorkspacesCopyIntoPostgreSQLAndBack() throws {
        let server = try #require(PostgresTestServer.shared, "\(PostgresTestServer.unavailableReason)")
        let source = try TestSupport.makeArchive()
        _ = try Importer(archive: source).importExport(at: TestSupport.sampleFolder)
        _ = try Importer(archive: source).importExport(at: TwoWorkspaceTests.globexZip)
        let postgres = try Archive(path: try server.database())
        _ = try Importer(archive: postgres).copy(from: source.store, as: nil)
        #expect(try ArchiveCopyTests.workspaces(postgres) == ArchiveCopyTests.workspaces(source))
        let back = try TestSupport.makeArchive()
        _ = try Importer(archive: back).copy(from: postgres.store, as: nil)
        #expect(try ArchiveCopyTests.workspaces(back) == ArchiveCopyTests.workspaces(source))
    }

    /// The command line, with a password-less URL as an organisation would pass it, and `--as`.
    @Test func theCommandCopiesIntoAndOutOfPostgreSQL() throws {
        let server = try #require(PostgresTestServer.shared, "\(PostgresTestServer.unavailableReason)")
        let db = try ServeCLITests.importSample()
        let postgres = try server.database()
        let into = try CLITests.run(["--db", db, "copy", "--to", postgres, "--quiet"])
        #expect(into.status == 0 && into.stdout.contains("Copied") && into.stdout.contains("3,000 added"), "\(into.stdout) \(into.stderr)")
        let mine = TestSupport.temporaryDirectory().appendingPathComponent("mine.sqlite").path
        let out = try CLITests.run(["copy", "--from", postgres, "--to", mine, "--as", APIFixture.dmMembers[0], "--quiet"])
        #expect(out.status == 0, "\(out.stderr)")
        let reader = APIToken(id: 0, userID: APIFixture.dmMembers[0], isAdmin: false, created: 0)
        let visible = try Archive(path: db).conversations().filter(reader.mayRead).map(\.id).sorted()
        #expect(try Archive(path: mine, access: .readOnly).conversations().map(\.id).sorted() == visible)
        let search = try CLITests.run(["--db", mine, "search", "exception", "--json"])
        #expect(search.status == 0 && !search.stdout.isEmpty)
    }
}
