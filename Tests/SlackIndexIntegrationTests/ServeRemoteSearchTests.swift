import Foundation
import Synchronization
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@testable import SlackIndexServer
@testable import SlackIndexTestSupport

/// `serve --remote`: search.messages merges a remote's hits into the first page, marks each hit's source, keeps the
/// archive's access rules for remote hits, and answers in time without a slow or failing remote.
@Suite struct ServeRemoteSearchTests {
    static let word = "exception"

    /// A remote answer: a local match, a held message without the word, a message in #general the archive does
    /// not have, one in the DM, one in a conversation the archive does not know.
    static func remotePage() throws -> (page: RemotePage, general: String, matching: String, held: String) {
        let oracle = try SampleOracle(folder: TestSupport.sampleFolder)
        let general = try APIFixture.conversationID(folder: "general")
        let inGeneral = oracle.messages.filter { $0.conversationID == general && $0.threadTS == nil }
        let matching = try #require(inGeneral.first { $0.tokenSet.contains(word) }).ts
        let held = try #require(inGeneral.first { !$0.tokenSet.contains(word) }).ts
        func hit(_ conversation: String, _ ts: String) -> RemoteHit {
            RemoteHit(
                conversationID: conversation, conversationName: nil, ts: ts, userID: APIFixture.dmMembers[0],
                username: "remote", text: "remote \(word)", snippet: "remote \u{E000}\(word)\u{E001}",
                permalink: "https://remote.example/\(conversation)/\(ts)")
        }
        let page = RemotePage(
            hits: [
                hit(general, matching), hit(general, held), hit(general, "1400000000.000100"),
                hit(APIFixture.dm, "1400000000.000200"), hit("C0NOTINARCHIVE", "1400000000.000300"),
            ], total: 5)
        return (page, general, matching, held)
    }

    static func matches(_ body: [String: Any]) -> [[String: Any]] {
        ((body["messages"] as? [String: Any])?["matches"] as? [[String: Any]]) ?? []
    }

    static func key(_ match: [String: Any]) -> String {
        ((match["channel"] as? [String: Any])?["id"] as? String ?? "") + " " + (match["ts"] as? String ?? "")
    }

    @Test func theFirstPageMergesTheRemoteMarkedBySourceUnderTheTokensRules() async throws {
        let (page, general, matching, held) = try Self.remotePage()
        // A long deadline: this test is about the merge, and a loaded machine may take seconds to search.
        let f = try APIFixture(
            remote: FakeRemoteSearch(behaviour: .answer(page, after: .milliseconds(5))),
            remoteDeadline: .seconds(1_200))
        let outsider = try f.token(for: APIFixture.outsider)
        let local = try await f.ok("slackindex.count", ["query": Self.word], token: f.admin)["total"] as? Int ?? 0

        let admin = try await f.ok("search.messages", ["query": Self.word, "count": "20"], token: f.admin)
        let sources = Dictionary(Self.matches(admin).map { (Self.key($0), $0["source"] as? String ?? "none") },
            uniquingKeysWith: { a, _ in a })
        #expect(sources["\(general) \(matching)"] == "both")
        #expect(sources["\(general) \(held)"] == nil, "a message the archive has but does not rank here stays off")
        #expect(sources["\(general) 1400000000.000100"] == "remote")
        #expect(sources["\(APIFixture.dm) 1400000000.000200"] == "remote", "the admin sees the DM")
        #expect(sources["C0NOTINARCHIVE 1400000000.000300"] == nil, "no one is known to see an unknown conversation")
        #expect(Set(sources.values).isSubset(of: ["local", "remote", "both"]) && sources.values.contains("local"))
        #expect(admin["remote_problem"] == nil)
        let remoteOnly = sources.values.filter { $0 == "remote" }.count
        #expect((admin["messages"] as? [String: Any])?["total"] as? Int == local + remoteOnly)
        let remoteMatch = try #require(Self.matches(admin).first { Self.key($0) == "\(general) 1400000000.000100" })
        #expect(remoteMatch["permalink"] as? String == "https://remote.example/\(general)/1400000000.000100")

        let seenByOutsider = Set(Self.matches(try await f.ok("search.messages", ["query": Self.word, "count": "20"], token: outsider))
            .map(Self.key))
        #expect(seenByOutsider.contains("\(general) 1400000000.000100"))
        #expect(!seenByOutsider.contains { $0.hasPrefix(APIFixture.dm) }, "the outsider never sees the DM's hits")

        // Later pages are the archive's, marked local.
        let second = try await f.ok("search.messages", ["query": Self.word, "count": "20", "page": "2"], token: f.admin)
        #expect(!Self.matches(second).isEmpty)
        #expect(Self.matches(second).allSatisfy { $0["source"] as? String == "local" })
    }

