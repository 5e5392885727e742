import Foundation
import GRDB
import Hummingbird
import NIOCore
import SlackIndexServer
import Synchronization
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport
@testable import SlackIndexTests

/// Injects faults in front of `serve`'s API, counting requests per method.
final class FaultInjector: RouterMiddleware, Sendable {
    typealias Context = ServeRequestContext

    enum Fault: Sendable {
        case rateLimit(seconds: Int)
        case serverError
        case dropConnection
        case garbage
        /// `{"ok": false, "error": code}` with HTTP 200, as Slack reports API errors.
        case apiError(String)
    }

    /// Decides a fault from the request (number, method, query string) when `plan` and `always` have none.
    let rule: (@Sendable (Int, String, String) -> Fault?)?

    /// Faults by request number (1-based, over all methods).
    let plan: [Int: Fault]
    /// Called with each request's number before it is answered (tests cancel a sync from here).
    let onRequest: (@Sendable (Int) -> Void)?
    /// Delay added to every answer.
    let delay: Duration
    private let counts = Mutex((total: 0, byMethod: [String: Int]()))

    /// A fault for every request not in `plan`.
    let always: Fault?

    init(
        plan: [Int: Fault] = [:], always: Fault? = nil, delay: Duration = .zero,
        rule: (@Sendable (Int, String, String) -> Fault?)? = nil, onRequest: (@Sendable (Int) -> Void)? = nil
    ) {
        self.rule = rule
        self.plan = plan
        self.always = always
        self.delay = delay
        self.onRequest = onRequest
    }

    var total: Int { counts.withLock { $0.total } }
    var byMethod: [String: Int] { counts.withLock { $0.byMethod } }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let method = String(request.uri.path.split(separator: "/").last ?? "")
        let number = counts.withLock { c -> Int in
            c.total += 1
            c.byMethod[method, default: 0] += 1
            return c.total
        }
        onRequest?(number)
        if delay > .zero { try await Task.sleep(for: delay) }
        switch plan[number] ?? always ?? rule?(number, method, request.uri.query ?? "") {
        case .rateLimit(let seconds):
            return Response(
                status: .tooManyRequests, headers: [.retryAfter: String(seconds)],
                body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"ok":false,"error":"ratelimited"}"#)))
        case .serverError:
            return Response(
                status: .internalServerError, body: ResponseBody(byteBuffer: ByteBuffer(string: "upstream exploded")))
        case .dropConnection:
            return Response(
                status: .ok, headers: [.contentLength: "5000"],
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: #"{"ok":true,"messages":["#))
                    throw CancellationError()
                })
        case .apiError(let code):
            return Response(
                status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"ok":false,"error":"\#(code)"}"#)))
        case .garbage:
            return Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: "<html>gateway</html>")))
        case nil:
            return try await next(request, context)
        }
    }
}

@Suite(.serialized) struct LiveSyncTests {
    /// The source archive: sample export plus the generator's history and delta pages.
    static func source() throws -> (Archive, String) {
        let archive = try TestSupport.sampleArchive()
        let pages = Importer(archive: archive).importPaths([TestSupport.samplePages])
        #expect(!pages.hasSkips)
        let token = try archive.createToken(userID: "U0T28J57VPZ", isAdmin: true, label: "sync tests").token
        return (archive, token)
    }

    /// `serve` on `archive` without its per-token rate limit (faults are the injector's business).
    static func start(
        _ archive: Archive, middleware: [any MiddlewareProtocol<Request, Response, ServeRequestContext>] = []
    ) async throws -> RunningSlackAPIServer {
        try await SlackAPIServer.start(
            archive: archive,
            configuration: SlackAPIConfiguration(rateLimit: RateLimit(requests: 1_000_000, interval: .seconds(1))),
            middleware: middleware)
    }

