import Foundation
import SlackIndexServer
import Testing

@testable import SlackIndex
@testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// Two workspaces in one archive (issue 55): sample-data (acme) and a second generated export
/// (`Fixtures/globex-export.zip`: `gen-export --messages 300 --channels 6 --users 12 --days 30 --seed 55 --compact`,
/// its file permalinks' `acme.slack.com` changed to `globex.slack.com` so that the two domains differ). Both hold
/// `#general`, `#random`, `#engineering`, `#announcements`, `#dev` and `#backend`.
@Suite struct TwoWorkspaceTests {
    static let globexZip = TestSupport.root.appendingPathComponent("Tests/Fixtures/globex-export.zip")
        .path

    static func archive() throws -> (Archive, path: String) {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("two.sqlite").path
        let archive = try Archive(path: path)
        _ = try Importer(archive: archive).importExport(at: TestSupport.sampleFolder)
        _ = try Importer(archive: archive).importExport(at: globexZip)
        return (archive, path)
    }

    @Test func sharedNamesAreLabelledByWorkspaceAndOthersAreNot() throws {
        let (archive, _) = try Self.archive()
        let names = try archive.conversations().map(\.displayName)
        for shared in ["general", "random", "engineering", "announcements", "dev", "backend"] {
            #expect(names.contains("acme/#\(shared)") && names.contains("globex/#\(shared)"), "#\(shared)")
            #expect(!names.contains("#\(shared)"))
        }
        // Names only one workspace holds stay as they were.
        #expect(names.contains("#frontend") && names.contains("#android"))
        #expect(!names.contains { $0.hasSuffix("/#frontend") })
    }

    /// A sync brings its conversations as the token's workspace's (`auth.test`'s team and domain): synced from another
    /// archive's `serve`, globex's conversations sit beside acme's, labelled, as an import of its export would.
    @Test func aSyncedWorkspaceIsLabelledBesideAnImportedOne() async throws {
        let source = try Archive(path: TestSupport.temporaryDirectory().appendingPathComponent("globex.sqlite").path)
        _ = try Importer(archive: source).importExport(at: Self.globexZip)
        let user = try #require(try source.store.usersPage(after: nil, limit: 1).first).user.id
        let token = try source.createToken(userID: user, isAdmin: true).token
        let server = try await LiveSyncTests.start(source)
        let target = try TestSupport.sampleArchive()
        let summary = try await LiveSyncTests.sync(target, from: server, token: token)
        await server.stop()
        #expect(summary.messagesAdded > 0)
        let names = try target.conversations().map(\.displayName)
        for shared in ["general", "random", "engineering", "announcements", "dev", "backend"] {
            #expect(names.contains("acme/#\(shared)") && names.contains("globex/#\(shared)"), "#\(shared): \(names)")
        }
        #expect(try target.conversation(named: "globex/#general").workspace == "globex")
    }

    /// An API dump's conversations are its users' workspace's (their most common `team_id`; one user of another
    /// team does not decide it): a dump of globex's #general beside acme's export is labelled, by team id since a
    /// dump knows no domain. Before, the dump's #general had no workspace and both read "#general".
    @Test func aDumpedWorkspaceIsLabelledByItsUsersTeam() throws {
        let target = try TestSupport.sampleArchive()
        let folder = TestSupport.temporaryDirectory().appendingPathComponent("globex-dump")
        let files = [
            "users/UG0000001.json": #"{"id": "UG0000001", "name": "gina", "team_id": "TGLOBEX01"}"#,
            "users/UG0000002.json": #"{"id": "UG0000002", "name": "gus", "team_id": "TGLOBEX01"}"#,
            "users/UX0000001.json": #"{"id": "UX0000001", "name": "guest", "team_id": "TOTHER001"}"#,
            "channels.json": """
                [{"id": "CG0000001", "name": "general", "is_channel": true, "created": 1433558319}]
                """,
            "CG0000001/0001.json": """
                {"ok": true, "messages": [{"type": "message", "user": "UG0000001", "text": "hello from globex",
                 "ts": "1700000100.000100"}]}
                """,
        ]
        _ = try TestSupport.writeExport(files, in: folder)
        let summary = Importer(archive: target).importPaths([folder.path])
        #expect(summary.messagesAdded == 1, "\(summary)")
        let names = try target.conversations().map(\.displayName)
        #expect(names.contains("acme/#general") && names.contains("TGLOBEX01/#general"), "\(names)")
        let globex = try target.conversation(named: "TGLOBEX01/#general")
        #expect(globex.workspace == "TGLOBEX01")
        #expect(try Timeline(archive: target).history(globex, limit: 10).messages.map(\.text) == ["hello from globex"])
    }

