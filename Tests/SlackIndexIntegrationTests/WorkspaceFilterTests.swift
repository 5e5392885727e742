import Foundation
@testable import SlackIndexServer
import Testing

@testable import SlackIndex
@testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// Many workspaces in one archive (issue 51): sample-data (acme) and `Fixtures/globex-export.zip` (globex), each
/// also imported alone. `--workspace` (CLI) and `team_id` (serve) keep a search, a listing, a name and the counts
/// to one workspace; `--json` outputs carry the team ids. Every check also fails when the filter is ignored: the
/// unfiltered answer holds the other workspace's conversations.
@Suite struct WorkspaceFilterTests {
    /// The two-workspace archive (SQLite), its path, and acme's and globex's workspace records.
    static func two() throws -> (archive: Archive, path: String, acme: WorkspaceInfo, globex: WorkspaceInfo) {
        let (archive, path) = try TwoWorkspaceTests.archive()
        let workspaces = try archive.store.workspaces()
        let acme = try #require(workspaces.first { $0.domain == "acme" })
        let globex = try #require(workspaces.first { $0.domain == "globex" })
        return (archive, path, acme, globex)
    }

    /// An export imported alone into a new SQLite archive.
    static func alone(_ export: String) throws -> Archive {
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: export)
        return archive
    }

    /// The team id of each hit's conversation.
    static func teams(_ hits: [SearchHit], in archive: Archive) throws -> Set<String?> {
        Set(try hits.map { hit in try archive.conversation(named: hit.message.conversationID).workspaceID })
    }

    @Test func aFilteredSearchFindsOnlyThatWorkspacesMessages() throws {
        let (archive, _, acme, globex) = try Self.two()
        let engine = SearchEngine(archive: archive)
        var options = SearchOptions()
        options.limit = 10_000
        let all = try engine.search("the", options: options).hits
        #expect(try Self.teams(all, in: archive) == [acme.teamID, globex.teamID])
        var total = 0
        for workspace in [acme, globex] {
            let filter = try WorkspaceFilter(workspace.teamID, in: archive.store)
            var scoped = options
            scoped.restrict(to: filter.conversations)
            let hits = try engine.search("the", options: scoped).hits
            let teams = try Self.teams(hits, in: archive)
            #expect(!hits.isEmpty && teams == [workspace.teamID])
            let counted = try engine.count("the", options: scoped).0
            #expect(counted == hits.count)
            total += counted
        }
        #expect(total == all.count)
    }

    /// With a workspace, a name two workspaces share is that workspace's (`in:#general`), which alone is ambiguous.
    @Test func aSharedNameIsTheChosenWorkspaces() throws {
        let (archive, _, _, globex) = try Self.two()
        let engine = SearchEngine(archive: archive)
        let filter = try WorkspaceFilter("GLOBEX", in: archive.store)
        #expect(filter.workspace == globex)
        var options = SearchOptions()
        options.limit = 1_000
        #expect(throws: SearchError.self) { try engine.search("in:#general", options: options) }
        options.restrict(to: filter.conversations)
        let hits = try engine.search("in:#general", options: options).hits
        let general = try archive.conversation(named: "globex/#general")
        #expect(!hits.isEmpty && hits.allSatisfy { $0.message.conversationID == general.id })
        #expect(try filter.conversation(named: "general", in: archive.store).id == general.id)
        #expect(try filter.conversation(named: "#gen", in: archive.store).id == general.id)
        #expect(throws: WorkspaceError.self) { try filter.conversation(named: "frontend", in: archive.store) }
        #expect(throws: StoreError.self) { try filter.conversation(named: "nosuchchannel", in: archive.store) }
    }

    @Test func anUnknownWorkspaceListsTheArchivesWorkspaces() throws {
        let (archive, _, acme, globex) = try Self.two()
        #expect(try WorkspaceFilter(acme.teamID.lowercased(), in: archive.store).workspace == acme)
        #expect {
            try WorkspaceFilter("initech", in: archive.store)
        } throws: { error in
            let text = "\(error)"
            return text.contains("'initech'") && text.contains("acme (\(acme.teamID))")
                && text.contains("globex (\(globex.teamID))")
        }
    }

    /// A domain two workspaces share names both (a team id names one).
    @Test func aSharedDomainIsAmbiguous() throws {
        let (archive, _, acme, _) = try Self.two()
        let other = WorkspaceInput(teamID: "TACME0002", domain: "acme")
        _ = try archive.store.storeListings(
            users: [], conversations: [ConversationInput(slackID: "CACME0002", kind: .channel, name: "acme-two")],
            workspace: other)
        #expect {
            try WorkspaceFilter("acme", in: archive.store)
        } throws: { error in
            "\(error)".contains("acme (\(acme.teamID))") && "\(error)".contains("acme (TACME0002)")
        }
        let second = try WorkspaceFilter("TACME0002", in: archive.store)
        #expect(second.conversations == [try archive.conversation(named: "CACME0002").rowID])
    }

    /// `stats --workspace`'s counts are each export's own, imported alone; the list of workspaces says the same.
    /// Users are counted by their team: one both exports hold (Slackbot, `USLACKBOT`) is the later import's.
    @Test func aWorkspacesCountsAreItsExportsImportedAlone() throws {
        let (archive, _, acme, globex) = try Self.two()
        let listed = try WorkspaceCount.all(in: archive.store)
        #expect(listed.map(\.workspace) == [acme, globex])
        let acmeAlone = try Self.alone(TestSupport.sampleFolder)
        let globexAlone = try Self.alone(TwoWorkspaceTests.globexZip)
        func ids(_ archive: Archive) throws -> Set<String> {
            Set(try archive.store.usersPage(after: nil, limit: 10_000).filter { !$0.user.isPlaceholder }.map(\.user.id))
        }
        let shared = try ids(acmeAlone).intersection(ids(globexAlone))
        #expect(shared == ["USLACKBOT"])
        for (workspace, alone, lent) in [(acme, acmeAlone, shared.count), (globex, globexAlone, 0)] {
            let own = try alone.stats()
            let counted = try archive.store.stats(workspace: workspace)
            #expect(counted.workspaceID == workspace.teamID && counted.workspace == workspace.domain)
            let got: [Int] = [
                counted.messages, counted.deletedMessages, counted.threads, counted.replies, counted.conversations,
                counted.users,
            ]
            let expected: [Int] = [
                own.messages, own.deletedMessages, own.threads, own.replies, own.conversations, own.users - lent,
            ]
            #expect(got == expected)
            #expect(counted.conversationsByKind == own.conversationsByKind)
            #expect(counted.firstSeconds == own.firstSeconds && counted.lastSeconds == own.lastSeconds)
            let line = try #require(listed.first { $0.workspace == workspace })
            #expect(line.messages == own.messages && line.conversations == own.conversations)
        }
        #expect(try archive.stats().messages == listed.map(\.messages).reduce(0, +))
    }

    /// A conversation both exports hold (a shared channel: one Slack id) is one conversation of the archive.
    @Test func aSharedChannelAppearsOnce() throws {
        let archive = try TestSupport.sampleArchive()
        let general = try archive.conversation(named: "general")
        let before = try archive.conversations().count
        let folder = TestSupport.temporaryDirectory().appendingPathComponent("shared")
        let files = [
            "users.json": #"[{"id": "UG0000001", "name": "gina", "team_id": "TGLOBEX01"}]"#,
            "channels.json": """
                [{"id": "\(general.id)", "name": "general", "is_channel": true, "created": 1433558319}]
                """,
            "general/2024-01-01.json": """
                [{"type": "message", "user": "UG0000001", "text": "shared hello", "ts": "1704100000.000100"}]
                """,
        ]
        _ = try TestSupport.writeExport(files, in: folder)
        _ = try Importer(archive: archive).importExport(at: folder.path)
        let all = try archive.conversations()
        #expect(all.count == before)
        #expect(all.filter { $0.id == general.id }.count == 1)
        // The workspace that brought it last holds it (docs/search.md says so).
        #expect(try archive.conversation(named: general.id).workspaceID == "TGLOBEX01")
    }
}

