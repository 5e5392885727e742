import Foundation
import NIOPosix
import SlackIndex
import Synchronization

/// What the API server needs besides the archive.
public struct SlackAPIConfiguration: Sendable {
    /// Requests per token (every method counts).
    public var rateLimit: RateLimit
    /// The rate limiter's clock: time elapsed since any fixed origin. Nil reads `ContinuousClock`.
    public var now: (@Sendable () -> Duration)?
    /// Largest request body read (POST forms and JSON), in bytes.
    public var maxBodyBytes: Int
    /// `search.messages` calls one token may have running or waiting at once; more answer `ratelimited` (HTTP
    /// 429), so one client's deep searches cannot take every search thread.
    public var searchesPerToken = 2
    /// Threads that run searches, apart from the threads of the cheap reads (history, replies, lists): a read
    /// never queues behind searches. One per core (at least 2): each search uses one core (`SearchSlots`).
    public var searchThreads = max(2, ProcessInfo.processInfo.activeProcessorCount)
    /// Searches that may wait for a search thread, all tokens together, each for at most `searchWait`; past
    /// either, a search answers HTTP 503 with `Retry-After: 1` and `service_unavailable` (`SearchSlots`).
    public var searchQueue = 256
    /// How long a search waits for a search thread before it is told to come back.
    public var searchWait: Duration = .seconds(2)
    /// `search.messages` counts matches exactly up to this many; past it, `total` is the index's estimate where it
    /// has one (PostgreSQL's statistics), with `"total_exact": false`. The deepest page asked for is 10,000 hits,
    /// and an exact count of a common word visits every match: on PostgreSQL at 1M, `the` took 0.6 s a search,
    /// which two servers on 2 cores could not give 50 clients (docs/performance.md).
    public var exactCountsUpTo = 10_000
    /// A connection that sends no complete request for this long (idle, or a request trickled in) is closed.
    public var idleTimeout: Duration = .seconds(15)
    /// Connections open at once. A new one past this closes the connection idle longest (see `ConnectionGuard`);
    /// when every connection is busy answering a request, the new one is closed.
    public var maxConnections = 256
    /// Connections one client address (an IPv6 /64) may hold; a new one past this closes that address's own
    /// connection idle longest, so one address cannot hold the server.
    public var maxConnectionsPerAddress = 32
    /// Under pressure (more than half of `maxConnections` open), a connection with no request in flight is closed
    /// after this long instead of `idleTimeout`.
    public var busyIdleTimeout: Duration = .seconds(1)
    /// A Slack-compatible search service whose hits `search.messages` merges into the first page of results
    /// (`SlackAPI.mergedSearch`); nil searches the archive alone.
    public var remote: (any RemoteSearch)?
    /// How long a search waits for the remote, from the call.
    public var remoteDeadline: Duration = .milliseconds(1500)
    /// What `serve --metrics` counts, served at `GET /metrics`; nil counts nothing and answers 404 there.
    public var metrics: ServeMetrics?

    public init(rateLimit: RateLimit = .standard, now: (@Sendable () -> Duration)? = nil, maxBodyBytes: Int = 1 << 20) {
        self.rateLimit = rateLimit
        self.now = now
        self.maxBodyBytes = maxBodyBytes
    }
}

/// One answer of the API: what goes on the wire.
public struct SlackAPIResponse: Sendable {
    /// 200 for every answer Slack gives with `ok` true or false; 429 when rate limited.
    public var status: Int
    /// Seconds to wait (`Retry-After`) with a 429.
    public var retryAfter: Int?
    /// The JSON body.
    public var body: String
    /// The body's `error` when `ok` is false.
    public var error: String?

    public var ok: Bool { error == nil }
}

