import Foundation

/// Keeps an archive current from a Slack-compatible Web API (`slackindex sync`).
///
/// One run: `auth.test`; `users.list` and `conversations.list` (all pages); then per conversation
/// `conversations.history` from where the archive's history is complete (`oldest` = that exact ts, so nothing it
/// holds is fetched again), newest first to the end; then `conversations.replies` for every thread whose
/// `latest_reply` is newer than the replies the archive holds. Each page is stored in one transaction together with
/// the run's next cursor (``Archive/SyncRun``), so a sync killed at any moment resumes at the page it stopped at and
/// reaches the same final state. Rate limits and failures are the client's business (``SlackWebClient``).
///
/// Slack's `conversations.history` does not list old parents whose threads got new replies; such replies arrive
/// only when the parent is fetched again (a full sync of the conversation: `--full`).
public final class Synchronizer: Sendable {
    /// What to sync.
    public struct Options: Sendable {
        /// Messages per page (`limit`); Slack allows up to 999 for history, fewer for some apps.
        public var pageSize = 200
        /// Only these conversations (ids or names); nil for all the token sees.
        public var conversations: [String]?
        /// Fetch replies of threads with new activity (when off, they stay queued for a later run).
        public var threads = true
        /// Ignore the checkpoint and fetch whole histories (still idempotent).
        public var full = false

        public init() {}
    }

    /// Where a run is, for progress lines.
    public struct Progress: Sendable {
        public var phase: String
        public var conversationsDone: Int
        public var conversationsTotal: Int
        public var threadsDone: Int
        public var threadsTotal: Int
        public var messages: Int
        public var requests: Int
        public var rateLimited: Int
        public var failures: Int
        public var elapsed: Double
    }

    /// What a run did.
    public struct Summary: Sendable, Codable {
        public var users = 0
        public var usersAdded = 0
        public var conversations = 0
        public var conversationsAdded = 0
        /// Conversations whose history run resumed from an interrupted sync.
        public var resumed = 0
        public var historyPages = 0
        /// Messages history pages returned that the archive already held unchanged (0 when nothing is refetched).
        public var historyRefetched = 0
        public var threads = 0
        public var repliesPages = 0
        public var listPages = 0
        public var messagesAdded = 0
        public var messagesUpdated = 0
        public var messagesUnchanged = 0
        public var messagesSkipped = 0
        public var skipReasons: [String: Int] = [:]
        /// Conversations or threads the API refused, with its error.
        public var refused: [String] = []
        public var requests = 0
        public var rateLimited = 0
        public var failures = 0
        public var waitedSeconds = 0.0
        public var bytes: Int64 = 0
        public var seconds = 0.0
        /// Why the run stopped before its end (a full disk), what stays and what to do; nil when it finished.
        public var stopped: String?
        /// Messages stored per second of the run.
        public var messagesPerSecond: Double { seconds > 0 ? Double(messagesAdded + messagesUpdated) / seconds : 0 }
    }

    public typealias ProgressHandler = @Sendable (Progress) -> Void

    private let archive: any ImportSink & SyncState & Directory & Timelines & FileArchive & WorkspaceImages
    private let client: SlackWebClient
    private let options: Options

    public init(archive: Archive, client: SlackWebClient, options: Options = Options()) {
        self.archive = archive.store
        self.client = client
        self.options = options
    }

