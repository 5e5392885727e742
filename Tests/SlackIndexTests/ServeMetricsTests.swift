import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Synchronization
import Testing

@testable import SlackIndex
@testable import SlackIndexServer
@testable import SlackIndexTestSupport

/// `serve --metrics` (`GET /metrics`) and `serve`'s request log, through the router (no port).
@Suite struct ServeMetricsTests {
    /// The sample archive served with `metrics` and a rate limit of `requests` per hour (a slow machine cannot
    /// refill the bucket during a test), logging into `lines` at `info`.
    final class Fixture: Sendable {
        let archive: Archive
        let api: SlackAPI
        let token: String
        /// The log lines written.
        let lines = Mutex<[String]>([])

        init(metrics: ServeMetrics?, requests: Int = 1_000) throws {
            archive = try TestSupport.sampleArchive()
            var configuration = SlackAPIConfiguration(rateLimit: RateLimit(requests: requests, interval: .seconds(3600)))
            configuration.metrics = metrics
            api = SlackAPI(archive: archive, configuration: configuration)
            token = try archive.createToken(userID: APIFixture.adminUser, isAdmin: true).token
        }

        /// Runs `body` against the router, with a logger writing into `lines` in `format`.
        func test<T: Sendable>(
            format: ServeLogHandler.Format = .logfmt, ui: WebUI = WebUI(),
            _ body: @Sendable (any TestClientProtocol) async throws -> T
        ) async throws -> T {
            let logger = ServeLogHandler.logger(level: .info, format: format) { [self] line in
                self.lines.withLock { $0.append(line) }
            }
            let app = Application(router: SlackAPIServer.buildRouter(api: api, ui: ui), logger: logger)
            return try await app.test(.router, body)
        }
    }

    /// `GET path` with a bearer token: status and body.
    static func get(_ client: any TestClientProtocol, _ path: String, token: String?) async throws
        -> (status: Int, body: String, headers: HTTPFields)
    {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        return try await client.execute(uri: path, method: .get, headers: headers) { response in
            (response.status.code, String(buffer: response.body), response.headers)
        }
    }