/// The archive as a subset of Slack's Web API: each method answers like Slack's, for the token's user.
///
/// Independent of HTTP (`SlackAPIServer` puts it behind Hummingbird), so tests can call methods directly.
/// Methods: `api.test`, `auth.test`, `users.list`, `users.info`, `conversations.list`, `conversations.info`,
/// `conversations.history`, `conversations.replies`, `search.messages`, `chat.getPermalink`, and slackindex's
/// own for the web UI, `slackindex.conversations`, `slackindex.timeline`, `slackindex.count` and
/// `slackindex.images` (`SlackAPI+UI.swift`).
///
/// Access: a token sees public channels, and the private channels, DMs and group DMs whose members include its
/// user; an admin token sees every conversation. A conversation a token cannot see answers `channel_not_found`,
/// as Slack does for channels you are not in, and search never returns its messages.
public final class SlackAPI: Sendable {
    /// The roles the API reads: conversations, users and what a token sees; timelines; the tokens themselves; the
    /// files fetched; avatars and custom emoji; the counts `/metrics` reads.
    package let archive: any Directory & Timelines & TokenStore & FileArchive & WorkspaceImages & ArchiveGauges
    /// How the archive was opened: read-only, it cannot keep the web UI's sessions (`SessionStore`).
    let access: Archive.Access
    public let configuration: SlackAPIConfiguration
    let limiter: RateLimiter
    let engine: SearchEngine
    /// The search threads (`SlackAPIConfiguration.searchThreads`).
    let searchPool: NIOThreadPool
    /// Searches in flight (running or waiting) per presented token.
    let searches = Mutex<[String: Int]>([:])
    /// The search threads' slots and the searches waiting for one.
    let slots: SearchSlots
    /// Until when the remote is not asked (it answered `ratelimited` with this `Retry-After`).
    let remotePause = Mutex<ContinuousClock.Instant?>(nil)

    /// The methods served.
    public static let methods: Set<String> = [
        "api.test", "auth.test", "users.list", "users.info", "conversations.list", "conversations.info",
        "conversations.history", "conversations.replies", "search.messages", "chat.getPermalink",
        "slackindex.conversations", "slackindex.timeline", "slackindex.count", "slackindex.images",
    ]

    public init(archive: Archive, configuration: SlackAPIConfiguration = SlackAPIConfiguration()) {
        self.archive = archive.store
        access = archive.access
        self.configuration = configuration
        engine = SearchEngine(archive: archive)
        searchPool = NIOThreadPool(numberOfThreads: max(1, configuration.searchThreads))
        searchPool.start()
        slots = SearchSlots(slots: configuration.searchThreads, maxWaiting: configuration.searchQueue)
        limiter = RateLimiter(limit: configuration.rateLimit, now: configuration.now ?? RateLimiter.continuousTime())
    }

    deinit {
        searchPool.shutdownGracefully { _ in }
    }

    /// Runs one method call.
    ///
    /// - Parameters:
    ///   - method: the method name (`conversations.history`).
    ///   - parameters: the call's arguments (query string and body merged).
    ///   - bearer: the token from `Authorization: Bearer …`; else `parameters["token"]` is used.
    /// - Returns: the answer; failures are answers too (`ok: false`), never thrown.
    /// - Complexity: that of the method's query (each states its own); the rate limit check is O(1).
    public func call(_ method: String, parameters: [String: String], bearer: String? = nil) async -> SlackAPIResponse {
        let presented = bearer.flatMap { $0.isEmpty ? nil : $0 } ?? parameters["token"].flatMap { $0.isEmpty ? nil : $0 }
        return await call(method, parameters: parameters, caller: presented.map { .presented($0) })
    }