/// The command line: `--workspace` on `search`, `history`, `conversations` and `stats`, and the team ids of
/// `--json`.
@Suite struct WorkspaceCLITests {
    static func lines(_ stdout: String) throws -> [[String: Any]] {
        try stdout.split(separator: "\n").map(CLITests.json)
    }

    @Test func searchJSONCarriesTheWorkspaceAndTheFilterKeepsToIt() throws {
        let (_, db, acme, globex) = try WorkspaceFilterTests.two()
        let all = try CLITests.run(["--db", db, "search", "the", "--json", "--limit", "5000"])
        #expect(all.status == 0, "\(all.stderr)")
        let allTeams = try Self.lines(all.stdout).map { $0["workspace_id"] as? String }
        #expect(Set(allTeams) == [acme.teamID, globex.teamID])
        for workspace in [acme, globex] {
            let run = try CLITests.run(
                ["--db", db, "search", "the", "--json", "--limit", "5000", "--workspace", workspace.domain ?? ""])
            #expect(run.status == 0, "\(run.stderr)")
            let teams = try Self.lines(run.stdout).map { $0["workspace_id"] as? String }
            #expect(!teams.isEmpty && Set(teams) == [workspace.teamID])
            #expect(teams.count == allTeams.filter { $0 == workspace.teamID }.count)
            let count = try CLITests.run(["--db", db, "search", "the", "--count", "--workspace", workspace.teamID])
            #expect(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == String(teams.count))
        }
        let unknown = try CLITests.run(["--db", db, "search", "the", "--workspace", "initech"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("No workspace called 'initech'") && unknown.stderr.contains("globex (\(globex.teamID))"))
    }

    @Test func historyConversationsAndStatsKeepToTheWorkspace() throws {
        let (archive, db, acme, globex) = try WorkspaceFilterTests.two()
        let general = try archive.conversation(named: "globex/#general")
        let history = try CLITests.run(["--db", db, "history", "general", "--workspace", "globex", "--json", "--limit", "3"])
        #expect(history.status == 0, "\(history.stderr)")
        let shown = try Self.lines(history.stdout).compactMap { $0["conversation_id"] as? String }
        #expect(!shown.isEmpty && Set(shown) == [general.id])
        let ambiguous = try CLITests.run(["--db", db, "history", "general"])
        #expect(ambiguous.status == 1 && ambiguous.stderr.contains("globex/#general"))
        let elsewhere = try CLITests.run(["--db", db, "history", "frontend", "--workspace", "globex"])
        #expect(elsewhere.status == 1 && elsewhere.stderr.contains("not in the workspace globex"), "\(elsewhere.stderr)")

        let listed = try CLITests.run(["--db", db, "conversations", "--workspace", globex.teamID, "--json"])
        let teams = try Self.lines(listed.stdout).map { $0["workspace_id"] as? String }
        #expect(teams.count == (try archive.store.conversationRowIDs(workspace: globex.teamID).count))
        #expect(Set(teams) == [globex.teamID])

        let alone = try CLITests.json(
            Substring(try CLITests.run(["--db", db, "stats", "--json"]).stdout.trimmingCharacters(in: .newlines)))
        let workspaces = try #require(alone["workspaces"] as? [[String: Any]])
        #expect(workspaces.compactMap { $0["id"] as? String } == [acme.teamID, globex.teamID])
        #expect(workspaces.compactMap { $0["domain"] as? String } == ["acme", "globex"])
        let sample = try WorkspaceFilterTests.alone(TestSupport.sampleFolder).stats()
        let acmeStats = try CLITests.json(
            Substring(
                try CLITests.run(["--db", db, "stats", "--workspace", "acme", "--json"]).stdout
                    .trimmingCharacters(in: .newlines)))
        #expect(acmeStats["messages"] as? Int == sample.messages && acmeStats["workspace_id"] as? String == acme.teamID)
        #expect(workspaces.first?["messages"] as? Int == sample.messages)
        #expect(alone["messages"] as? Int != sample.messages)
        let text = try CLITests.run(["--db", db, "stats"])
        #expect(text.stdout.contains("globex (\(globex.teamID)): "), "\(text.stdout)")
    }
}

/// `serve`: `team_id` on `search.messages` and `conversations.list`, `team` on each match, `team_not_found`, and
/// the web UI's list of workspaces; a token's access rules still apply.
@Suite struct WorkspaceServeTests {
    static func matches(_ body: [String: Any]) -> [[String: Any]] {
        (body["messages"] as? [String: Any])?["matches"] as? [[String: Any]] ?? []
    }

