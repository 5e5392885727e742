import Foundation
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

@Suite struct ResultMergerTests {
    static func hit(_ conversation: String, _ ts: String, source: HitSource) -> SearchHit {
        let key = SlackTimestamp.parseKey(ts) ?? 0
        let message = Message(
            rowID: key, conversationID: conversation, conversation: "#" + conversation, ts: ts, tsKey: key,
            userID: "U1", user: "ann", text: ts, plainText: ts, subtype: nil, threadTS: nil, replyCount: 0,
            editedTS: nil, isDeleted: false, flags: [])
        return SearchHit(message: message, snippet: ts, score: 0, source: source)
    }

    @Test func duplicatesMergeAndRankByReciprocalRankFusion() {
        let local = [Self.hit("C1", "1.000001", source: .local), Self.hit("C1", "2.000001", source: .local)]
        let remote = [
            Self.hit("C2", "3.000001", source: .remote), Self.hit("C1", "2.000001", source: .remote),
        ]
        let merged = ResultMerger.merge(local: local, remote: remote, sort: .relevance, limit: 10)
        #expect(merged.map(\.message.ts) == ["2.000001", "1.000001", "3.000001"])
        #expect(merged.map(\.source) == [.both, .local, .remote])
        // 1/(60+2) + 1/(60+2) for the shared hit.
        #expect(abs(merged[0].score - 2.0 / 62) < 1e-12)
        // Same ts in another conversation is another message.
        let other = ResultMerger.merge(
            local: [Self.hit("C1", "1.000001", source: .local)], remote: [Self.hit("C9", "1.000001", source: .remote)],
            sort: .newest, limit: 10)
        #expect(other.count == 2)
    }

    @Test func aHeldHitOnlyTheRemoteReturnedStaysBoth() {
        let local = [Self.hit("C1", "1.000001", source: .local)]
        let remote = [Self.hit("C1", "7.000001", source: .both), Self.hit("C2", "8.000001", source: .remote)]
        let merged = ResultMerger.merge(local: local, remote: remote, sort: .newest, limit: 10)
        #expect(merged.map(\.source) == [.remote, .both, .local])
    }

    @Test func timeOrdersSortByTimestampAndLimitApplies() {
        let local = [Self.hit("C1", "5.000000", source: .local), Self.hit("C1", "1.000000", source: .local)]
        let remote = [Self.hit("C2", "3.000000", source: .remote), Self.hit("C2", "9.000000", source: .remote)]
        #expect(
            ResultMerger.merge(local: local, remote: remote, sort: .newest, limit: 3).map(\.message.ts)
                == ["9.000000", "5.000000", "3.000000"])
        #expect(
            ResultMerger.merge(local: local, remote: remote, sort: .oldest, limit: 10).map(\.message.ts)
                == ["1.000000", "3.000000", "5.000000", "9.000000"])
    }

    @Test func remoteSnippetsKeepOneWindowAroundTheFirstMatch() {
        let words = (1...80).map { "w\($0)" }
        var text = words
        text[50] = "\u{E000}deploy\u{E001}"
        let snippet = SnippetBuilder.window(text.joined(separator: "  \n"))
        #expect(snippet.hasPrefix("… ") && snippet.hasSuffix(" …"))
        #expect(snippet.contains("\u{E000}deploy\u{E001}"))
        #expect(snippet.split(separator: " ").count <= 32)
        #expect(SnippetBuilder.window("short \u{E000}text\u{E001}") == "short \u{E000}text\u{E001}")
    }
}