    /// Runs one method call for `caller` (a presented token, or a web UI session's token record).
    func call(_ method: String, parameters: [String: String], caller: APICaller?) async -> SlackAPIResponse {
        if let wait = await limiter.acquire(caller?.rateKey ?? "") {
            configuration.metrics?.rateLimited(.token)
            let seconds = RateLimiter.retryAfter(wait)
            return SlackAPIResponse(
                status: 429, retryAfter: seconds, body: #"{"ok":false,"error":"ratelimited"}"#, error: "ratelimited")
        }
        guard SlackAPI.methods.contains(method) else { return SlackAPI.failure("unknown_method") }
        if method == "api.test" {
            let args = JSONValue.object(parameters.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
            return SlackAPI.success([("args", args)])
        }
        guard let caller else { return SlackAPI.failure("not_authed") }
        if method == "search.messages" || method == "slackindex.count" {
            return await search(method, parameters: parameters, caller: caller)
        }
        // The archive's reads block (SQLite): run them on NIO's thread pool, not the cooperative pool that the
        // server's own tasks (parsing, rate limits, other requests) need.
        do {
            return try await NIOThreadPool.singleton.runIfActive {
                self.answer(method, parameters: parameters, caller: caller)
            }
        } catch {
            return SlackAPI.failure("internal_error")
        }
    }

    /// `search.messages` and `slackindex.count` on the search threads: at most `searchesPerToken` at once per token
    /// (past it, Slack's `ratelimited` with `Retry-After: 1`); a search finding every thread busy waits for one
    /// (`SearchSlots`), at most `searchWait`, and then answers 503 `service_unavailable` with `Retry-After: 1`.
    private func search(_ method: String, parameters: [String: String], caller: APICaller) async -> SlackAPIResponse {
        let presented = caller.rateKey
        let admitted = searches.withLock { inFlight in
            guard inFlight[presented, default: 0] < configuration.searchesPerToken else { return false }
            inFlight[presented, default: 0] += 1
            return true
        }
        guard admitted else {
            configuration.metrics?.rateLimited(.searchesPerToken)
            return SlackAPIResponse(
                status: 429, retryAfter: 1, body: #"{"ok":false,"error":"ratelimited"}"#, error: "ratelimited")
        }
        defer {
            searches.withLock { inFlight in
                inFlight[presented, default: 1] -= 1
                if inFlight[presented] == 0 { inFlight[presented] = nil }
            }
        }
        let queued = ContinuousClock.now
        guard await slots.acquire(waitingAtMost: configuration.searchWait) else {
            configuration.metrics?.searchUnavailable()
            return SlackAPIResponse(
                status: 503, retryAfter: 1, body: #"{"ok":false,"error":"service_unavailable"}"#,
                error: "service_unavailable")
        }
        defer { slots.release() }
        configuration.metrics?.searchStarted(afterWaiting: queued.duration(to: .now))
        let answer: SlackAPIResponse
        if method == "search.messages", let remote = configuration.remote {
            answer = await mergedSearch(parameters: parameters, caller: caller, remote: remote)
        } else {
            do {
                answer = try await searchPool.runIfActive {
                    self.answer(method, parameters: parameters, caller: caller)
                }
            } catch {
                answer = SlackAPI.failure("internal_error")
            }
        }
        return answer
    }

    /// The method's answer, from the archive (blocking).
    private func answer(_ method: String, parameters: [String: String], caller: APICaller) -> SlackAPIResponse {
        SlackAPI.respond {
            let request = APIRequest(parameters: parameters, token: try verifiedToken(caller))
            switch method {
            case "auth.test": return try authTest(request)
            case "users.list": return try usersList(request)
            case "users.info": return try usersInfo(request)
            case "conversations.list": return try conversationsList(request)
            case "conversations.info": return try conversationsInfo(request)
            case "conversations.history": return try history(request)
            case "conversations.replies": return try replies(request)
            case "search.messages": return try searchMessages(request)
            case "chat.getPermalink": return try permalink(request)
            case "slackindex.conversations": return try uiConversations(request)
            case "slackindex.timeline": return try uiTimeline(request)
            case "slackindex.count": return try searchCount(request)
            case "slackindex.images": return try uiImages(request)
            default: throw APIFailure(code: "unknown_method")
            }
        }
    }

    /// The caller's token record: a presented token is verified against the archive (blocking).
    /// - Throws: `invalid_auth` for a token the archive does not have.
    func verifiedToken(_ caller: APICaller) throws -> APIToken {
        switch caller {
        case .presented(let presented):
            guard let verified = try archive.verifyToken(presented) else { throw APIFailure(code: "invalid_auth") }
            return verified
        case .record(let record, _): return record
        }
    }

    /// `work`'s members as a success, its `APIFailure` as Slack's error, anything else as `internal_error`.
    static func respond(_ work: () throws -> [(String, JSONValue)]) -> SlackAPIResponse {
        do {
            return success(try work())
        } catch let failure as APIFailure {
            return SlackAPI.failure(failure.code, messages: failure.messages)
        } catch StoreError.primaryUnavailable {
            // A write while the PostgreSQL primary does not answer (reads go on from the replica).
            var refused = SlackAPI.failure(
                "service_unavailable",
                messages: ["the archive's primary database does not answer: nothing can be written until it does "
                    + "or its replica is promoted"])
            refused.status = 503
            refused.retryAfter = 10
            return refused
        } catch {
            return SlackAPI.failure("internal_error")
        }
    }

    static func success(_ members: [(String, JSONValue)]) -> SlackAPIResponse {
        SlackAPIResponse(status: 200, body: JSONValue.object([("ok", .bool(true))] + members).serialized)
    }

    static func failure(_ code: String, messages: [String] = []) -> SlackAPIResponse {
        var members: [(String, JSONValue)] = [("ok", .bool(false)), ("error", .string(code))]
        if !messages.isEmpty {
            members.append(("response_metadata", .object([("messages", .array(messages.map { .string($0) }))])))
        }
        return SlackAPIResponse(status: 200, body: JSONValue.object(members).serialized, error: code)
    }
}

/// Who a call is for.
enum APICaller: Sendable {
    /// A token as presented (`Authorization: Bearer`, `token=`, or a web UI session made with it): verified against
    /// the archive on every call, so a revoked token stops working at once.
    case presented(String)
    /// A token record held by the server itself (the owner's web UI session from `serve --open`); `key` names its
    /// rate limit bucket.
    case record(APIToken, key: String)

    /// The rate limiter's and the search queue's key.
    var rateKey: String {
        switch self {
        case .presented(let token): token
        case .record(_, let key): key
        }
    }
}

/// A Slack error code (`channel_not_found`), with Slack's optional `response_metadata.messages`.
struct APIFailure: Error {
    var code: String
    var messages: [String] = []

    static let channelNotFound = APIFailure(code: "channel_not_found")
    static let invalidCursor = APIFailure(code: "invalid_cursor")

    static func missing(_ name: String) -> APIFailure {
        APIFailure(code: "invalid_arguments", messages: ["[ERROR] missing required field: \(name)"])
    }

    static func invalid(_ name: String, _ why: String) -> APIFailure {
        APIFailure(code: "invalid_arguments", messages: ["[ERROR] \(why) [json-pointer:/\(name)]"])
    }
}

/// One call's arguments, read the way Slack reads them (everything arrives as text).
struct APIRequest {
    var parameters: [String: String]
    var token: APIToken

    /// The argument, nil when absent or empty.
    func string(_ name: String) -> String? {
        guard let value = parameters[name], !value.isEmpty else { return nil }
        return value
    }

    func required(_ name: String) throws -> String {
        guard let value = string(name) else { throw APIFailure.missing(name) }
        return value
    }

    /// `true`/`1` are true; anything else (or nothing) is false. With `default: true` (a parameter that is on unless
    /// turned off: `exact_total`, `suggest`), `false`/`0` are false and anything else (or nothing) is true.
    func bool(_ name: String, default defaultValue: Bool = false) -> Bool {
        guard let value = string(name)?.lowercased() else { return defaultValue }
        return defaultValue ? value != "false" && value != "0" : value == "true" || value == "1"
    }

    func int(_ name: String) throws -> Int? {
        guard let text = string(name) else { return nil }
        guard let value = Int(text) else { throw APIFailure.invalid(name, "must be an integer") }
        return value
    }

    /// A page size: absent or 0 gives `defaultValue`; larger than `maximum` is cut to it (as Slack does).
    func limit(default defaultValue: Int, maximum: Int, name: String = "limit") throws -> Int {
        guard let value = try int(name), value > 0 else {
            if let value = try int(name), value < 0 { throw APIFailure.invalid(name, "must be positive") }
            return defaultValue
        }
        return min(value, maximum)
    }

    /// A Slack ts argument (`oldest`, `latest`), exact.
    func timestamp(_ name: String) throws -> SlackTimestamp? {
        guard let text = string(name) else { return nil }
        guard let ts = SlackTimestamp(text) else { throw APIFailure.invalid(name, "must be a Slack timestamp") }
        return ts
    }
}
