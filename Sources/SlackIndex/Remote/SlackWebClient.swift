import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// A client for a Slack-compatible Web API (Slack itself, or another archive's `slackindex serve`).
///
/// Calls are `GET {base}{method}?params` with the token in an `Authorization: Bearer` header (never in the URL,
/// never in an error or log line). HTTP 429 is retried after exactly the `Retry-After` seconds it names (when the
/// policy allows waiting that long); HTTP 5xx, dropped connections, timeouts and unparseable bodies are retried with
/// exponential backoff and jitter; `{"ok": false}` answers are thrown as ``RemoteError/api(method:error:)``.
/// Redirects are not followed, so the token is only ever sent to the configured host.
public final class SlackWebClient: Sendable {
    /// How persistent a client is.
    public struct Policy: Sendable {
        /// Attempts per call for 5xx / network / garbage failures (429 waits do not count).
        public var maxAttempts = 6
        /// First backoff; doubles each retry, with ±25% jitter.
        public var backoff: Duration = .milliseconds(500)
        /// Longest backoff.
        public var maxBackoff: Duration = .seconds(30)
        /// Longest `Retry-After` to wait for; longer ones throw ``RemoteError/rateLimited(method:retryAfter:)``.
        public var maxRetryAfter = 3_600
        /// Per-request time limit.
        public var requestTimeout: Duration = .seconds(60)
        /// Whether a connection that cannot be made (refused, a name that does not resolve) is tried again until
        /// the request's time limit; when false it fails at once as ``RemoteError/unreachable(url:reason:)``.
        public var retriesConnections = true

        public init() {}

        /// For a caller that gives up at `deadline` (a merged search): a few quick retries, a `Retry-After` waited
        /// only if it fits, no request outliving the deadline.
        public static func interactive(deadline: Duration) -> Policy {
            var policy = Policy()
            policy.maxAttempts = 3
            policy.backoff = .milliseconds(100)
            policy.maxBackoff = .milliseconds(400)
            policy.maxRetryAfter = Int(deadline.seconds)
            policy.requestTimeout = deadline
            // A refused or unknown remote is told at once, not after the deadline (issue 55).
            policy.retriesConnections = false
            return policy
        }
    }

    /// What happened on the wire, for progress lines and notes.
    public struct Counters: Sendable, Equatable {
        /// HTTP requests sent, including retries.
        public var requests = 0
        /// Requests answered 429.
        public var rateLimited = 0
        /// Requests that failed with 5xx, a network error or an unreadable body.
        public var failures = 0
        /// Seconds spent waiting (Retry-After and backoff).
        public var waited: Double = 0
        /// Response bytes received.
        public var bytes: Int64 = 0
    }

    /// The base URL, ending in `/` (e.g. `https://slack.com/api/`).
    public let baseURL: String
    // Internal for `download` (SlackWebClient+Download.swift), which shares the retry rules.
    let token: String
    let policy: Policy
    let http: HTTPClient
    let counters = Mutex(Counters())

    /// Creates a client; call ``shutdown()`` when done.
    ///
    /// - Throws: ``RemoteError/badURL(_:)`` when `baseURL` is not http(s).
    public init(baseURL: String, token: String, policy: Policy = Policy()) throws {
        guard let url = URL(string: baseURL), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            url.host != nil
        else { throw RemoteError.badURL(baseURL) }
        let host = url.host?.lowercased() ?? ""
        let loopback = host == "localhost" || host == "::1" || host.hasPrefix("127.")
        // Tokens made by `slackindex token create` open one archive only, so plain http on a LAN is tolerable.
        if scheme == "http", !loopback, !token.hasPrefix(Archive.tokenPrefix) {
            throw RemoteError.insecure(baseURL)
        }
        self.baseURL = baseURL.hasSuffix("/") ? baseURL : baseURL + "/"
        self.token = token
        self.policy = policy
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(60))
        configuration.connectionPool.retryConnectionEstablishment = policy.retriesConnections
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Slack's own Web API.
    public static let slackAPI = "https://slack.com/api/"


    /// Releases the connection pool.
    public func shutdown() async {
        try? await http.shutdown()
    }

    /// The counters so far.
    public var stats: Counters { counters.withLock { $0 } }