    static func call(_ api: SlackAPI, _ method: String, _ parameters: [String: String], _ token: String) async throws
        -> [String: Any]
    {
        let response = await api.call(method, parameters: parameters, bearer: token)
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body.utf8)) as? [String: Any])
    }

    @Test func teamIDKeepsSearchAndListsToOneWorkspace() async throws {
        let (archive, _, acme, globex) = try WorkspaceFilterTests.two()
        let api = SlackAPI(archive: archive, configuration: SlackAPIConfiguration())
        let admin = try archive.createToken(userID: APIFixture.adminUser, isAdmin: true).token
        let globexIDs = Set(try archive.conversations().filter { $0.workspaceID == globex.teamID }.map(\.id))
        let search = ["query": "the", "count": "100", "sort": "timestamp"]
        let all = Self.matches(try await Self.call(api, "search.messages", search, admin))
        #expect(Set(all.compactMap { $0["team"] as? String }) == [acme.teamID, globex.teamID])
        let scoped = try await Self.call(api, "search.messages", search.merging(["team_id": globex.teamID]) { $1 }, admin)
        let hits = Self.matches(scoped)
        #expect(!hits.isEmpty && Set(hits.compactMap { $0["team"] as? String }) == [globex.teamID])
        #expect(hits.allSatisfy { globexIDs.contains(($0["channel"] as? [String: Any])?["id"] as? String ?? "") })
        let count = try await Self.call(api, "slackindex.count", ["query": "the", "team_id": globex.teamID], admin)
        #expect(count["total"] as? Int == (scoped["messages"] as? [String: Any])?["total"] as? Int)

        let types = "public_channel,private_channel,mpim,im"
        let listed = try await Self.call(api, "conversations.list", ["types": types, "team_id": globex.teamID], admin)
        let ids = (listed["channels"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(Set(ids) == globexIDs)
        let paged = try await Self.call(
            api, "conversations.list", ["types": types, "team_id": globex.teamID, "limit": "2"], admin)
        #expect((paged["channels"] as? [[String: Any]])?.count == 2)
        #expect(((paged["response_metadata"] as? [String: Any])?["next_cursor"] as? String)?.isEmpty == false)

        for method in ["search.messages", "conversations.list"] {
            let unknown = try await Self.call(api, method, ["query": "the", "team_id": "TNOSUCH01"], admin)
            #expect(unknown["ok"] as? Bool == false && unknown["error"] as? String == "team_not_found", "\(method)")
        }
        let ui = try await Self.call(api, "slackindex.conversations", [:], admin)
        let workspaces = (ui["workspaces"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        #expect(workspaces == [acme.teamID, globex.teamID])
        let uiConversations = ui["conversations"] as? [[String: Any]] ?? []
        #expect(Set(uiConversations.filter { $0["workspace_id"] as? String == globex.teamID }.compactMap { $0["id"] as? String })
            == globexIDs)
    }

    /// A member's token sees its DMs and the channels, not others' DMs: `team_id` narrows that view, never widens it.
    @Test func aTokensAccessStillApplies() async throws {
        let (archive, _, acme, _) = try WorkspaceFilterTests.two()
        let api = SlackAPI(archive: archive, configuration: SlackAPIConfiguration())
        let token = try archive.createToken(userID: APIFixture.outsider).token
        let record = try #require(try archive.verifyToken(token))
        let visible = try #require(try archive.store.visibleConversationRowIDs(to: record))
        let acmeIDs = try archive.store.conversationRowIDs(workspace: acme.teamID)
        let shown = Set(try archive.conversations().filter { visible.contains($0.rowID) && acmeIDs.contains($0.rowID) }.map(\.id))
        let hidden = Set(try archive.conversations().filter { acmeIDs.contains($0.rowID) }.map(\.id)).subtracting(shown)
        #expect(!hidden.isEmpty)
        let hits = Self.matches(
            try await Self.call(api, "search.messages", ["query": "the", "count": "100", "team_id": acme.teamID], token))
        let channels = Set(hits.compactMap { ($0["channel"] as? [String: Any])?["id"] as? String })
        #expect(!channels.isEmpty && channels.isSubset(of: shown))
    }

    /// Both workspaces have a private #leadership: a member of acme's sees that one, and `in:#leadership` is it
    /// (the name is ambiguous only among what the token may read).
    @Test func aSharedNameIsTheOneTheTokenSees() async throws {
        let (archive, _, _, _) = try WorkspaceFilterTests.two()
        let api = SlackAPI(archive: archive, configuration: SlackAPIConfiguration())
        let leadership = try archive.conversation(named: "acme/#leadership")
        #expect(try archive.store.conversations(matching: "leadership").count == 2)
        let member = try #require(leadership.members.first)
        let token = try archive.createToken(userID: member).token
        let hits = Self.matches(
            try await Self.call(api, "search.messages", ["query": "in:#leadership", "count": "100"], token))
        let channels = Set(hits.compactMap { ($0["channel"] as? [String: Any])?["id"] as? String })
        #expect(channels == [leadership.id])
    }

    @Test func oneWorkspaceListsOneAndTheSwitcherIsInThePage() async throws {
        let f = try APIFixture()
        let ui = try await f.ok("slackindex.conversations")
        #expect((ui["workspaces"] as? [[String: Any]])?.count == 1)
        #expect(WebAssets.page.contains(#"<select id="workspace" aria-label="Workspace" hidden>"#))
        #expect(WebAssets.script.contains("team_id: S.team"))
    }
}

/// The same on PostgreSQL: the two workspaces imported there give what SQLite gives, through the library and the
/// command line.
@Suite(.enabled(if: PostgresTestServer.isAvailable, "needs a PostgreSQL 15 server (Debian's postgresql-15)"))
struct WorkspaceFilterPostgresTests {
    @Test func filtersAndCountsMatchSQLite() throws {
        let server = try #require(PostgresTestServer.shared, "\(PostgresTestServer.unavailableReason)")
        let (sqlite, db, acme, globex) = try WorkspaceFilterTests.two()
        let url = try server.database()
        let postgres = try Archive(path: url)
        for export in [TestSupport.sampleFolder, TwoWorkspaceTests.globexZip] {
            _ = try Importer(archive: postgres).importExport(at: export)
        }
        #expect(try postgres.store.workspaces() == [acme, globex])
        var options = SearchOptions()
        options.limit = 10_000
        options.sort = .newest
        for workspace in [acme, globex] {
            let expected = try sqlite.store.stats(workspace: workspace)
            let got = try postgres.store.stats(workspace: workspace)
            #expect(PostgresContractTests.facts(got) == PostgresContractTests.facts(expected))
            #expect(got.conversationsByKind == expected.conversationsByKind && got.users == expected.users)
            func hits(_ archive: Archive) throws -> [String] {
                var scoped = options
                scoped.restrict(to: try WorkspaceFilter(workspace.teamID, in: archive.store).conversations)
                return try SearchEngine(archive: archive).search("the", options: scoped).hits
                    .map { "\($0.message.conversationID) \($0.message.ts)" }
            }
            let found = try hits(postgres)
            let expectedHits = try hits(sqlite)
            #expect(!found.isEmpty && found == expectedHits)
            let own = Set(try postgres.conversations().filter { $0.workspaceID == workspace.teamID }.map(\.id))
            #expect(found.allSatisfy { own.contains(String($0.prefix { $0 != " " })) })
            let globexName = try WorkspaceFilter("globex", in: postgres.store).conversation(named: "general", in: postgres.store)
            #expect(globexName.id == (try sqlite.conversation(named: "globex/#general").id))
        }
        for arguments in [
            ["search", "the", "--workspace", "globex", "--json", "--sort", "newest", "--limit", "40"],
            ["stats", "--workspace", "acme", "--json"], ["stats", "--json"],
            ["conversations", "--workspace", "globex", "--json"],
            ["history", "general", "--workspace", "globex", "--json", "--limit", "5"],
        ] {
            let expected = try CLITests.run(["--db", db] + arguments)
            let got = try CLITests.run(["--db", url] + arguments)
            #expect(got.status == 0 && expected.status == 0, "\(arguments): \(got.stderr)")
            func shown(_ stdout: String) throws -> [String] {
                try stdout.split(separator: "\n").map { line in
                    var object = try CLITests.json(line)
                    for key in ["score", "database_bytes"] { object[key] = nil }
                    return String(decoding: try JSONSerialization.data(withJSONObject: object, options: .sortedKeys), as: UTF8.self)
                }
            }
            #expect(try shown(got.stdout) == shown(expected.stdout), "\(arguments)")
            if arguments[0] == "search" {
                let teams = try WorkspaceCLITests.lines(got.stdout).map { $0["workspace_id"] as? String }
                #expect(!teams.isEmpty && Set(teams) == [globex.teamID])
            }
        }
        let unknown = try CLITests.run(["--db", url, "stats", "--workspace", "initech"])
        #expect(unknown.status == 1 && unknown.stderr.contains("globex (\(globex.teamID))"))
    }
}