    /// Compares two archives' visible messages, reporting at most a few differences.
    static func expectSameMessages(_ a: Archive, _ b: Archive, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let left = try visible(a)
        let right = try visible(b)
        let onlyLeft = Set(left).subtracting(right).sorted().prefix(5)
        let onlyRight = Set(right).subtracting(left).sorted().prefix(5)
        #expect(
            left.count == right.count && onlyLeft.isEmpty && onlyRight.isEmpty,
            "\(left.count) vs \(right.count) rows; only in first: \(Array(onlyLeft)); only in second: \(Array(onlyRight))",
            sourceLocation: sourceLocation)
    }

    static func fastPolicy() -> SlackWebClient.Policy {
        var policy = SlackWebClient.Policy()
        policy.backoff = .milliseconds(20)
        policy.maxBackoff = .milliseconds(200)
        // No fault here hangs: the timeout only has to outlast a loaded test machine (20 s did not once, and the
        // timed-out request counted as a sixth failure).
        policy.requestTimeout = .seconds(90)
        return policy
    }

    static func sync(
        _ target: Archive, from server: RunningSlackAPIServer, token: String, pageSize: Int = 50, threads: Bool = true
    ) async throws -> Synchronizer.Summary {
        let client = try SlackWebClient(baseURL: server.baseURL, token: token, policy: fastPolicy())
        defer { Task { await client.shutdown() } }
        var options = Synchronizer.Options()
        options.pageSize = pageSize
        options.threads = threads
        return try await Synchronizer(archive: target, client: client, options: options).run()
    }

    /// Every message either archive shows (not deleted), with what a reader sees of it.
    static func visible(_ archive: Archive) throws -> [String] {
        try archive.pool.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT c.slack_id || '|' || m.ts || '|' || coalesce(m.user_id, '') || '|' ||
                        coalesce(m.thread_ts, '') || '|' || m.reply_count || '|' || coalesce(m.edited_ts, '') || '|' ||
                        m.text || '|' || \(SearchTextColumn.sql("m"))
                    FROM message m JOIN conversation c ON c.id = m.conversation_id
                    WHERE m.is_deleted = 0
                    ORDER BY c.slack_id, m.ts_key
                    """)
        }
    }

    @Test func syncThroughFaultsReproducesTheServedArchive() async throws {
        let (source, token) = try Self.source()
        let faults = FaultInjector(plan: [
            3: .rateLimit(seconds: 1), 6: .serverError, 7: .serverError, 9: .dropConnection, 12: .garbage,
            20: .rateLimit(seconds: 1), 40: .dropConnection,
        ])
        let server = try await Self.start(source, middleware: [faults])
        let target = try TestSupport.makeArchive()
        let started = ContinuousClock.now
        let summary = try await Self.sync(target, from: server, token: token)
        let elapsed = ContinuousClock.now - started
        await server.stop()

        try Self.expectSameMessages(target, source)
        try SyncPagesTests.check(target, deletedMayBeAbsent: true)
        #expect(summary.rateLimited == 2)
        #expect(summary.failures == 5)
        // Retry-After is honoured exactly: 2 × 1 s, plus small backoffs.
        #expect(summary.waitedSeconds >= 2 && summary.waitedSeconds < 3.5)
        #expect(elapsed >= .seconds(2))
        #expect(summary.refused.isEmpty && summary.messagesSkipped == 0)
        #expect(summary.requests == faults.total)
        #expect(try source.stats().messages == target.stats().messages)
        // Members known only from messages stay placeholders through serve and sync (`is_placeholder`).
        #expect(try source.stats().placeholderUsers > 0)
        #expect(try source.stats().placeholderUsers == target.stats().placeholderUsers)
        #expect(try source.stats().users == target.stats().users)
    }

    @Test func aSecondSyncFetchesNothingAgain() async throws {
        let (source, token) = try Self.source()
        let faults = FaultInjector()
        let server = try await Self.start(source, middleware: [faults])
        let target = try TestSupport.makeArchive()
        _ = try await Self.sync(target, from: server, token: token)
        let before = try ImportTests.dump(target)
        let countsBefore = faults.byMethod
        let again = try await Self.sync(target, from: server, token: token)
        await server.stop()
        #expect(again.messagesAdded == 0 && again.messagesUpdated == 0 && again.messagesUnchanged == 0)
        #expect(try ImportTests.dump(target) == before)
        let second = faults.byMethod.merging(countsBefore) { $0 - $1 }
        // One (empty) history page per conversation, no replies.
        #expect(second["conversations.history"] == again.conversations)
        #expect(second["conversations.replies", default: 0] == 0)
    }

    @Test func aFullDiskStopsTheSyncWithWhatItCommittedCountedAndTheNextRunFinishes() async throws {
        let (source, token) = try Self.source()
        let server = try await Self.start(source)
        let target = try TestSupport.makeArchive()
        // Room for the listings and some history pages, not for all (SQLITE_FULL past it, as on a full disk).
        let pages = try await target.pool.read { db in
            try Int.fetchOne(db, sql: "PRAGMA page_count")! - Int.fetchOne(db, sql: "PRAGMA freelist_count")!
        }
        try target.store.limitSizeForTesting(pages: pages + 40)
        let stopped = try await Self.sync(target, from: server, token: token)
        // A summary with what was committed, not an error that loses it (issue 47).
        #expect(stopped.stopped?.contains("is full") == true, "\(stopped)")
        let held = try target.stats().messages
        let total = try source.stats().messages
        #expect(held > 0 && held < total, "\(held) of \(total) messages held")
        #expect(stopped.messagesAdded == held)
        try target.store.limitSizeForTesting(pages: nil)
        let finished = try await Self.sync(target, from: server, token: token)
        await server.stop()
        #expect(finished.stopped == nil)
        try Self.expectSameMessages(target, source)
    }

    @Test func anIncrementalSyncAsksOnlyForNewerMessages() async throws {
        // The source starts as the export alone; the delta's new messages arrive later.
        let source = try TestSupport.sampleArchive()
        let token = try source.createToken(userID: "U0T28J57VPZ", isAdmin: true).token
        let server = try await Self.start(source)
        let target = try TestSupport.makeArchive()
        _ = try await Self.sync(target, from: server, token: token)
        try Self.expectSameMessages(target, source)
        _ = Importer(archive: source).importPaths([TestSupport.samplePages])
        let second = try await Self.sync(target, from: server, token: token)
        await server.stop()
        let expected = try SyncPagesTests.expected()
        let newMessages = try expected.reduce(0) { $0 + (try Self.deltaNewMessages($1.id)) }
        #expect(second.messagesAdded == newMessages)
        #expect(second.historyRefetched == 0)  // history asked only for what is newer
        // Every message the source shows that is newer than the first sync is now in the target.
        let targetRows = Set(try Self.visible(target).map { $0.split(separator: "|").prefix(2).joined(separator: "|") })
        for row in try Self.visible(source) {
            let key = row.split(separator: "|").prefix(2).joined(separator: "|")
            let ts = Double(row.split(separator: "|")[1]) ?? 0
            if ts > 1_719_792_000, !targetRows.contains(key) { Issue.record("\(key) missing after the second sync") }
        }
        // The counts `stats` reads are kept exact by sync's writes too, on both sides.
        #expect(try target.store.keptMessageCounts() == target.store.recountedMessageCounts())
        #expect(try source.store.keptMessageCounts() == source.store.recountedMessageCounts())
    }

    static func deltaNewMessages(_ conversationID: String) throws -> Int {
        let manifestURL = URL(fileURLWithPath: TestSupport.samplePages).appendingPathComponent("manifest.json")
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: manifestURL)) as? [String: Any])
        let entries = try #require(manifest["conversations"] as? [[String: Any]])
        let entry = try #require(entries.first { $0["id"] as? String == conversationID })
        let folder = (entry["folder"] as? String) ?? (entry["name"] as? String) ?? conversationID
        let expectedURL = URL(fileURLWithPath: TestSupport.samplePages).appendingPathComponent("\(folder)/expected.json")
        let expected = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: expectedURL)) as? [String: Any])
        return expected["delta_new_messages"] as? Int ?? 0
    }

    /// The source, its token and what a whole sync of it gives: made once for the stop cases (a third of their
    /// time when each made its own, measured 2026-11-28).
    static let syncedOnce = Task { () async throws -> (source: Archive, token: String, reference: Archive) in
        let (source, token) = try Self.source()
        let reference = try TestSupport.makeArchive()
        let server = try await Self.start(source)
        _ = try await Self.sync(reference, from: server, token: token)
        await server.stop()
        return (source, token, reference)
    }

    @Test(arguments: [2, 5, 11, 30])
    func aSyncStoppedAtAnyRequestResumesToTheSameState(stopAt: Int) async throws {
        let (source, token, reference) = try await Self.syncedOnce.value

        let target = try TestSupport.makeArchive()
        let victim = Mutex<Task<Synchronizer.Summary, any Error>?>(nil)
        let faults = FaultInjector(onRequest: { number in
            if number == stopAt { victim.withLock { $0?.cancel() } }
        })
        let server = try await Self.start(source, middleware: [faults])
        let task = Task { try await Self.sync(target, from: server, token: token) }
        victim.withLock { $0 = task }
        await #expect(throws: CancellationError.self) { try await task.value }
        let runsInProgress = try target.conversations().filter { try target.store.syncRun(conversationRowID: $0.rowID) != nil }
        let resumed = try await Self.sync(target, from: server, token: token)
        await server.stop()
        try Self.expectSameMessages(target, reference)
        try SyncPagesTests.check(target, deletedMayBeAbsent: true)
        #expect(resumed.messagesSkipped == 0)
        // The resumed run asks only for what it lacks: no history page comes back with stored messages.
        #expect(resumed.historyRefetched == 0)
        #expect(resumed.resumed == runsInProgress.count)
        #expect(try target.conversations().allSatisfy { try target.store.syncRun(conversationRowID: $0.rowID) == nil })
    }

    @Test func threadsSkippedWithNoThreadsAreFetchedByTheNextSync() async throws {
        let (source, token) = try Self.source()
        let server = try await Self.start(source)
        let target = try TestSupport.makeArchive()
        let first = try await Self.sync(target, from: server, token: token, threads: false)
        #expect(first.repliesPages == 0)
        #expect(try target.stats().messages < source.stats().messages)
        let second = try await Self.sync(target, from: server, token: token)
        await server.stop()
        #expect(second.threads > 0 && second.historyRefetched == 0)
        try Self.expectSameMessages(target, source)
    }

    @Test func savedSearchHitsDoNotMoveTheSyncCheckpoint() throws {
        let days = ["2023-11-14": #"[{"type":"message","user":"U1","text":"exported","ts":"1700000000.000100"}]"#]
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.minimalExport(days: days).path)
        let general = try archive.conversation(named: "C1")
        #expect(try archive.store.syncCheckpoint(conversationRowID: general.rowID) == "1700000000.000100")
        let hit = RemoteHit(
            conversationID: "C1", conversationName: "general", ts: "1700000500.000100", userID: "U1", username: "ann",
            text: "found remotely", snippet: "found remotely")
        #expect(try Importer(archive: archive).storeRemoteHits([hit]) == 1)
        // Messages between the export and the saved hit are still to fetch.
        #expect(try archive.store.syncCheckpoint(conversationRowID: general.rowID) == "1700000000.000100")
    }

    @Test func aRefusedCursorOnResumeContinuesBelowWhatIsStored() async throws {
        let (source, token) = try Self.source()
        let target = try TestSupport.makeArchive()
        // Stop during the first large conversation's history, with a cursor saved.
        let victim = Mutex<Task<Synchronizer.Summary, any Error>?>(nil)
        let stopper = FaultInjector(onRequest: { number in if number == 8 { victim.withLock { $0?.cancel() } } })
        let first = try await Self.start(source, middleware: [stopper])
        let task = Task { try await Self.sync(target, from: first, token: token, pageSize: 20) }
        victim.withLock { $0 = task }
        _ = try? await task.value
        await first.stop()
        let stopped = try target.conversations().filter { try target.store.syncRun(conversationRowID: $0.rowID) != nil }
        try #require(stopped.count == 1)
        let saved = try target.store.syncRun(conversationRowID: stopped[0].rowID)
        try #require(saved?.cursor != nil)

        // The server no longer accepts that cursor (cursors expire): the run goes on with `latest` = its low ts.
        let refusing = FaultInjector(rule: { _, method, query in
            method == "conversations.history" && query.contains("cursor=") && !query.contains("latest=")
                ? .apiError("invalid_cursor") : nil
        })
        let second = try await Self.start(source, middleware: [refusing])
        let resumed = try await Self.sync(target, from: second, token: token, pageSize: 20)
        await second.stop()
        #expect(resumed.resumed == 1)
        #expect(resumed.historyRefetched == 0)
        try Self.expectSameMessages(target, source)
    }
}