    /// Sync pages imported from files (a generator's manifest names no team) take their messages' team: globex's
    /// #general beside acme's export is labelled. Before, it had no workspace and both read "#general".
    @Test func pagesFromFilesAreLabelledByTheirMessagesTeam() throws {
        let target = try TestSupport.sampleArchive()
        let folder = TestSupport.temporaryDirectory().appendingPathComponent("globex-pages")
        let files = [
            "manifest.json": """
                {"conversations": [{"id": "CG0000001", "name": "general", "kind": "channel", "folder": "general"}]}
                """,
            "general/history/page-0001.json": """
                {"ok": true, "messages": [
                 {"type": "message", "user": "UG0000001", "team": "TGLOBEX01", "text": "hello", "ts": "1700000200.000100"},
                 {"type": "message", "user": "UX0000001", "team": "TOTHER001", "text": "guest", "ts": "1700000150.000100"},
                 {"type": "message", "user": "UG0000002", "team": "TGLOBEX01", "text": "hi", "ts": "1700000100.000100"}]}
                """,
        ]
        _ = try TestSupport.writeExport(files, in: folder)
        let summary = Importer(archive: target).importPaths([folder.path])
        #expect(summary.messagesAdded == 3, "\(summary)")
        let names = try target.conversations().map(\.displayName)
        #expect(names.contains("acme/#general") && names.contains("TGLOBEX01/#general"), "\(names)")
        #expect(try target.conversation(named: "TGLOBEX01/#general").workspace == "TGLOBEX01")
    }

    @Test func oneWorkspaceArchiveIsNotLabelled() throws {
        let archive = try TestSupport.sampleArchive()
        #expect(try archive.conversations().allSatisfy { $0.workspace == nil && !$0.displayName.contains("/") })
    }

    @Test func inTakesWorkspaceSlashChannelAndAnAmbiguousNameSaysWhichWorkspacesHoldIt() async throws {
        let (archive, _) = try Self.archive()
        let engine = SearchEngine(archive: archive)
        let globex = try archive.conversation(named: "globex/#general")
        let acme = try archive.conversation(named: "acme/general")
        #expect(globex.id != acme.id && globex.workspace == "globex" && acme.workspace == "acme")

        var options = SearchOptions()
        options.limit = 1_000
        let hits = try engine.search("in:globex/#general", options: options).hits
        #expect(!hits.isEmpty)
        #expect(hits.allSatisfy { $0.message.conversationID == globex.id })
        #expect(hits.allSatisfy { $0.message.conversation == "globex/#general" })
        let acmeHits = try engine.search("in:ACME/#general", options: options).hits
        #expect(!acmeHits.isEmpty && acmeHits.allSatisfy { $0.message.conversationID == acme.id })

        #expect {
            try engine.search("in:#general", options: options)
        } throws: { error in
            let text = "\(error)"
            return text.contains("acme/#general (\(acme.id))") && text.contains("globex/#general (\(globex.id))")
                && text.contains("workspace/#name")
        }
        #expect(throws: StoreError.self) { try archive.conversation(named: "general") }
        #expect(throws: (any Error).self) { try engine.search("in:initech/#general", options: options) }
    }

    @Test func cliListsHitsAndHistoryNameTheWorkspace() throws {
        let (_, db) = try Self.archive()
        let listed = try CLITests.run(["--db", db, "ls", "general"])
        #expect(listed.status == 0)
        let lines = listed.stdout.split(separator: "\n").dropFirst()
        #expect(lines.count == 2)
        #expect(lines.contains { $0.contains("acme/#general") } && lines.contains { $0.contains("globex/#general") })

        let ambiguous = try CLITests.run(["--db", db, "search", "in:#general", "the"])
        #expect(ambiguous.status != 0)
        #expect(ambiguous.stderr.contains("acme/#general") && ambiguous.stderr.contains("globex/#general"))

        let found = try CLITests.run(["--db", db, "search", "in:globex/#general", "the", "--limit", "3"])
        #expect(found.status == 0)
        #expect(found.stdout.contains("globex/#general") && !found.stdout.contains("acme/#general"))

        let history = try CLITests.run(["--db", db, "history", "globex/#general", "--limit", "2"])
        #expect(history.status == 0)
        #expect(history.stdout.contains("globex/#general"))
    }
}

/// Group DMs are named by their members, as DMs are (issue 55), where people read names; Slack's API keeps Slack's
/// `mpdm-…` name, which its clients rely on.
@Suite struct GroupMessageNameTests {
    static let mpdm = "mpdm-asa.taylor--kwame.silva--sarah.thompson--charles.anderson-1"

    @Test(arguments: [
        ("mpdm-ann--bo-1", ["ann", "bo"]),
        ("mpdm-ann.lee--bo.kim--cy.wu-12", ["ann.lee", "bo.kim", "cy.wu"]),
        ("mpdm-ann-1", nil), ("mpdm---bo-1", nil), ("mpdm-ann--bo", nil), ("team-ann--bo-1", nil),
    ] as [(String, [String]?)])
    func handlesComeFromSlacksName(name: String, handles: [String]?) {
        #expect(Conversation.groupMessageMembers(name) == handles)
    }