    /// Runs one sync (see the type's overview).
    ///
    /// - Throws: ``RemoteError`` when the API cannot be used at all (bad token, unreachable after retries);
    ///   `CancellationError` when cancelled. Work already stored stays, and the next run resumes from it.
    public func run(progress: ProgressHandler? = nil) async throws -> Summary {
        let started = ContinuousClock.now
        var state = RunState()
        // Takes the state as an argument: a closure capturing it would overlap the `inout` access the steps hold.
        func report(_ phase: String, _ state: RunState) {
            guard let progress else { return }
            let stats = client.stats
            progress(
                Progress(
                    phase: phase, conversationsDone: state.conversationsDone, conversationsTotal: state.conversationsTotal,
                    threadsDone: state.threadsDone, threadsTotal: state.threadsTotal,
                    messages: state.importSummary.messagesRead, requests: stats.requests,
                    rateLimited: stats.rateLimited, failures: stats.failures,
                    elapsed: (ContinuousClock.now - started).seconds))
        }
        var summary = Summary()
        do {
            try await syncAll(summary: &summary, state: &state, report: report)
        } catch {
            // A failed write (a full disk) ends the run with what it committed counted, not with an error that
            // loses the counts (issue 47): every page before it was committed with its cursor.
            guard let failure = StoreError.writeFailure(error, path: archive.path) else { throw error }
            summary.stopped = "\(failure)"
        }

        let stats = client.stats
        summary.messagesAdded = state.importSummary.messagesAdded
        summary.messagesUpdated = state.importSummary.messagesUpdated
        summary.messagesUnchanged = state.importSummary.messagesUnchanged
        summary.messagesSkipped = state.importSummary.messagesSkipped
        summary.skipReasons = state.importSummary.skipReasons
        summary.requests = stats.requests
        summary.rateLimited = stats.rateLimited
        summary.failures = stats.failures
        summary.waitedSeconds = stats.waited
        summary.bytes = stats.bytes
        summary.seconds = (ContinuousClock.now - started).seconds
        return summary
    }

    /// The run's three steps (see the type's overview).
    private func syncAll(
        summary: inout Summary, state: inout RunState, report: (String, RunState) -> Void
    ) async throws {
        // 1. Who we are, who is there, what there is.
        report("users", state)
        let conversations = try await syncListings(summary: &summary)
        state.conversationsTotal = conversations.count

        var preparer = MessagePreparer(names: try archive.nameDirectory())
        let importer = Importer(store: archive)
        // Every page through the import pipeline's session, committed with its sync progress before the next request
        // (a run stopped anywhere resumes from what it committed). The session ends with the events whose messages
        // came and the reply counts of the threads fetched.
        let pipeline = ImportPipeline(sink: archive, plan: ImportPlan(commitMessages: 1), capacity: 1)
        do {
            // 2. Histories.
            for conversation in conversations {
                report("history", state)
                try await syncHistory(
                    conversation, importer: importer, pipeline: pipeline, preparer: &preparer, summary: &summary,
                    state: &state, report: report)
                state.conversationsDone += 1
            }

            // 3. Threads with new replies (also those queued by an interrupted run).
            if options.threads {
                try await syncQueuedThreads(
                    of: conversations, importer: importer, pipeline: pipeline, preparer: &preparer,
                    summary: &summary, state: &state, report: report)
            }
        } catch {
            // What the session committed beyond the pages counted (a page whose commit succeeded and whose
            // checkpoint then failed) stays in the archive and is counted.
            _ = pipeline.finish(into: &state.importSummary)
            throw error
        }
        if let failure = pipeline.finish(into: &state.importSummary) { throw failure }
        report("done", state)
    }

    /// `auth.test`, then every page of `users.list` and `conversations.list`, stored; returns the conversations
    /// this run syncs.
    private func syncListings(summary: inout Summary) async throws -> [Conversation] {
        let auth = try JSONDecoder().decode(AuthTest.self, from: Data(try await client.call("auth.test")))
        let me = auth.userID
        var users: [UserRecord] = []
        try await paginate("users.list", [("limit", "200")], summary: &summary) { body in
            users += try JSONDecoder().decode(MembersPage.self, from: Data(body)).members
        }
        var records: [ConversationRecord] = []
        try await paginate(
            "conversations.list",
            [("types", "public_channel,private_channel,mpim,im"), ("exclude_archived", "false"), ("limit", "200")],
            summary: &summary
        ) { body in
            records += try JSONDecoder().decode(ChannelsPage.self, from: Data(body)).channels
        }
        let handles = Dictionary(users.map { ($0.id, $0.name ?? $0.id) }, uniquingKeysWith: { a, _ in a })
        let inputs = records.map { $0.input(kind: $0.declaredKind, handles: handles, folder: false, me: me) }
        // The conversations are the token's workspace's: where another workspace has a conversation of the same
        // name, they are told apart by it (`acme/#general`).
        let stored = try archive.storeListings(users: users.map(\.input), conversations: inputs, workspace: auth.workspace)
        summary.users = users.count
        summary.usersAdded = stored.usersAdded
        summary.conversationsAdded = stored.conversationsAdded

        var selected = records.map(\.id)
        if let wanted = options.conversations {
            selected = try wanted.map { try archive.conversation(named: $0).id }
        }
        var conversations: [Conversation] = []
        for id in selected { conversations.append(try archive.conversation(named: id)) }
        summary.conversations = conversations.count
        return conversations
    }

