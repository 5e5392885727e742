import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
@testable import SlackIndexStore
import Testing
@testable import SlackIndexTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// `slackindex token` and `slackindex serve` as users run them: the built binary, a temp archive of sample-data.
@Suite struct ServeCLITests {
    /// A running `slackindex serve` and the URL it printed.
    struct Server {
        let process: Process
        let url: String
        let stderr: Pipe

        /// Sends SIGINT and returns the exit status.
        func stop() -> Int32 {
            process.interrupt()
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    /// Imports sample-data into `db`, or into a new SQLite file; returns the archive's location.
    static func importSample(into db: String? = nil) throws -> String {
        let db = db ?? TestSupport.temporaryDirectory().appendingPathComponent("serve.sqlite").path
        let imported = try CLITests.run(["--db", db, "import", TestSupport.sampleFolder, "--quiet"])
        #expect(imported.status == 0, "\(imported.stderr)")
        return db
    }

    /// Starts `slackindex serve --listen 127.0.0.1:0` and reads the one line it prints once listening.
    static func serve(db: String, extra: [String] = []) throws -> Server {
        let (process, out, err) = try CLITests.launch(
            executable: try #require(CLITests.binary, "build the slackindex executable first"),
            ["--db", db, "serve", "--listen", "127.0.0.1:0"] + extra)
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }  // the process ended
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).split(separator: "\n").first.map(String.init)?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        let prefix = "Serving \(db) at "
        guard text.hasPrefix(prefix), text.hasSuffix("/api/") else {
            if process.isRunning { process.terminate() }
            let errors = String(decoding: err.fileHandleForReading.availableData, as: UTF8.self)
            Issue.record("serve printed '\(text)'; stderr: \(errors)")
            throw CancellationError()
        }
        return Server(process: process, url: String(text.dropFirst(prefix.count)), stderr: err)
    }

    @Test func tokenCreatePrintsOnlyTheTokenAndRefusesUnknownUsers() throws {
        let db = try Self.importSample()
        let created = try CLITests.run(["--db", db, "token", "create", "--user", "U0NYQG8S2T7", "--label", "ci"])
        #expect(created.status == 0 && created.stderr.isEmpty)
        let token = created.stdout.trimmingCharacters(in: .newlines)
        #expect(created.stdout == token + "\n")
        #expect(token.hasPrefix("xoxp-slackindex-") && token.count >= 48 && !token.contains(" "))

        let admin = try CLITests.run(["token", "create", "--db", db, "--user", "U0T28J57VPZ", "--admin"])
        #expect(admin.status == 0)
        let list = try CLITests.run(["--db", db, "token", "list", "--json"])
        let lines = list.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(try CLITests.json(lines[0])["user_id"] as? String == "U0NYQG8S2T7")
        #expect(try CLITests.json(lines[0])["label"] as? String == "ci")
        #expect(try CLITests.json(lines[1])["is_admin"] as? Bool == true)
        #expect(!list.stdout.contains(token))

        let unknown = try CLITests.run(["--db", db, "token", "create", "--user", "U_NOBODY"])
        #expect(unknown.status == 1 && unknown.stdout.isEmpty)
        #expect(unknown.stderr.contains("No user called 'U_NOBODY' in the archive"), "\(unknown.stderr)")  // ids or handles
        #expect(unknown.stderr.contains("slackindex users"))

        let users = try CLITests.run(["--db", db, "token", "users"])
        #expect(users.stdout.split(separator: "\n").contains { $0.hasPrefix("U0NYQG8S2T7  @") })
        // `slackindex users` lists the same, filters by handle or name, and says when nobody matches.
        #expect(try CLITests.run(["--db", db, "users"]).stdout == users.stdout)
        let handle = try #require(users.stdout.split(separator: "\n").first { $0.hasPrefix("U0NYQG8S2T7  @") })
            .split(separator: " ")[1].dropFirst()
        let one = try CLITests.run(["--db", db, "users", String(handle.uppercased()), "--json"])
        #expect(one.status == 0)
        let found = try one.stdout.split(separator: "\n").map(CLITests.json)
        #expect(found.contains { $0["id"] as? String == "U0NYQG8S2T7" && $0["handle"] as? String == String(handle) })
        let nobody = try CLITests.run(["--db", db, "users", "zzz-nobody"])
        #expect(nobody.status == 1 && nobody.stderr.contains("No users match 'zzz-nobody'."))

        let revoked = try CLITests.run(["--db", db, "token", "revoke", "1"])
        #expect(revoked.status == 0)
        #expect(try CLITests.run(["--db", db, "token", "list"]).stdout.split(separator: "\n").count == 1)
        #expect(try CLITests.run(["--db", db, "token", "revoke", "1"]).status == 1)
    }