    @Test func listingsHitsAndHistoryNameTheMembersAndTheAPIKeepsSlacksName() async throws {
        let f = try APIFixture()
        let shown = "@asa.taylor, @kwame.silva, @sarah.thompson, @charles.anderson"
        let group = try f.archive.conversation(named: Self.mpdm)
        #expect(group.kind == .mpim && group.displayName == shown)
        #expect(try f.archive.conversations().filter { $0.kind == .mpim }.map(\.displayName) == [shown])
        var options = SearchOptions()
        options.limit = 5
        let hits = try SearchEngine(archive: f.archive).search("in:\(Self.mpdm)", options: options).hits
        #expect(!hits.isEmpty && hits.allSatisfy { $0.message.conversation == shown })

        let list = try await f.ok("conversations.list", ["types": "mpim"])
        let names = (list["channels"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(names == [Self.mpdm])

        let db = TestSupport.temporaryDirectory().appendingPathComponent("mpim.sqlite").path
        #expect(try await CLITests.run(["--db", db, "import", TestSupport.sampleFolder, "--quiet"]).status == 0)
        let listed = try await CLITests.run(["--db", db, "ls", "--kind", "mpim"])
        #expect(listed.stdout.contains("@asa.taylor, @kwame.silva"), "\(listed.stdout)")
        #expect(!listed.stdout.contains("mpdm-"))
    }
}

/// `slackindex.conversations` (the web UI's sidebar) names the workspace of a conversation whose name another
/// workspace holds.
@Suite struct WorkspaceSidebarTests {
    @Test func theSidebarsListCarriesTheWorkspaceOfSharedNames() async throws {
        let (archive, _) = try TwoWorkspaceTests.archive()
        let api = SlackAPI(archive: archive, configuration: SlackAPIConfiguration())
        let token = try archive.createToken(userID: APIFixture.adminUser, isAdmin: true, label: "tests").token
        let response = await api.call("slackindex.conversations", parameters: [:], bearer: token)
        let body = try #require(try JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any])
        let list = try #require(body["conversations"] as? [[String: Any]])
        let generals = list.filter { $0["name"] as? String == "general" }
        #expect(Set(generals.compactMap { $0["workspace"] as? String }) == ["acme", "globex"])
        #expect(list.filter { $0["name"] as? String == "frontend" }.allSatisfy { $0["workspace"] == nil })
    }
}

/// The web UI over two workspaces in a real browser (`scripts/web_ui_workspaces.py`, headless Chromium as
/// `WebUIBrowserTests`): the sidebar, the title, the in: chip and the results name the workspace of shared names;
/// the workspace switcher keeps the sidebar and the searches to the chosen workspace.
@Suite struct WorkspaceBrowserTests {
    @Test(
        .enabled(
            if: WebUIBrowserTests.required || WebUIBrowserTests.available,
            "needs python3 with selenium and chromium-driver"))
    func theSidebarTitleChipAndResultsNameTheWorkspace() throws {
        let (archive, db) = try TwoWorkspaceTests.archive()
        let token = try CLITests.run(["--db", db, "token", "create", "--user", APIFixture.adminUser, "--admin"]).stdout
            .trimmingCharacters(in: .newlines)
        let server = try ServeCLITests.serve(db: db)
        let base = String(server.url.dropLast("api/".count))
        let script = TestSupport.root.appendingPathComponent("scripts/web_ui_workspaces.py").path
        let teams = try archive.store.workspaces().map(\.teamID)
        let globex = try #require(try archive.store.workspaces().first { $0.domain == "globex" }).teamID
        let run = try SlackSDKClientTests.python([script, base, token, "the in:globex/#general", globex, "the"])
        #expect(server.stop() == 0)
        try #require(run.status == 0, "\(run.stderr)")
        let out = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let sidebar = (out["sidebar"] as? [[String]] ?? []).filter { $0.first == "general" || $0.first == "frontend" }
        #expect(Set(sidebar) == [["general", "acme"], ["general", "globex"], ["frontend", ""]], "\(sidebar)")
        #expect(out["title"] as? String == "globex/#general")
        #expect(Set(out["chips"] as? [String] ?? []) == ["acme/#general", "globex/#general"])
        #expect(out["hits"] as? [String] == ["globex/#general"])
        // The workspace switcher (issue 51): both workspaces; globex chosen, the sidebar and a search keep to it.
        #expect((out["switcher"] as? [[String]])?.map { $0[0] } == [""] + teams)
        let globexIDs = Set(try archive.conversations().filter { $0.workspaceID == globex }.map(\.id))
        #expect(Set(out["team_sidebar"] as? [String] ?? []) == globexIDs)
        let hits = Set(out["team_hits"] as? [String] ?? [])
        #expect(!hits.isEmpty && hits.isSubset(of: globexIDs), "\(hits)")
    }
}