    /// A remote an hour late: the answer comes at the deadline (0.3 s). The bound, 1,200 s, is loose because the
    /// whole suite on 2 cores holds the server's tasks back behind the other tests' work on the cooperative pool: 132 s
    /// in a clean clone's `.ci/run` on 2026-11-26 (against a bound of 120 s then); in a full `swift test` beside a
    /// heaptrack run on 2026-11-27 the test took 246 s from its start (the bound, measured after the fixture, was
    /// 250 s and held); that suite took ~320 s. It still fails if the answer waited for the remote. The other tests'
    /// remote deadline, 1,200 s, is loose for the same reason.
    @Test(.timeLimit(.minutes(30)), arguments: [
        (
            FakeRemoteSearch.Behaviour.answer(RemotePage(hits: [], total: 0), after: .seconds(3_600)),
            "did not answer within"
        ),
        (.fail(.http(method: "search.messages", status: 503), after: .zero), "HTTP 503"),
    ])
    func aSlowOrFailingRemoteGivesTheArchivesHitsInTime(behaviour: FakeRemoteSearch.Behaviour, problem: String)
        async throws
    {
        let f = try APIFixture(remote: FakeRemoteSearch(behaviour: behaviour), remoteDeadline: .milliseconds(300))
        let started = ContinuousClock.now
        let body = try await f.ok("search.messages", ["query": Self.word, "count": "10"], token: f.admin)
        #expect(ContinuousClock.now - started < .seconds(1_200))
        #expect(Self.matches(body).count == 10)
        #expect(Self.matches(body).allSatisfy { $0["source"] as? String == "local" })
        #expect((body["remote_problem"] as? String)?.contains(problem) == true, "\(body["remote_problem"] ?? "")")
        // Errors are the method's own, as without a remote.
        try await f.fails("search.messages", [:], token: f.admin, with: "no_query")
        try await f.fails("search.messages", ["query": Self.word], token: "xoxp-slackindex-wrong", with: "invalid_auth")
    }

    /// Page 1 keeps every hit the archive alone gives it and adds the remote's others; page 2 is unchanged.
    @Test func theArchivesHitsAllStayWhenTheRemoteAddsSome() async throws {
        let (page, general, _, _) = try Self.remotePage()
        let plain = try APIFixture()
        let merged = try APIFixture(
            remote: FakeRemoteSearch(behaviour: .answer(page, after: .zero)), remoteDeadline: .seconds(1_200))
        for sort in ["score", "timestamp"] {
            let arguments = ["query": Self.word, "count": "20", "sort": sort]
            let alone = Set(Self.matches(try await plain.ok("search.messages", arguments, token: plain.admin)).map(Self.key))
            let first = Self.matches(try await merged.ok("search.messages", arguments, token: merged.admin))
            let keys = first.map(Self.key)
            #expect(Set(keys).isSuperset(of: alone), "\(sort): \(alone.subtracting(keys))")
            #expect(keys.count == Set(keys).count)
            #expect(Set(keys).subtracting(alone) == ["\(general) 1400000000.000100", "\(APIFixture.dm) 1400000000.000200"])
            var second = arguments
            second["page"] = "2"
            let later = try await merged.ok("search.messages", second, token: merged.admin)
            let laterAlone = try await plain.ok("search.messages", second, token: plain.admin)
            #expect(Self.matches(later).map(Self.key) == Self.matches(laterAlone).map(Self.key))
            #expect(Set(Self.matches(later).map(Self.key)).isDisjoint(with: keys), "no hit on two pages")
        }
    }

    /// `me` is the token's user for the remote too; a session without a user does not ask the remote for `me`.
    @Test func meIsTheTokensUserOnTheRemote() async throws {
        let remote = RecordingRemote()
        let f = try APIFixture(remote: remote, remoteDeadline: .seconds(1_200))
        let member = try f.token(for: APIFixture.dmMembers[0])
        _ = try await f.ok("search.messages", ["query": "\(Self.word) from:me in:@me"], token: member)
        let asked = try #require(remote.queries.last)
        #expect(asked.contains("from:<@\(APIFixture.dmMembers[0])>") && asked.contains("in:<@\(APIFixture.dmMembers[0])>"), "\(asked)")
        #expect(!asked.contains("me"), "\(asked)")

        // An owner's session (serve --open) without --as: an admin record with no user.
        let record = APIToken(id: 0, userID: "", isAdmin: true, created: 0, label: "owner")
        let before = remote.queries.count
        let body = await f.api.call("search.messages", parameters: ["query": "\(Self.word) from:me"], caller: .record(record, key: "s"))
        #expect(remote.queries.count == before, "the remote is not asked for a 'me' nobody is")
        #expect(body.body.contains("has no user for 'me'"), "\(body.body)")
    }