    @Test(arguments: ["token", "serve"])
    func helpHasAnExample(command: String) throws {
        let help = try CLITests.run([command, "--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("Examples:") && help.stdout.contains("slackindex \(command)"))
    }

    @Test func serveValidatesItsFlags() throws {
        let bad = try CLITests.run(["serve", "--rate-limit", "lots"])
        #expect(bad.status == 64 && bad.stderr.contains("--rate-limit 'lots' is not N/SECONDS"))
        let listen = try CLITests.run(["serve", "--listen", "127.0.0.1"])
        #expect(listen.status == 64 && listen.stderr.contains("is not HOST:PORT"))
    }

    @Test func servePrintsItsURLAnswersAndStopsOnSIGINT() async throws {
        let db = try Self.importSample()
        let token = try await CLITests.run(["--db", db, "token", "create", "--user", "U0NYQG8S2T7"]).stdout
            .trimmingCharacters(in: .newlines)
        // One token back every 20 minutes: a slow machine cannot refill the bucket during the test.
        let server = try Self.serve(db: db, extra: ["--rate-limit", "3/3600"])
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        var statuses: [UInt] = []
        var retryAfter: Int?
        for _ in 0..<4 {
            var request = HTTPClientRequest(url: server.url + "auth.test")
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            guard let response = try? await http.execute(request, timeout: .seconds(10)) else { break }
            let data = try await response.body.collect(upTo: 1 << 20)
            statuses.append(response.status.code)
            if response.status.code == 429 { retryAfter = response.headers.first(name: "Retry-After").flatMap { Int($0) } }
            if response.status.code == 200 {
                let body = try JSONSerialization.jsonObject(with: Data(String(buffer: data).utf8)) as? [String: Any]
                #expect(body?["user_id"] as? String == "U0NYQG8S2T7")
            }
        }
        try await http.shutdown()
        #expect(statuses == [200, 200, 200, 429])
        #expect((1...1200).contains(retryAfter ?? 0), "one request every 1200 s: \(retryAfter ?? 0)")
        #expect(server.stop() == 0)
        let stderr = String(decoding: server.stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(!stderr.contains("warning"), "loopback needs no warning: \(stderr)")
    }
}

/// Slack's own Python SDK (`slack_sdk`) against `slackindex serve`: runs `scripts/slack_sdk_client.py`.
///
/// Runs when `python3 -c 'import slack_sdk'` works; with `SLACKINDEX_REQUIRE_SLACK_SDK=1` (CI) it always runs and
/// fails when the SDK is missing.
@Suite struct SlackSDKClientTests {
    static let required = ProcessInfo.processInfo.environment["SLACKINDEX_REQUIRE_SLACK_SDK"] == "1"

    static func python(_ arguments: [String]) throws -> CLITests.Run {
        try CLITests.run(executable: URL(fileURLWithPath: "/usr/bin/env"), ["python3"] + arguments)
    }

    static let available: Bool = (try? python(["-c", "import slack_sdk"]).status) == 0

    @Test(.enabled(if: required || available, "needs python3 with slack_sdk (pip install slack_sdk)"))
    func slackSDKPagesSearchesAndReadsThreads() async throws {
        try Self.check(db: try ServeCLITests.importSample())
    }

    /// The same client and answers with the archive in PostgreSQL (issue 50).
    @Test(.enabled(if: required || available, "needs python3 with slack_sdk (pip install slack_sdk)"))
    func slackSDKOnPostgreSQL() async throws {
        guard PostgresTestServer.isAvailable else { return }
        let server = try #require(PostgresTestServer.shared, "\(PostgresTestServer.unavailableReason)")
        try Self.check(db: try ServeCLITests.importSample(into: try server.database()))
    }

    /// Runs the SDK's script against `serve` on the sample archive at `db` and checks what it read.
    static func check(db: String) throws {
        let check = try Self.python(["-c", "import slack_sdk"])
        try #require(check.status == 0, "SLACKINDEX_REQUIRE_SLACK_SDK=1 but slack_sdk is missing: \(check.stderr)")

        let user = APIFixture.dmMembers[0]
        let created = try CLITests.run(["--db", db, "token", "create", "--user", user])
        let token = created.stdout.trimmingCharacters(in: .newlines)
        let channel = try APIFixture.conversationID(folder: "general")
        let thread = "1716185438.024538"
        let query = "exception"
        let server = try ServeCLITests.serve(db: db)
        let script = TestSupport.root.appendingPathComponent("scripts/slack_sdk_client.py").path
        let run = try Self.python([script, server.url, token, channel, thread, query])
        #expect(server.stop() == 0)
        #expect(run.status == 0, "\(run.stderr)")
        let out = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])

        #expect((out["auth"] as? [String: Any])?["user_id"] as? String == user)

        let expectedHistory = try APIFixture.exportHistory(folder: "general")
        let history = try #require(out["history"] as? [String: Any])
        #expect(history["ts"] as? [String] == expectedHistory)
        #expect(history["pages"] as? Int == (expectedHistory.count + 39) / 40)
        #expect(out["history_bounded"] as? [String] == Array(expectedHistory[5...9]))

        let expectedReplies = try APIFixture.exportMessages(folder: "general").filter {
            $0["thread_ts"] as? String == thread && $0["ts"] as? String != thread
        }.compactMap { $0["ts"] as? String }.sorted { SampleOracle.micros($0) < SampleOracle.micros($1) }
        let replies = try #require(out["replies"] as? [String: Any])
        #expect(replies["ts"] as? [String] == expectedReplies)
        #expect(replies["pages"] as? Int == (expectedReplies.count + 2) / 3)
        #expect(replies["parent_first_on_every_page"] as? Bool == true)

        let exportedUsers = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: TestSupport.sampleFolder + "/users.json"))) as? [[String: Any]]
        let users = try #require(out["users"] as? [String: Any])
        let ids = try #require(users["ids"] as? [String])
        let exportedIDs = Set(exportedUsers?.compactMap { $0["id"] as? String } ?? [])
        #expect(exportedIDs.isSubset(of: Set(ids)) && !exportedIDs.isEmpty)
        #expect(ids == ids.sorted() && Set(ids).count == ids.count)
        #expect(users["pages"] as? Int == (ids.count + 9) / 10)

        let oracle = try SampleOracle(folder: TestSupport.sampleFolder)
        let visible = Set(oracle.conversations.filter { $0.kind == "channel" || $0.members.contains(user) }.map(\.id))
        let expected = oracle.messages.filter { $0.tokenSet.contains(query) && visible.contains($0.conversationID) }
            .sorted { $0.micros > $1.micros }
        let search = try #require(out["search"] as? [String: Any])
        #expect(search["total"] as? Int == expected.count)
        let matches = try #require(search["matches"] as? [[String]])
        #expect(matches.map { $0.joined(separator: " ") } == expected.prefix(100).map(\.key))
        #expect(matches.contains { $0.first == APIFixture.dm }, "the member's DM is searched")
        #expect(search["highlighted"] as? Int == matches.count)
        #expect(out["missing_channel_error"] as? String == "channel_not_found")
    }
}