    /// Fetches the replies of the queued threads of `conversations`, then raises their parents' reply counts.
    private func syncQueuedThreads(
        of conversations: [Conversation], importer: Importer, pipeline: ImportPipeline,
        preparer: inout MessagePreparer, summary: inout Summary, state: inout RunState,
        report: (String, RunState) -> Void
    ) async throws {
        let byRowID = Dictionary(
            try archive.conversations().map { ($0.rowID, $0) }, uniquingKeysWith: { a, _ in a })
        let selectedRowIDs = Set(conversations.map(\.rowID))
        let queued = try archive.syncThreads().filter { selectedRowIDs.contains($0.conversationRowID) }
        state.threadsTotal = queued.count
        var touched = Set<Int64>()
        for thread in queued {
            report("threads", state)
            guard let conversation = byRowID[thread.conversationRowID] else {
                try Self.drop(thread.threadTS, of: thread.conversationRowID, through: pipeline)
                continue
            }
            try await syncReplies(
                thread, in: conversation, importer: importer, pipeline: pipeline, preparer: &preparer,
                summary: &summary, state: &state)
            touched.insert(conversation.rowID)
            state.threadsDone += 1
        }
        summary.threads = queued.count
        let recount = touched.sorted()
        _ = try pipeline.perform { session in session.recountReplies(conversations: recount) }
    }

    /// Takes a thread off the sync queue (its conversation is gone, or the API refused it), through the session.
    private static func drop(_ threadTS: String, of conversationRowID: Int64, through pipeline: ImportPipeline) throws {
        var drop = PageWrite(conversationRowID: conversationRowID)
        drop.sync = .thread(threadTS: threadTS, cursor: nil)
        _ = try pipeline.write(page: drop)
    }

    private struct RunState {
        var conversationsDone = 0
        var conversationsTotal = 0
        var threadsDone = 0
        var threadsTotal = 0
        var importSummary = ImportSummary()
    }

    private func syncHistory(
        _ conversation: Conversation, importer: Importer, pipeline: ImportPipeline, preparer: inout MessagePreparer,
        summary: inout Summary, state: inout RunState, report: (String, RunState) -> Void
    ) async throws {
        var run: SyncRun
        if let stopped = try archive.syncRun(conversationRowID: conversation.rowID) {
            run = stopped
            summary.resumed += 1
        } else {
            let oldest = options.full ? nil : try archive.syncCheckpoint(conversationRowID: conversation.rowID)
            run = SyncRun(oldestTS: oldest)
        }
        while true {
            var parameters = [("channel", conversation.id), ("limit", String(options.pageSize))]
            if let oldest = run.oldestTS { parameters.append(("oldest", oldest)) }
            if let cursor = run.cursor {
                parameters.append(("cursor", cursor))
            } else if let low = run.lowTS {
                // Resuming without a usable cursor: continue below what is stored.
                parameters.append(("latest", low))
            }
            let body: [UInt8]
            do {
                body = try await client.call("conversations.history", parameters)
            } catch RemoteError.api(_, "invalid_cursor") where run.cursor != nil {
                run.cursor = nil
                continue
            } catch RemoteError.api(_, let error) where Self.conversationErrors.contains(error) {
                summary.refused.append("\(conversation.displayName) (\(conversation.id)): \(error)")
                return
            }
            let before = run
            let unchangedBefore = state.importSummary.messagesUnchanged
            let outcome = try importer.applyPage(
                body, source: "conversations.history \(conversation.id)", into: conversation,
                preparer: &preparer, summary: &state.importSummary, writingTo: pipeline
            ) { outcome in
                // Threads are always queued, even with `threads` off: the checkpoint moves past these parents, so
                // a later run only finds them in the queue.
                .history(
                    run: Self.advanced(before, by: outcome), finished: outcome.cursor == nil || outcome.messages == 0,
                    threads: outcome.threads)
            }
            summary.historyPages += 1
            summary.historyRefetched += state.importSummary.messagesUnchanged - unchangedBefore
            run = Self.advanced(run, by: outcome)
            report("history", state)
            if outcome.cursor == nil || outcome.messages == 0 { return }
        }
    }