    /// After `ratelimited`, the remote rests for its Retry-After: searches answer locally without asking it.
    @Test func aRateLimitedRemoteIsLeftAloneForItsRetryAfter() async throws {
        let remote = RecordingRemote(failure: .rateLimited(method: "search.messages", retryAfter: 30))
        let f = try APIFixture(remote: remote, remoteDeadline: .seconds(1_200))
        let first = try await f.ok("search.messages", ["query": Self.word], token: f.admin)
        #expect((first["remote_problem"] as? String)?.contains("rate-limited") == true)
        let second = try await f.ok("search.messages", ["query": "\(Self.word) deploy"], token: f.admin)
        #expect((second["remote_problem"] as? String)?.contains("rate-limited for") == true, "\(second["remote_problem"] ?? "")")
        #expect(remote.queries.count == 1)
        #expect(!Self.matches(first).isEmpty)
    }

    @Test func withoutARemoteMatchesCarryNoSource() async throws {
        let f = try APIFixture()
        let body = try await f.ok("search.messages", ["query": Self.word], token: f.admin)
        #expect(!Self.matches(body).isEmpty && Self.matches(body).allSatisfy { $0["source"] == nil })
    }
}

/// A remote that notes each query it is asked (in Slack syntax) and answers nothing, or fails.
final class RecordingRemote: RemoteSearch, Sendable {
    private let asked = Mutex<[String]>([])
    let failure: RemoteError?

    init(failure: RemoteError? = nil) {
        self.failure = failure
    }

    var queries: [String] { asked.withLock { $0 } }

    func search(_ query: SearchQuery, limit: Int, sort: SearchSort) async throws -> RemotePage {
        asked.withLock { $0.append(query.slackSyntax) }
        if let failure { throw failure }
        return RemotePage(hits: [], total: 0)
    }
}

/// `serve --remote` as users run it: one archive's `serve` asks another's.
@Suite struct ServeRemoteCLITests {
    @Test func serveWithARemoteMarksTheRemotesHits() async throws {
        let general = try APIFixture.conversationID(folder: "general")
        // The remote holds sample-data plus messages in #general that the local archive lacks.
        let remoteDB = try WebUIBrowserTests.archive(general: general)
        let token = try await CLITests.run(["--db", remoteDB, "token", "create", "--user", APIFixture.dmMembers[0]]).stdout
            .trimmingCharacters(in: .newlines)
        let remote = try ServeCLITests.serve(db: remoteDB)
        defer { _ = remote.stop() }
        let localDB = try ServeCLITests.importSample()
        let localToken = try await CLITests.run(["--db", localDB, "token", "create", "--user", APIFixture.dmMembers[0]]).stdout
            .trimmingCharacters(in: .newlines)

        let home = TestSupport.temporaryDirectory().path
        let (process, out, _) = try CLITests.launch(
            executable: try #require(CLITests.binary),
            ["--db", localDB, "serve", "--listen", "127.0.0.1:0", "--ui", "off", "--remote", remote.url,
             "--remote-deadline", "60"],
            environment: ["HOME": home, "XDG_CONFIG_HOME": home + "/config", "SLACKINDEX_REMOTE_TOKEN": token])
        defer {
            process.interrupt()
            process.waitUntilExit()
        }
        var printed = Data()
        while printed.filter({ $0 == UInt8(ascii: "\n") }).count < 2 {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            printed.append(chunk)
        }
        let lines = String(decoding: printed, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && lines[1] == "Search also asks \(remote.url)", "\(lines)")
        let url = try #require(lines.first?.components(separatedBy: " at ").last)
        let body = try await WebUICLITests.get(url + "search.messages?query=alert&count=50&token=\(localToken)").body
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        let matches = ServeRemoteSearchTests.matches(object)
        let sources = Dictionary(matches.map { (ServeRemoteSearchTests.key($0), $0["source"] as? String ?? "") },
            uniquingKeysWith: { a, _ in a })
        #expect(sources["\(general) 1716000000.000300"] == "remote", "\(body.prefix(600))")
        #expect(object["remote_problem"] == nil)
    }
}
