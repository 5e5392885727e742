import AsyncHTTPClient
import Foundation
import GRDB
import NIOCore
import NIOHTTP1
import SlackIndex
import Testing
@testable import SlackIndexTestSupport

/// Several `serve` processes over one archive (issue 51): a web UI session made through one works on the others,
/// revoking its token ends it on all of them, and with a PostgreSQL hot standby (`--replica`) reads go on through a
/// primary's crash and writes come back once the standby is promoted.
@Suite struct SharedSessionsTests {
    /// A client that does not follow the sign-in's 303 (its `Set-Cookie` is what the tests want).
    static func client() -> HTTPClient {
        HTTPClient(
            eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(redirectConfiguration: .disallow))
    }

    /// Posts `token` to `server`'s `/ui/signin` (as curl would: no browser headers); the status and the session
    /// cookie (`name=value`) it set, if any.
    static func signIn(_ http: HTTPClient, _ server: ServeCLITests.Server, token: String) async throws
        -> (status: UInt, cookie: String?)
    {
        var request = HTTPClientRequest(url: String(server.url.dropLast("api/".count)) + "ui/signin")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: "token=\(token)"))
        let response = try await http.execute(request, timeout: .seconds(30))
        let cookie = response.headers.first(name: "Set-Cookie")?.split(separator: ";").first.map(String.init)
        return (response.status.code, cookie)
    }

    /// `method` through `server` with `cookie`: the HTTP status and the body.
    static func call(_ http: HTTPClient, _ server: ServeCLITests.Server, _ method: String, cookie: String) async throws
        -> (status: UInt, body: String)
    {
        var request = HTTPClientRequest(url: server.url + method)
        request.headers.add(name: "Cookie", value: cookie)
        let response = try await http.execute(request, timeout: .seconds(30))
        return (response.status.code, String(buffer: try await response.body.collect(upTo: 4 << 20)))
    }

    /// Who `cookie` is on `server` (`auth.test`'s user id), or its error.
    static func whoIs(_ http: HTTPClient, _ server: ServeCLITests.Server, cookie: String) async throws -> String {
        let (_, body) = try await call(http, server, "auth.test", cookie: cookie)
        let json = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] ?? [:]
        return (json["user_id"] as? String) ?? "error: \(json["error"] as? String ?? body)"
    }

    /// Waits up to `seconds` for `condition` (a standby replays in milliseconds, a revocation is read at once).
    static func eventually(_ seconds: Double = 10, _ condition: () async throws -> Bool) async throws -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await condition()
    }

    static func token(_ db: String, user: String) throws -> String {
        let made = try CLITests.run(["--db", db, "token", "create", "--user", user])
        #expect(made.status == 0, "\(made.stderr)")
        return made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Two servers over one SQLite archive: a session from one works on the other and survives a restart of the
    /// first; revoking its token ends it on both at once; signing out through one ends it on the other.
    @Test func twoServersOverOneSQLiteArchiveShareSessions() async throws {
        let db = try ServeCLITests.importSample()
        let member = APIFixture.dmMembers[0]
        let (kept, revoked) = (try Self.token(db, user: member), try Self.token(db, user: APIFixture.outsider))
        var first = try ServeCLITests.serve(db: db)
        let second = try ServeCLITests.serve(db: db)
        let http = Self.client()
        do {
            let session = try #require(try await Self.signIn(http, first, token: kept).cookie)
            let doomed = try #require(try await Self.signIn(http, first, token: revoked).cookie)
            #expect(try await Self.whoIs(http, second, cookie: session) == member)
            #expect(try await Self.whoIs(http, second, cookie: doomed) == APIFixture.outsider)
            // The archive keeps only each session's hash.
            let stored = try await Archive(path: db, access: .readOnly).pool.read {
                try String.fetchAll($0, sql: "SELECT id_hash FROM web_session")
            }
            #expect(stored.count == 2 && !stored.contains { session.hasSuffix("=" + $0) || doomed.hasSuffix("=" + $0) })
            #expect(first.stop() == 0)
            first = try ServeCLITests.serve(db: db)
            #expect(try await Self.whoIs(http, first, cookie: session) == member, "a restart signs no one out")
            let id = try #require(try Archive(path: db).tokens().first { $0.userID == APIFixture.outsider }?.id)
            #expect(try await CLITests.run(["--db", db, "token", "revoke", "\(id)"]).status == 0)
            #expect(try await Self.whoIs(http, first, cookie: doomed) == "error: not_authed")
            #expect(try await Self.whoIs(http, second, cookie: doomed) == "error: not_authed")
            var out = HTTPClientRequest(url: String(second.url.dropLast("api/".count)) + "ui/signout")
            out.method = .POST
            out.headers.add(name: "Cookie", value: session)
            #expect(try await http.execute(out, timeout: .seconds(30)).status == .seeOther)
            #expect(try await Self.whoIs(http, first, cookie: session) == "error: not_authed")
        } catch {
            Issue.record("\(error)")
        }
        try await http.shutdown()
        #expect(first.stop() == 0)
        #expect(second.stop() == 0)
    }
}