@Suite struct MergedSearchTests {
    static func archive() throws -> Archive {
        let days = [
            "2023-11-14": #"""
                [{"type":"message","user":"U1","text":"deploy the local build","ts":"1700000000.000100"},
                 {"type":"message","user":"U1","text":"deploy again","ts":"1700000100.000100"}]
                """#
        ]
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.minimalExport(days: days).path)
        return archive
    }

    static let remotePage = RemotePage(
        hits: [
            RemoteHit(
                conversationID: "C9", conversationName: "elsewhere", ts: "1700000200.000100", userID: "U7",
                username: "zed", text: "deploy from the remote", snippet: "\u{E000}deploy\u{E001} from the remote",
                permalink: "https://x.slack.com/archives/C9/p1700000200000100"),
            RemoteHit(
                conversationID: "C1", conversationName: "general", ts: "1700000000.000100", userID: "U1",
                username: "ann", text: "deploy the local build", snippet: "\u{E000}deploy\u{E001} the local build"),
        ], total: 2)

    @Test func remoteAndLocalMergeWithProvenance() async throws {
        let archive = try Self.archive()
        let results = try await withTaskExecutorPreference(ThreadTaskExecutor.shared) {
            try await SearchEngine(archive: archive).search(
                "deploy", options: SearchOptions(),
                remote: FakeRemoteSearch(behaviour: .answer(Self.remotePage, after: .milliseconds(10))),
                deadline: .seconds(2))
        }
        #expect(!results.partial)
        #expect(results.hits.count == 3)
        let sources = Dictionary(uniqueKeysWithValues: results.hits.map { ($0.message.ts, $0.source) })
        #expect(sources == ["1700000000.000100": .both, "1700000100.000100": .local, "1700000200.000100": .remote])
        let remote = try #require(results.hits.first { $0.source == .remote })
        #expect(remote.permalink == "https://x.slack.com/archives/C9/p1700000200000100")
        #expect(remote.message.conversation == "#elsewhere")
    }

    /// A remote hit the archive lacks shows its author by the name local hits use, when the archive knows them.
    @Test func remoteHitsShowLocalNames() async throws {
        let archive = try Self.archive()
        let page = RemotePage(
            hits: [
                RemoteHit(
                    conversationID: "C9", conversationName: "elsewhere", ts: "1700000300.000100", userID: "U1",
                    username: "ann", text: "deploy by ann elsewhere", snippet: "\u{E000}deploy\u{E001} by ann"),
            ] + Self.remotePage.hits, total: 3)
        let results = try await withTaskExecutorPreference(ThreadTaskExecutor.shared) {
            try await SearchEngine(archive: archive).search(
                "deploy", options: SearchOptions(),
                remote: FakeRemoteSearch(behaviour: .answer(page, after: .milliseconds(10))), deadline: .seconds(2))
        }
        let users = Dictionary(uniqueKeysWithValues: results.hits.map { ($0.message.ts, $0.message.user) })
        #expect(users["1700000300.000100"] == "Ann Lee")  // known here: the local name, not the handle
        #expect(users["1700000000.000100"] == "Ann Lee")  // held locally
        #expect(users["1700000200.000100"] == "zed")  // unknown here: the remote's handle
    }

    @Test(arguments: [
        FakeRemoteSearch.Behaviour.hang,
        .answer(remotePage, after: .seconds(5)),
        .fail(.rateLimited(method: "search.messages", retryAfter: 30), after: .zero),
        .fail(.unavailable(method: "search.messages", attempts: 3, last: "HTTP 500"), after: .milliseconds(50)),
    ])
    func slowOrFailingRemoteGivesLocalResultsInTime(_ behaviour: FakeRemoteSearch.Behaviour) async throws {
        let archive = try Self.archive()
        let (results, elapsed, lateness) = try await withTaskExecutorPreference(ThreadTaskExecutor.shared) {
            async let lateness = TestSupport.timerLateness(.milliseconds(300))
            let started = ContinuousClock.now
            let results = try await SearchEngine(archive: archive).search(
                "deploy", options: SearchOptions(), remote: FakeRemoteSearch(behaviour: behaviour),
                deadline: .milliseconds(300))
            return (results, ContinuousClock.now - started, await lateness)
        }
        // Deadline + 250 ms, plus what a plain timer overran by on this machine meanwhile, plus any time the local
        // search itself needed beyond the deadline (only a loaded test machine makes it that slow). What this
        // guards against takes 5 s, 30 s or forever; 50 ms of slack failed the same check in TwoArchiveSearchTests
        // on a loaded CI run.
        let budget = .milliseconds(300 + 250) + lateness + max(.zero, results.localDuration - .milliseconds(300))
        #expect(elapsed < budget, "took \(elapsed); timer lateness \(lateness), local \(results.localDuration)")
        #expect(results.partial)
        #expect(results.remoteProblem != nil)
        #expect(results.hits.map(\.source) == [.local, .local])
    }

    @Test func saveRemoteStoresMissingHitsOnce() async throws {
        let archive = try Self.archive()
        let engine = SearchEngine(archive: archive)
        let remote = FakeRemoteSearch(behaviour: .answer(Self.remotePage, after: .zero))
        let first = try await withTaskExecutorPreference(ThreadTaskExecutor.shared) {
            try await engine.search(
                "deploy", options: SearchOptions(), remote: remote, deadline: .seconds(10), saveRemote: true)
        }
        #expect(first.saved == 1)
        // Offline now: the saved hit is a local one.
        let offline = try engine.search("remote")
        #expect(offline.hits.map(\.message.ts) == ["1700000200.000100"])
        #expect(offline.hits.first?.message.conversationID == "C9")
        let second = try await withTaskExecutorPreference(ThreadTaskExecutor.shared) {
            try await engine.search(
                "deploy", options: SearchOptions(), remote: remote, deadline: .seconds(10), saveRemote: true)
        }
        #expect(second.saved == 0)
        #expect(second.hits.count == 3 && second.hits.allSatisfy { $0.source != .remote })
    }
}

@Suite struct TokenConfigTests {
    static func environment(config: String?, mode: Int = 0o600, token: String? = nil) throws -> [String: String] {
        let dir = TestSupport.temporaryDirectory()
        var environment = ["XDG_CONFIG_HOME": dir.path, "HOME": "/nonexistent"]
        if let token { environment["SLACK_TOKEN"] = token }
        if let config {
            let folder = dir.appendingPathComponent("slackindex")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent("config.json")
            try Data(config.utf8).write(to: file)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: file.path)
        }
        return environment
    }

    @Test func tokenComesFromTheEnvironmentFirstThenAnOwnerOnlyFile() throws {
        #expect(try Config.token(environment: Self.environment(config: nil, token: "xoxp-env")) == "xoxp-env")
        #expect(
            try Config.token(environment: Self.environment(config: #"{"token": "xoxp-file"}"#, token: "xoxp-env"))
                == "xoxp-env")
        #expect(try Config.token(environment: Self.environment(config: #"{"token": "xoxp-file"}"#)) == "xoxp-file")
        #expect(throws: ConfigError.self) { try Config.token(environment: Self.environment(config: nil)) }
    }

    @Test func theSlackTokenGoesOnlyToSlack() throws {
        let slackOnly = try Self.environment(config: nil, token: "xoxp-real")
        #expect(try Config.remoteToken(for: "https://slack.com/api/", environment: slackOnly) == "xoxp-real")
        #expect(throws: ConfigError.self) {
            try Config.remoteToken(for: "https://archive.example.org/api/", environment: slackOnly)
        }
        var both = slackOnly
        both["SLACKINDEX_REMOTE_TOKEN"] = "xoxp-slackindex-abc"
        #expect(try Config.remoteToken(for: "http://10.0.0.5:8080/api/", environment: both) == "xoxp-slackindex-abc")
        let file = try Self.environment(config: #"{"remote_token": "xoxp-slackindex-file"}"#)
        #expect(try Config.remoteToken(for: "http://127.0.0.1:8080/api/", environment: file) == "xoxp-slackindex-file")
    }

    @Test func aSlackTokenNeverTravelsOverPlainHTTPToAnotherMachine() throws {
        #expect(throws: RemoteError.insecure("http://10.0.0.5:8080/api/")) {
            try SlackWebClient(baseURL: "http://10.0.0.5:8080/api/", token: "xoxp-real")
        }
        // Loopback, https, or a token that opens one archive only are fine.
        for (url, token) in [
            ("http://127.0.0.1:8080/api/", "xoxp-real"), ("https://slack.com/api/", "xoxp-real"),
            ("http://10.0.0.5:8080/api/", Archive.tokenPrefix + "abc"),
        ] {
            let client = try SlackWebClient(baseURL: url, token: token)
            Task { await client.shutdown() }
        }
    }

    @Test func aTokenInAFileOthersCanReadIsRefused() throws {
        let environment = try Self.environment(config: #"{"token": "xoxp-file"}"#, mode: 0o644)
        do {
            _ = try Config.token(environment: environment)
            Issue.record("expected a refusal")
        } catch let error as ConfigError {
            guard case .tokenReadableByOthers = error else { Issue.record("\(error)"); return }
            #expect(error.description.contains("chmod 600"))
            #expect(!error.description.contains("xoxp-file"))
        }
        // Without a token the mode does not matter.
        #expect(try Config.load(environment: Self.environment(config: #"{"me": "ann"}"#, mode: 0o644)).me == "ann")
    }
}