    private func syncReplies(
        _ queued: SyncThread, in conversation: Conversation, importer: Importer, pipeline: ImportPipeline,
        preparer: inout MessagePreparer, summary: inout Summary, state: inout RunState
    ) async throws {
        var cursor = queued.cursor
        while true {
            var parameters = [
                ("channel", conversation.id), ("ts", queued.threadTS), ("limit", String(options.pageSize)),
            ]
            if let oldest = queued.oldestTS { parameters.append(("oldest", oldest)) }
            if let cursor { parameters.append(("cursor", cursor)) }
            let body: [UInt8]
            do {
                body = try await client.call("conversations.replies", parameters)
            } catch RemoteError.api(_, "invalid_cursor") where cursor != nil {
                cursor = nil
                continue
            } catch RemoteError.api(_, let error)
                where error == "thread_not_found" || Self.conversationErrors.contains(error)
            {
                summary.refused.append("thread \(queued.threadTS) in \(conversation.displayName): \(error)")
                try Self.drop(queued.threadTS, of: conversation.rowID, through: pipeline)
                return
            }
            let outcome = try importer.applyPage(
                body, source: "conversations.replies \(conversation.id) \(queued.threadTS)", into: conversation,
                preparer: &preparer, summary: &state.importSummary, recordSpan: false, writingTo: pipeline
            ) { outcome in
                .thread(threadTS: queued.threadTS, cursor: outcome.messages == 0 ? nil : outcome.cursor)
            }
            summary.repliesPages += 1
            cursor = outcome.cursor
            if cursor == nil || outcome.messages == 0 { return }
        }
    }

    /// Calls a list method page by page until its cursor runs out.
    private func paginate(
        _ method: String, _ parameters: [(String, String)], summary: inout Summary, page: ([UInt8]) throws -> Void
    ) async throws {
        var cursor: String?
        repeat {
            var all = parameters
            if let cursor { all.append(("cursor", cursor)) }
            let body = try await client.call(method, all)
            summary.listPages += 1
            try page(body)
            let metadata = try JSONDecoder().decode(Metadata.self, from: Data(body))
            cursor = metadata.response_metadata?.next_cursor.flatMap { $0.isEmpty ? nil : $0 }
        } while cursor != nil
    }

    /// API errors that concern one conversation only: it is skipped and reported, the sync goes on.
    static let conversationErrors: Set<String> = [
        "channel_not_found", "not_in_channel", "missing_scope", "access_denied", "is_archived",
    ]

    /// A history run's state after one more page.
    static func advanced(_ run: SyncRun, by page: Importer.PageOutcome) -> SyncRun {
        var next = run
        next.pages += 1
        next.topTS = newer(next.topTS, page.newestTS)
        next.lowTS = older(next.lowTS, page.oldestTS)
        next.cursor = page.cursor
        return next
    }

    static func newer(_ a: String?, _ b: String?) -> String? {
        guard let a, let b else { return a ?? b }
        return (SlackTimestamp.parseKey(b) ?? 0) > (SlackTimestamp.parseKey(a) ?? 0) ? b : a
    }

    static func older(_ a: String?, _ b: String?) -> String? {
        guard let a, let b else { return a ?? b }
        return (SlackTimestamp.parseKey(b) ?? 0) < (SlackTimestamp.parseKey(a) ?? 0) ? b : a
    }

    private struct AuthTest: Decodable {
        var userID: String?
        var teamID: String?
        var url: String?
        enum CodingKeys: String, CodingKey {
            case userID = "user_id"
            case teamID = "team_id"
            case url
        }

        /// The workspace: its team id, and its domain when `url` is `https://DOMAIN.slack.com/`.
        var workspace: WorkspaceInput? {
            guard let teamID, !teamID.isEmpty else { return nil }
            let host = url.flatMap { URL(string: $0)?.host?.lowercased() }
            let domain = host.flatMap { $0.hasSuffix(".slack.com") ? String($0.dropLast(".slack.com".count)) : nil }
            return WorkspaceInput(teamID: teamID, domain: domain.flatMap { $0.isEmpty || $0.contains(".") ? nil : $0 })
        }
    }
    private struct MembersPage: Decodable { var members: [UserRecord] }
    private struct ChannelsPage: Decodable { var channels: [ConversationRecord] }
    private struct Metadata: Decodable {
        struct Inner: Decodable { var next_cursor: String? }
        var response_metadata: Inner?
    }
}