/// A standby that does not answer (nothing listens at its address): reads go to the primary, with the same
/// answers as a server without a replica, and `/healthz` says the replica does not answer.
@Suite(.enabled(if: PostgresTestServer.isAvailable, "needs a PostgreSQL 15 server (Debian's postgresql-15)"))
struct ReplicaDownTests {
    @Test func readsGoToThePrimaryWhileTheStandbyIsDown() async throws {
        let postgres = try #require(PostgresTestServer.shared, "\(PostgresTestServer.unavailableReason)")
        let db = try ServeCLITests.importSample(into: try postgres.database())
        let token = try SharedSessionsTests.token(db, user: APIFixture.dmMembers[0])
        let nowhere = "postgresql://postgres@127.0.0.1:\(try PostgresTestServer.freePort())/archive"
        let plain = try ServeCLITests.serve(db: db)
        let replicated = try ServeCLITests.serve(db: db, extra: ["--replica", nowhere])
        let http = SharedSessionsTests.client()
        let general = try APIFixture.conversationID(folder: "general")
        do {
            let session = try #require(try await SharedSessionsTests.signIn(http, replicated, token: token).cookie)
            for method in ["conversations.history?channel=\(general)&limit=7", "search.messages?query=exception"] {
                let (status, body) = try await SharedSessionsTests.call(http, replicated, method, cookie: session)
                let (_, expected) = try await SharedSessionsTests.call(http, plain, method, cookie: session)
                let stamps = { (text: String) in text.components(separatedBy: "\"ts\":\"").dropFirst().map { $0.prefix(17) } }
                #expect(status == 200 && body.contains("\"ok\":true") && stamps(body) == stamps(expected) && !stamps(body).isEmpty)
            }
            let health = try await healthz(replicated)
            #expect(health.status == 200 && health.body.contains(#""replica":{"answers":false"#), "\(health.body)")
        } catch {
            Issue.record("\(error)")
        }
        try await http.shutdown()
        #expect(replicated.stop() == 0)
        #expect(plain.stop() == 0)
    }
}

/// The issue's walk-through on PostgreSQL: a primary and a streaming standby, two servers (one with `--replica`),
/// a session made through one and used through the other, the primary stopped (reads go on from the standby, a
/// sign-in is refused with 503), then the standby promoted (a sign-in works again, without a restart).
@Suite(.enabled(if: PostgresTestServer.isAvailable, "needs a PostgreSQL 15 server (Debian's postgresql-15)"))
struct ReplicaServeTests {
    @Test func readsGoOnThroughTheStandbyAndWritesFollowItsPromotion() async throws {
        let pair = try PostgresReplicaPair()
        defer { pair.stop() }
        let db = try ServeCLITests.importSample(into: pair.primaryURL)
        let member = APIFixture.dmMembers[0]
        let token = try SharedSessionsTests.token(db, user: member)
        let plain = try ServeCLITests.serve(db: db)
        let replicated = try ServeCLITests.serve(db: db, extra: ["--replica", pair.standbyURL])
        let http = SharedSessionsTests.client()
        let general = try APIFixture.conversationID(folder: "general")
        let reads = ["conversations.history?channel=\(general)&limit=7", "search.messages?query=exception&sort=timestamp"]
        func answers(_ cookie: String) async throws -> [String] {
            var out: [String] = []
            for method in reads {
                let (status, body) = try await SharedSessionsTests.call(http, replicated, method, cookie: cookie)
                let stamps = body.components(separatedBy: "\"ts\":\"").dropFirst().map { $0.prefix(17) }
                out.append("\(status) \(body.contains("\"ok\":true")) \(stamps.joined(separator: ","))")
            }
            return out
        }
        do {
            // The standby has replayed the import: its lag is 0 and it is in recovery.
            let caughtUp = try await SharedSessionsTests.eventually {
                let (status, body) = try await healthz(replicated)
                return status == 200 && body.contains(#""in_recovery":true"#) && body.contains(#""lag_seconds":0"#)
            }
            let health = try await healthz(replicated).body
            #expect(caughtUp, "\(health)")
            let session = try #require(try await SharedSessionsTests.signIn(http, plain, token: token).cookie)
            #expect(try await SharedSessionsTests.whoIs(http, replicated, cookie: session) == member)
            let before = try await answers(session)
            #expect(before.allSatisfy { $0.hasPrefix("200 true 1") }, "\(before)")
            // Revoking a token (on the primary) ends its session on the server reading from the standby.
            let doomed = try SharedSessionsTests.token(db, user: APIFixture.outsider)
            let doomedSession = try #require(try await SharedSessionsTests.signIn(http, plain, token: doomed).cookie)
            #expect(try await SharedSessionsTests.whoIs(http, replicated, cookie: doomedSession) == APIFixture.outsider)
            let id = try #require(try Archive(path: db).tokens().first { $0.userID == APIFixture.outsider }?.id)
            #expect(try await CLITests.run(["--db", db, "token", "revoke", "\(id)"]).status == 0)
            #expect(
                try await SharedSessionsTests.eventually(5) {
                    try await SharedSessionsTests.whoIs(http, replicated, cookie: doomedSession) == "error: not_authed"
                })

            try pair.stopPrimary()
            #expect(try await answers(session) == before, "reads go on from the standby")
            #expect(try await SharedSessionsTests.whoIs(http, replicated, cookie: session) == member)
            let refused = try await SharedSessionsTests.signIn(http, replicated, token: token)
            #expect(refused.status == 503 && refused.cookie == nil, "a write is refused while the primary is down")
            let standing = try await healthz(replicated)
            #expect(standing.status == 200, "\(standing.body)")
            #expect(try await healthz(plain).status == 503, "the server without a replica has no archive")

            try pair.promoteStandby()
            let again = try await SharedSessionsTests.signIn(http, replicated, token: token)
            #expect(again.status == 303 && again.cookie != nil, "the promoted standby takes the sign-in")
            let fresh = try #require(again.cookie)
            #expect(try await SharedSessionsTests.whoIs(http, replicated, cookie: fresh) == member)
            #expect(try await answers(fresh) == before)
            #expect(try await healthz(replicated).body.contains(#""in_recovery":false"#))
        } catch {
            Issue.record("\(error)")
        }
        try await http.shutdown()
        #expect(replicated.stop() == 0)
        _ = plain.stop()
    }
}