    /// The value of the sample line `series` (a name with its labels, exactly as written), nil when absent.
    static func value(_ text: String, _ series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    @Test func metricsAnswer404WithoutTheFlag() async throws {
        let f = try Fixture(metrics: nil)
        let status = try await f.test { client in try await Self.get(client, "/metrics", token: nil).status }
        #expect(status == 404)
    }

    @Test func metricsCountRequestsSearchesAndRateLimitsByMethodAndStatus() async throws {
        let f = try Fixture(metrics: ServeMetrics(), requests: 4)
        let channel = try APIFixture.conversationID(folder: "general")
        let (statuses, scrape) = try await f.test { client in
            var statuses: [Int] = []
            for path in [
                "/api/search.messages?query=exception", "/api/conversations.history?channel=\(channel)&limit=3",
                "/api/auth.test", "/api/no.such.method", "/api/auth.test",
            ] {
                statuses.append(try await Self.get(client, path, token: f.token).status)
            }
            statuses.append(try await Self.get(client, "/healthz", token: nil).status)
            return (statuses, try await Self.get(client, "/metrics", token: nil))
        }
        #expect(statuses == [200, 200, 200, 200, 429, 200])
        #expect(scrape.status == 200)
        #expect(scrape.headers[.contentType] == "text/plain; version=0.0.4; charset=utf-8")
        let text = scrape.body
        for (series, expected) in [
            (#"slackindex_requests_total{method="search.messages",status="200"}"#, 1.0),
            (#"slackindex_requests_total{method="conversations.history",status="200"}"#, 1),
            (#"slackindex_requests_total{method="auth.test",status="200"}"#, 1),
            (#"slackindex_requests_total{method="auth.test",status="429"}"#, 1),
            // A method not served is counted under one name, whatever the client sent.
            (#"slackindex_requests_total{method="unknown",status="200"}"#, 1),
            (#"slackindex_requests_total{method="healthz",status="200"}"#, 1),
            (#"slackindex_ratelimited_total{limit="token"}"#, 1),
            ("slackindex_searches_total", 1),
            ("slackindex_search_wait_seconds_count", 1),
            ("slackindex_searches_waiting", 0),
            (#"slackindex_request_duration_seconds_count{method="search.messages"}"#, 1),
            (#"slackindex_request_duration_seconds_bucket{method="search.messages",le="+Inf"}"#, 1),
            ("slackindex_archive_up", 1),
            ("slackindex_archive_messages", Double(try f.archive.stats().messages)),
            ("slackindex_sync_runs_open", 0),
            ("slackindex_sync_threads_pending", 0),
        ] {
            #expect(Self.value(text, series) == expected, "\(series) in:\n\(text)")
        }
        // Histogram buckets from 1 ms to 5 s.
        for le in ["0.001", "0.0025", "0.1", "1.0", "5.0"] {
            #expect(
                Self.value(text, #"slackindex_request_duration_seconds_bucket{method="conversations.history",le="\#(le)"}"#)
                    != nil, "bucket \(le) in:\n\(text)")
        }
        #expect((Self.value(text, "slackindex_db_connections_max") ?? 0) >= 2)
        #expect(!text.contains(f.token) && !text.contains("exception"), "no token, no query text")
    }

    /// Each server counts into its own registry: a second server in the same process starts from nothing (and
    /// nothing is bootstrapped twice).
    @Test func twoServersKeepTheirOwnCounts() async throws {
        let first = try Fixture(metrics: ServeMetrics())
        let second = try Fixture(metrics: ServeMetrics())
        _ = try await first.test { client in try await Self.get(client, "/api/auth.test", token: first.token) }
        let text = try await second.test { client in try await Self.get(client, "/metrics", token: nil).body }
        #expect(Self.value(text, #"slackindex_requests_total{method="auth.test",status="200"}"#) == nil, "\(text)")
        #expect(Self.value(text, "slackindex_archive_up") == 1)
    }

    /// One log line per request with the method, status and duration: never the token (header, `token=` or
    /// cookie), the query's words or the path.
    @Test(arguments: [ServeLogHandler.Format.logfmt, .json])
    func requestLogsHoldNoTokenAndNoQueryText(format: ServeLogHandler.Format) async throws {
        let f = try Fixture(metrics: nil)
        let secret = "zebracrossing"
        try await f.test(format: format) { client in
            _ = try await Self.get(client, "/api/search.messages?query=\(secret)%20exception", token: f.token)
            _ = try await Self.get(client, "/api/search.messages?query=\(secret)&token=\(f.token)", token: nil)
            _ = try await client.execute(
                uri: "/api/conversations.list", method: .post,
                headers: [.contentType: "application/x-www-form-urlencoded", .cookie: "slackindex_session=\(secret)"],
                body: ByteBuffer(string: "token=\(f.token)&cursor=\(secret)")
            ) { _ in }
        }
        let lines = f.lines.withLock { $0 }
        #expect(lines.count == 3, "\(lines)")
        for line in lines {
            #expect(!line.contains(f.token) && !line.contains(secret) && !line.contains("xoxp"), "\(line)")
            #expect(!line.contains("Bearer") && !line.contains("query") && !line.contains("/api/"), "\(line)")
        }
        switch format {
        case .logfmt:
            #expect(lines[0].contains(" level=info msg=request "), "\(lines[0])")
            #expect(lines[0].contains(" method=search.messages ") && lines[0].contains(" status=200"), "\(lines[0])")
            #expect(lines[2].contains(" method=conversations.list ") && lines[2].contains(" http_method=POST "))
            #expect(lines.allSatisfy { $0.contains(" request_id=") && $0.contains(" duration_ms=") })
        case .json:
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: String], "\(lines[0])")
            #expect(object["method"] == "search.messages" && object["status"] == "200" && object["level"] == "info")
            #expect(object["request_id"] != nil && object["duration_ms"].flatMap(Double.init) != nil)
        }
    }

    /// The web UI's sign-in limits are counted apart: per client address and per token.
    @Test func signInLimitsAreCountedByLimit() async throws {
        let f = try Fixture(metrics: ServeMetrics())
        let other = try f.archive.createToken(userID: APIFixture.adminUser).token
        var limits = WebUI.Limits()
        limits.signInsPerAddress = RateLimit(requests: 2, interval: .seconds(3600))
        limits.signInsPerToken = RateLimit(requests: 1, interval: .seconds(3600))
        let (statuses, text) = try await f.test(ui: WebUI(limits: limits)) { client in
            var statuses: [Int] = []
            // The first signs in; the same token again is past its limit; another token, past the address's.
            for token in [f.token, f.token, other] {
                statuses.append(
                    try await client.execute(
                        uri: "/ui/signin", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                        body: ByteBuffer(string: "token=\(token)")
                    ) { $0.status.code })
            }
            return (statuses, try await Self.get(client, "/metrics", token: nil).body)
        }
        #expect(statuses == [303, 429, 429])
        #expect(Self.value(text, #"slackindex_ratelimited_total{limit="signin_token"}"#) == 1, "\(text)")
        #expect(Self.value(text, #"slackindex_ratelimited_total{limit="signin_address"}"#) == 1, "\(text)")
        #expect(Self.value(text, #"slackindex_requests_total{method="ui.signin",status="429"}"#) == 2)
    }

    @Test func logfmtQuotesWhatWouldBreakALine() {
        #expect(ServeLogHandler.logfmtValue("search.messages") == "search.messages")
        #expect(ServeLogHandler.logfmtValue("") == #""""#)
        #expect(ServeLogHandler.logfmtValue("a b=\"c\"\nd\\") == #""a b=\"c\"\nd\\""#)
        #expect(ServeLogHandler.line([("k", "v"), ("e", "x y")], format: .logfmt) == #"k=v e="x y""#)
    }

    @Test(arguments: [
        ("/api/search.messages", "search.messages"), ("/api/xoxp-123", "unknown"), ("/files/F1", "files"),
        ("/avatars/U1", "avatars"), ("/emoji/party", "emoji"), ("/healthz", "healthz"), ("/metrics", "metrics"),
        ("/", "ui.page"), ("/ui/app.js", "ui.assets"), ("/ui/signin", "ui.signin"), ("/ui/signout", "ui.signout"),
        ("/secret/path", "other"), ("/api/a/b", "other"),
    ])
    func routesAreNamedFromAClosedSet(path: String, route: String) {
        #expect(RequestObserver.route(of: path) == route)
    }
}