    /// Calls `method` and returns the body of its `{"ok": true, …}` answer.
    ///
    /// - Throws: ``RemoteError`` (see the type's overview); `CancellationError` when the task is cancelled, also
    ///   while waiting.
    public func call(_ method: String, _ parameters: [(String, String)] = []) async throws -> [UInt8] {
        var request = HTTPClientRequest(url: baseURL + method + Self.query(parameters))
        request.method = .GET
        request.headers.add(name: "Authorization", value: "Bearer " + token)
        request.headers.add(name: "Accept", value: "application/json")
        var failures = 0
        var lastFailure = ""
        while true {
            try Task.checkCancellation()
            counters.withLock { $0.requests += 1 }
            let outcome: Outcome
            do {
                outcome = try await send(request)
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                if !policy.retriesConnections, let reason = Self.connectionFailure(error) {
                    throw RemoteError.unreachable(url: baseURL, reason: reason)
                }
                outcome = .retry(Self.describe(error))
            }
            switch outcome {
            case .body(let received):
                // Minified first: the member lookups below read compact JSON, and a proxy or another server may
                // answer pretty-printed (`"ok": true`).
                let slicer = received.withUnsafeBytes { JSONSlicer($0) }
                let body = slicer.bytes
                let whole = 0..<body.count
                guard slicer.isComplete, !slicer.isArray,
                    let ok = JSONSlicer.valueRange(ofKey: "ok", in: body, object: whole)
                else {
                    failures += 1
                    lastFailure = "the answer was not a Slack JSON object"
                    counters.withLock { $0.failures += 1 }
                    break
                }
                if body[ok].elementsEqual("true".utf8) { return body }
                let error =
                    JSONSlicer.valueRange(ofKey: "error", in: body, object: whole).map {
                        String(decoding: body[$0], as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                    } ?? "unknown_error"
                throw RemoteError.api(method: method, error: error)
            case .rateLimited(let seconds):
                counters.withLock { $0.rateLimited += 1 }
                guard seconds <= policy.maxRetryAfter else {
                    throw RemoteError.rateLimited(method: method, retryAfter: seconds)
                }
                try await wait(.seconds(seconds))
                continue
            case .fatal(let status):
                throw RemoteError.http(method: method, status: status)
            case .retry(let reason):
                failures += 1
                lastFailure = reason
                counters.withLock { $0.failures += 1 }
            }
            guard failures < policy.maxAttempts else {
                throw RemoteError.unavailable(method: method, attempts: failures, last: lastFailure)
            }
            try await wait(backoff(after: failures))
        }
    }

    private enum Outcome {
        case body([UInt8])
        case rateLimited(Int)
        case retry(String)
        case fatal(Int)
    }

    private func send(_ request: HTTPClientRequest) async throws -> Outcome {
        let timeout = TimeAmount.nanoseconds(Int64(policy.requestTimeout.seconds * 1e9))
        let response = try await http.execute(request, timeout: timeout)
        let status = Int(response.status.code)
        if status == 429 { return .rateLimited(Self.retryAfter(response.headers)) }
        var buffer = try await response.body.collect(upTo: 256 << 20)
        counters.withLock { $0.bytes += Int64(buffer.readableBytes) }
        if status >= 500 { return .retry("HTTP \(status)") }
        if status != 200 { return .fatal(status) }
        return .body(buffer.readBytes(length: buffer.readableBytes) ?? [])
    }

    /// The seconds a 429 answer asks to wait: Slack sends whole seconds; a missing or odd header means "a little
    /// while".
    static func retryAfter(_ headers: HTTPHeaders) -> Int {
        let header = headers.first(name: "Retry-After") ?? ""
        return Int(header.trimmingCharacters(in: .whitespaces)).map { max(0, $0) } ?? 1
    }

    func backoff(after failures: Int) -> Duration {
        let base = policy.backoff * (1 << min(failures - 1, 16))
        let capped = min(base, policy.maxBackoff)
        return capped * Double.random(in: 0.75...1.25)
    }

    func wait(_ duration: Duration) async throws {
        counters.withLock { $0.waited += duration.seconds }
        try await Task.sleep(for: duration)
    }

    /// `?a=b&c=d`, percent-encoded as a query component.
    static func query(_ parameters: [(String, String)]) -> String {
        guard !parameters.isEmpty else { return "" }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        func encode(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
        }
        return "?" + parameters.map { encode($0.0) + "=" + encode($0.1) }.joined(separator: "&")
    }

    /// Why no connection could be made, when `error` says that one could not (NIO's connect errors, as AsyncHTTPClient
    /// passes them on without retrying): nil for any other failure.
    static func connectionFailure(_ error: any Error) -> String? {
        let text = String(reflecting: error)
        if text.contains("connectionRefused") || text.contains("Connection refused") { return "connection refused" }
        if text.contains("UnknownHost") || text.contains("dnsA") || text.contains("NXDOMAIN") || text.contains("resolve") {
            return "its host name does not resolve"
        }
        if text.contains("NIOConnectionError") || text.contains("connectTimeout") { return "no connection" }
        return nil
    }

    /// A short description of a transport error, without URLs or headers.
    static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .remoteConnectionClosed: return "the connection was closed"
            case .readTimeout, .deadlineExceeded: return "timed out"
            case .connectTimeout: return "connect timed out"
            default: return "\(error)"
            }
        }
        let text = "\(error)"
        if text.contains("connectionRefused") || text.contains("Connection refused") { return "connection refused" }
        return String(text.prefix(120))
    }
}