/// `GET /healthz` of a running `serve`: status and body.
func healthz(_ server: ServeCLITests.Server) async throws -> (status: UInt, body: String) {
    try await fetch(server, "healthz")
}

/// `GET /PATH` of a running `serve` (outside `/api/`, no token): status and body.
func fetch(_ server: ServeCLITests.Server, _ path: String) async throws -> (status: UInt, body: String) {
    let http = HTTPClient(eventLoopGroupProvider: .singleton)
    defer { _ = http.shutdown() }
    let base = String(server.url.dropLast("api/".count))
    let response = try await http.execute(HTTPClientRequest(url: base + path), timeout: .seconds(30))
    return (response.status.code, String(buffer: try await response.body.collect(upTo: 1 << 20)))
}

/// The value of the sample `series` (name and labels as written) in a `/metrics` text, nil when absent.
func sample(_ text: String, _ series: String) -> Double? {
    text.split(separator: "\n").first { $0.hasPrefix(series + " ") }.flatMap { Double($0.dropFirst(series.count + 1)) }
}

/// `serve --metrics --log-level info` as users run it: `/metrics` counts the requests made, stderr has a line per
/// request without the token or the query's words; without `--metrics` (`healthzSaysTheArchiveAnswers`) 404.
@Test func metricsAndLogsOfTheBinary() async throws {
    let db = try ServeCLITests.importSample()
    let token = try await CLITests.run(["--db", db, "token", "create", "--user", "U0NYQG8S2T7"]).stdout
        .trimmingCharacters(in: .newlines)
    let server = try ServeCLITests.serve(
        db: db, extra: ["--metrics", "--log-level", "info", "--rate-limit", "2/3600"])
    let http = HTTPClient(eventLoopGroupProvider: .singleton)
    var statuses: [UInt] = []
    for method in ["search.messages?query=zebracrossing", "auth.test", "auth.test"] {
        var request = HTTPClientRequest(url: server.url + method)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await http.execute(request, timeout: .seconds(20))
        _ = try await response.body.collect(upTo: 1 << 20)
        statuses.append(response.status.code)
    }
    try await http.shutdown()
    let metrics = try await fetch(server, "metrics")
    #expect(server.stop() == 0)
    let stderr = String(decoding: server.stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(statuses == [200, 200, 429])
    #expect(metrics.status == 200)
    #expect(sample(metrics.body, #"slackindex_requests_total{method="search.messages",status="200"}"#) == 1, "\(metrics.body)")
    #expect(sample(metrics.body, #"slackindex_requests_total{method="auth.test",status="429"}"#) == 1)
    #expect(sample(metrics.body, #"slackindex_ratelimited_total{limit="token"}"#) == 1)
    #expect(sample(metrics.body, "slackindex_searches_total") == 1)
    let lines = stderr.split(separator: "\n")
    #expect(lines.contains { $0.contains(" level=notice msg=serving ") && $0.contains(" metrics=true ") }, "\(stderr)")
    #expect(lines.filter { $0.contains(" msg=request ") }.count == 4, "three API calls and /metrics: \(stderr)")
    #expect(lines.contains { $0.contains(" method=auth.test ") && $0.contains(" status=429") }, "\(stderr)")
    #expect(!stderr.contains(token) && !stderr.contains("zebracrossing"), "\(stderr)")
    #expect(lines.contains { $0.contains(" level=notice msg=stopped") }, "\(stderr)")
}

/// `/healthz` on SQLite: the archive answers with its newest migration, no token needed.
@Test func healthzSaysTheArchiveAnswers() async throws {
    let db = try ServeCLITests.importSample()
    let server = try ServeCLITests.serve(db: db)
    let (status, body) = try await healthz(server)
    let metrics = try await fetch(server, "metrics")
    #expect(server.stop() == 0)
    #expect(metrics.status == 404, "/metrics only with --metrics")
    // The default level (notice): the start and stop, no line per request.
    let stderr = String(decoding: server.stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(stderr.contains(" level=notice msg=serving ") && !stderr.contains("msg=request"), "\(stderr)")
    #expect(status == 200 && body.contains(#""ok":true"#) && body.contains(#""backend":"sqlite""#), "\(body)")
    let newest = try #require(Migrations.versions.last?.name)
    #expect(body.contains(#""schema":"\#(newest)""#), "the newest migration: \(body)")
    #expect(!body.contains(db), "no location")
}

/// `serve` on PostgreSQL when its connections are ended under it (the server restarted, an administrator ended
/// them): the next requests are answered, on new connections, with the same messages.
@Suite(.enabled(if: PostgresTestServer.isAvailable, "needs a PostgreSQL 15 server (Debian's postgresql-15)"))
struct PostgresServeTests {
    @Test func serveAnswersAgainAfterItsConnectionsAreEnded() async throws {
        let postgres = try #require(PostgresTestServer.shared, "\(PostgresTestServer.unavailableReason)")
        let db = try ServeCLITests.importSample(into: try postgres.database())
        let token = try await CLITests.run(["--db", db, "token", "create", "--user", APIFixture.dmMembers[0]]).stdout
            .trimmingCharacters(in: .newlines)
        let server = try ServeCLITests.serve(db: db, extra: ["--metrics"])
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        let general = try APIFixture.conversationID(folder: "general")
        func answers() async throws -> [String] {
            var out: [String] = []
            for method in ["conversations.history?channel=\(general)&limit=7", "search.messages?query=exception&sort=timestamp"] {
                var request = HTTPClientRequest(url: server.url + method)
                request.headers.add(name: "Authorization", value: "Bearer \(token)")
                let response = try await http.execute(request, timeout: .seconds(20))
                let body = String(buffer: try await response.body.collect(upTo: 4 << 20))
                // Status, ok, and every ts in the answer (search hits carry a random `iid` per answer).
                let stamps = body.components(separatedBy: "\"ts\":\"").dropFirst().map { $0.prefix(17) }
                out.append("\(response.status.code) \(body.contains("\"ok\":true")) \(stamps.joined(separator: ","))")
            }
            return out
        }
        do {
            let before = try await answers()
            #expect(before.allSatisfy { $0.hasPrefix("200 true 1") }, "\(before)")
            // The pool's gauges, read from the link at the scrape: it has opened one connection at least.
            let metrics = try await fetch(server, "metrics").body
            #expect(sample(metrics, "slackindex_db_connections_max") == 8, "\(metrics)")
            #expect((sample(metrics, "slackindex_db_connections_open") ?? 0) >= 1, "\(metrics)")
            #expect(sample(metrics, "slackindex_db_connections_in_use") != nil, "\(metrics)")
            #expect(sample(metrics, "slackindex_archive_up") == 1 && sample(metrics, "slackindex_archive_messages") != nil)
            // Every other connection to this database ended, as a server restart would.
            let admin = try Archive(path: db)
            let link = try #require(admin.store as? PostgresArchive).link
            let ended = try link.query(
                """
                SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) AS ended FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()
                """
            ).first?.int("ended")
            #expect((ended ?? 0) >= 1, "serve held a connection")
            let after = try await answers()
            #expect(after == before)
        } catch {
            Issue.record("\(error)")
        }
        let healthy = try await healthz(server)
        #expect(healthy.status == 200 && healthy.body.contains(#""backend":"postgresql""#), "\(healthy.body)")
        #expect(healthy.body.contains(#""schema":"pg"#), "\(healthy.body)")
        // The database gone (dropped with its connections ended): 503, and the server keeps running.
        let name = String(db.split(separator: "/").last ?? "")
        let admin = try Archive(path: try postgres.database())
        try #require(admin.store as? PostgresArchive).link.execute("DROP DATABASE \(name) WITH (FORCE)")
        let gone = try await healthz(server)
        #expect(gone.status == 503 && gone.body == #"{"ok":false,"error":"archive_unreachable"}"#, "\(gone.body)")
        try await http.shutdown()
        #expect(server.stop() == 0)
    }
}
