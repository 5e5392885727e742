import Foundation
import Hummingbird
import NIOCore
import Synchronization
import SlackIndexServer
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// Archive B searches with archive A's `serve` as its remote.
@Suite(.serialized) struct TwoArchiveSearchTests {
    /// A: the sample export behind `serve`; B: a small archive of its own that shares no message with A.
    static func archives() throws -> (a: Archive, token: String, b: Archive) {
        let a = try TestSupport.sampleArchive()
        let token = try a.createToken(userID: "U0T28J57VPZ").token
        let days = [
            "2023-11-14": #"""
                [{"type":"message","user":"U1","text":"the syntax of our own notes","ts":"1700000000.000100"},
                 {"type":"message","user":"U1","text":"more syntax, locally","ts":"1700000100.000100"}]
                """#
        ]
        let b = try TestSupport.makeArchive()
        _ = try Importer(archive: b).importExport(at: TestSupport.minimalExport(days: days).path)
        return (a, token, b)
    }

    /// The merged search, how long it took, and how late a plain timer of `deadline` woke up meanwhile.
    static func search(_ b: Archive, remoteURL: String, token: String, deadline: Duration) async throws
        -> (MergedSearchResults, Duration, Duration)
    {
        let client = try SlackWebClient(baseURL: remoteURL, token: token, policy: .interactive(deadline: deadline))
        defer { Task { await client.shutdown() } }
        var options = SearchOptions()
        options.limit = 50
        return try await withTaskExecutorPreference(ThreadTaskExecutor.shared) {
            async let lateness = TestSupport.timerLateness(deadline)
            let started = ContinuousClock.now
            let results = try await SearchEngine(archive: b).search(
                "syntax", options: options, remote: SlackRemoteSearch(client: client), deadline: deadline)
            return (results, ContinuousClock.now - started, await lateness)
        }
    }

    @Test func remoteHitsComeMarkedRemoteAndLocalOnesLocalWithoutDuplicates() async throws {
        let (a, token, b) = try Self.archives()
        let server = try await LiveSyncTests.start(a)
        let (results, _, _) = try await Self.search(b, remoteURL: server.baseURL, token: token, deadline: .seconds(20))
        await server.stop()
        #expect(!results.partial && results.remoteProblem == nil)
        let local = results.hits.filter { $0.source == .local }
        let remote = results.hits.filter { $0.source == .remote }
        #expect(local.count == 2)
        #expect(results.remoteCount == 50 && remote.count > 10)
        #expect(results.hits.count == 50)  // the limit, over both sides
        #expect(remote.allSatisfy { $0.message.conversationID != "C1" && $0.snippet.contains(Highlight.start) })
        let keys = results.hits.map { "\($0.message.conversationID)|\($0.message.ts)" }
        #expect(Set(keys).count == keys.count)
        // What A returns is what A holds.
        #expect(remote.allSatisfy { hit in
            (try? a.store.message(conversation: a.conversation(named: hit.message.conversationID), tsKey: hit.message.tsKey)) != nil
        })
    }

    enum Trouble: String, CaseIterable, Sendable {
        case stopped, slow, rateLimited, serverError, garbage
    }

    @Test(arguments: Trouble.allCases)
    func aTroubledRemoteStillGivesLocalResultsWithinTheDeadline(_ trouble: Trouble) async throws {
        let (a, token, b) = try Self.archives()
        let faults: FaultInjector =
            switch trouble {
            case .stopped, .slow: FaultInjector(delay: trouble == .slow ? .seconds(5) : .zero)
            case .rateLimited: FaultInjector(always: .rateLimit(seconds: 30))
            case .serverError: FaultInjector(always: .serverError)
            case .garbage: FaultInjector(always: .garbage)
            }
        let server = try await LiveSyncTests.start(a, middleware: [faults])
        if trouble == .stopped { await server.stop() }
        let deadline = Duration.milliseconds(600)
        let (results, elapsed, lateness) = try await Self.search(
            b, remoteURL: server.baseURL, token: token, deadline: deadline)
        if trouble != .stopped { await server.stop() }
        // Deadline + 1.5 s, plus what a plain timer overran by on this machine meanwhile, plus any time the local
        // search itself needed beyond the deadline (only a loaded test machine makes it that slow). The troubles
        // this guards against take 5 s (slow) or 30 s (Retry-After); 50 ms of slack failed once on a loaded CI run
        // (680 ms for a 600 ms deadline while a plain timer was on time: the wake-up after the timer was late), and
        // 300 ms once in a whole `swift test` on 2 cores (913 ms, the timer 0.5 ms late).
        let budget = deadline + .milliseconds(1_500) + lateness + max(.zero, results.localDuration - deadline)
        #expect(
            elapsed < budget, "\(trouble): took \(elapsed); lateness \(lateness), local \(results.localDuration)")
        #expect(results.partial)
        #expect(results.hits.count == 2 && results.hits.allSatisfy { $0.source == .local })
        let problem = results.remoteProblem ?? ""
        switch trouble {
        case .rateLimited: #expect(problem.contains("rate-limited"), "\(problem)")
        case .slow: #expect(problem.contains("did not answer"), "\(problem)")
        default: #expect(problem.contains("remote"), "\(problem)")
        }
    }
}

/// A `search.messages` that pages only by cursor, as Slack does when asked with `cursor=*`.
final class CursorSearchService: RouterMiddleware, Sendable {
    typealias Context = ServeRequestContext
    let seen = Mutex<[String]>([])

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let query = request.uri.queryParameters
        let cursor = query["cursor"].map(String.init) ?? "(none)"
        seen.withLock { $0.append(cursor) }
        let page = ["*": 0, "c1": 1, "c2": 2][cursor] ?? 9
        let matches = (0..<2).map { i in
            #"{"channel":{"id":"C7","name":"far"},"ts":"17000000\#(page)\#(i).000100","user":"U7","text":"\#u{E000}syntax\#u{E001} \#(page)\#(i)"}"#
        }
        let nextCursor = page < 2 ? "c\(page + 1)" : ""
        let body = #"{"ok":true,"messages":{"total":6,"matches":[\#(matches.joined(separator: ","))],"paging":{"pages":1},"pagination":{"next_cursor":"\#(nextCursor)"}}}"#
        return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
    }
}

@Suite struct RemoteSearchPagingTests {
    @Test func cursorsAreFollowedToTheLimit() async throws {
        let archive = try TestSupport.makeArchive()
        let service = CursorSearchService()
        let server = try await LiveSyncTests.start(archive, middleware: [service])
        let client = try SlackWebClient(baseURL: server.baseURL, token: "xoxp-test")
        let page = try await SlackRemoteSearch(client: client).search(
            QueryParser.parse("syntax", today: try #require(Day(year: 2024, month: 1, day: 1))), limit: 10, sort: .relevance)
        await client.shutdown()
        await server.stop()
        #expect(service.seen.withLock { $0 } == ["*", "c1", "c2"])
        #expect(page.hits.count == 6 && page.total == 6)
        #expect(page.hits.allSatisfy { $0.text.hasPrefix("syntax ") && $0.snippet.hasPrefix("\u{E000}syntax\u{E001}") })
    }
}
