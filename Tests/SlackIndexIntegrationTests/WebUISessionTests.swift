import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SlackIndex
@testable import SlackIndexServer
import Testing
@testable import SlackIndexTestSupport

/// The web UI's sessions against a token holder who means harm: a sign-in flood, sign-in and sign-out sent from
/// another site's page, and sessions that end on their own. (Router tests: the request's authority is
/// `localhost`, so `http://localhost` is the server's own origin.)
@Suite struct WebUISessionTests {
    /// Posts `token` to `/ui/signin`; returns the status and the session cookie (`name=value`) it set, if any.
    static func signIn(_ client: some TestClientProtocol, token: String, headers: HTTPFields = [:]) async throws
        -> (status: HTTPResponse.Status, cookie: String?)
    {
        var fields: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        fields.append(contentsOf: headers)
        return try await client.execute(
            uri: "/ui/signin", method: .post, headers: fields, body: ByteBuffer(string: "token=\(token)")
        ) { response in
            (response.status, response.headers[.setCookie]?.split(separator: ";").first.map(String.init))
        }
    }

    /// `auth.test` through a session cookie: its user, or its error.
    static func whoIs(_ client: some TestClientProtocol, cookie: String) async throws -> String {
        try await client.execute(uri: "/api/auth.test", method: .get, headers: [.cookie: cookie]) {
            let body = try WebUITests.json($0.body)
            return (body["user_id"] as? String) ?? "error: \(body["error"] as? String ?? "?")"
        }
    }

    /// The owner's session from a one-time link.
    static func ownerCookie(_ client: some TestClientProtocol, ui: WebUI) async throws -> String {
        try await client.execute(uri: ui.oneTimeSignInPath(userID: APIFixture.adminUser), method: .get) {
            try WebUITests.cookiePair($0.headers[.setCookie])
        }
    }

    /// 1,001 sign-ins with the weakest token (the one the security test used) leave the owner signed in: they are
    /// rate-limited, and the sessions they make end only that token's own.
    @Test func aSignInFloodDoesNotSignTheOwnerOut() async throws {
        let f = try APIFixture()
        let outsider = try f.token(for: APIFixture.outsider)
        let ui = WebUI(now: ManualTime().now)  // time stands still: no sign-in comes back during the flood
        let app = Application(router: SlackAPIServer.buildRouter(api: f.api, ui: ui))
        try await app.test(.router) { client in
            let owner = try await Self.ownerCookie(client, ui: ui)
            let member = try #require(try await Self.signIn(client, token: try f.token(for: APIFixture.dmMembers[0])).cookie)
            var statuses: [HTTPResponse.Status: Int] = [:]
            for _ in 0..<1_001 {
                statuses[try await Self.signIn(client, token: outsider).status, default: 0] += 1
            }
            #expect(try await Self.whoIs(client, cookie: owner) == APIFixture.adminUser)
            #expect(try await Self.whoIs(client, cookie: member) == APIFixture.dmMembers[0])
            // 10 sign-ins a minute with one token (and 30 attempts from one address).
            #expect(statuses[.seeOther] == 10, "\(statuses)")
            #expect(statuses[.tooManyRequests] == 1_001 - 10, "\(statuses)")
        }
    }

    /// Without the rate limit, the flood's sessions still end only the flooding token's own oldest ones.
    @Test func aTokensSessionsEndOnlyItsOwnOldest() async throws {
        let f = try APIFixture()
        let outsider = try f.token(for: APIFixture.outsider)
        var limits = WebUI.Limits()
        limits.signInsPerToken = RateLimit(requests: 1_000_000, interval: .seconds(1))
        limits.signInsPerAddress = limits.signInsPerToken
        let ui = WebUI(limits: limits)
        let app = Application(router: SlackAPIServer.buildRouter(api: f.api, ui: ui))
        try await app.test(.router) { [limits] client in
            let owner = try await Self.ownerCookie(client, ui: ui)
            let member = try #require(try await Self.signIn(client, token: try f.token(for: APIFixture.dmMembers[0])).cookie)
            var flood: [String] = []
            for _ in 0..<1_001 {
                flood.append(try #require(try await Self.signIn(client, token: outsider).cookie))
            }
            #expect(try await Self.whoIs(client, cookie: owner) == APIFixture.adminUser)
            #expect(try await Self.whoIs(client, cookie: member) == APIFixture.dmMembers[0])
            #expect(try await Self.whoIs(client, cookie: flood[flood.count - limits.sessionsPerToken]) == APIFixture.outsider)
            #expect(try await Self.whoIs(client, cookie: flood[flood.count - limits.sessionsPerToken - 1]) == "error: not_authed")
        }
    }

    /// A page of another site cannot sign a browser in (login CSRF) or out; the server's own page can.
    @Test(arguments: [
        (["Origin": "http://evil.example"], false),
        (["Origin": "http://localhost.evil.example"], false),
        (["Origin": "http://localhost:8080"], false),
        (["Origin": "null"], false),
        (["Origin": "null", "Sec-Fetch-Site": "cross-site"], false),
        (["Sec-Fetch-Site": "same-site"], false),
        (["Origin": "http://localhost"], true),
        (["Origin": "null", "Sec-Fetch-Site": "same-origin"], true),
        ([:], true),  // curl: no browser, so no other site behind it
    ])
    func signInAndSignOutFromAnotherSiteAreRefused(headers: [String: String], allowed: Bool) async throws {
        let f = try APIFixture()
        let member = try f.token(for: APIFixture.dmMembers[0])
        var fields = HTTPFields()
        for (name, value) in headers { fields[try #require(HTTPField.Name(name))] = value }
        let app = Application(router: SlackAPIServer.buildRouter(api: f.api, ui: WebUI()))
        try await app.test(.router) { [fields] client in
            let attempt = try await Self.signIn(client, token: member, headers: fields)
            #expect(attempt.status == (allowed ? .seeOther : .forbidden))
            #expect((attempt.cookie != nil) == allowed, "a session cookie only from the server's own page")
            let cookie = try #require(try await Self.signIn(client, token: member).cookie)
            var signOut = fields
            signOut[.cookie] = cookie
            try await client.execute(uri: "/ui/signout", method: .post, headers: signOut) { response in
                #expect(response.status == (allowed ? .seeOther : .forbidden))
                if !allowed { #expect(String(buffer: response.body).contains("came from another site")) }
            }
            let after = try await Self.whoIs(client, cookie: cookie)
            #expect(after == (allowed ? "error: not_authed" : APIFixture.dmMembers[0]))
        }
    }

    /// A session ends `sessionIdle` after its last use, and `sessionLifetime` after sign-in however much it is
    /// used; the owner's too. A one-time link ends after `codeLifetime`.
    @Test func sessionsEndWhenIdleAndAtTheirLifetime() async throws {
        let f = try APIFixture()
        let member = try f.token(for: APIFixture.dmMembers[0])
        let time = ManualTime()
        var limits = WebUI.Limits()
        limits.sessionIdle = .seconds(60)
        limits.sessionLifetime = .seconds(300)
        let ui = WebUI(limits: limits, now: time.now)
        let app = Application(router: SlackAPIServer.buildRouter(api: f.api, ui: ui))
        try await app.test(.router) { [limits] client in
            let idle = try #require(try await Self.signIn(client, token: member).cookie)
            let busy = try #require(try await Self.signIn(client, token: member).cookie)
            let owner = try await Self.ownerCookie(client, ui: ui)
            let late = ui.oneTimeSignInPath()
            // Used every 50 s: the busy session and the owner's outlive the idle limit; the idle one does not.
            for _ in 0..<5 {
                time.advance(by: .seconds(50))
                #expect(try await Self.whoIs(client, cookie: busy) == APIFixture.dmMembers[0])
                #expect(try await Self.whoIs(client, cookie: owner) == APIFixture.adminUser)
            }
            #expect(try await Self.whoIs(client, cookie: idle) == "error: not_authed")
            // 250 s in, 300 s is the lifetime, used or not.
            time.advance(by: .seconds(50))
            #expect(try await Self.whoIs(client, cookie: busy) == "error: not_authed")
            #expect(try await Self.whoIs(client, cookie: owner) == "error: not_authed")
            try await client.execute(uri: "/", method: .get, headers: [.cookie: busy]) {
                #expect(String(buffer: $0.body).contains(#"name="token""#), "back to the sign-in form")
            }
            // 300 s: the link made at 0 s (600 s to live) still works; at 600 s it would not.
            try await client.execute(uri: late, method: .get) { #expect($0.status == .seeOther) }
            let expired = ui.oneTimeSignInPath()
            time.advance(by: limits.codeLifetime)
            try await client.execute(uri: expired, method: .get) { #expect($0.status == .unauthorized) }
        }
    }

    /// The sign-in limit counts per client address as well as per token: attempts with wrong tokens from one
    /// address use up that address's sign-ins.
    @Test func wrongTokensUseUpTheAddressesSignIns() async throws {
        let f = try APIFixture()
        var limits = WebUI.Limits()
        limits.signInsPerAddress = RateLimit(requests: 3, interval: .seconds(3600))
        let app = Application(router: SlackAPIServer.buildRouter(api: f.api, ui: WebUI(limits: limits)))
        try await app.test(.router) { client in
            for attempt in 0..<3 {
                #expect(try await Self.signIn(client, token: "xoxp-wrong-\(attempt)").status == .unauthorized)
            }
            try await client.execute(
                uri: "/ui/signin", method: .post, body: ByteBuffer(string: "token=\(try f.token(for: APIFixture.outsider))")
            ) { response in
                #expect(response.status == .tooManyRequests)
                #expect(Int(response.headers[.retryAfter] ?? "") ?? 0 > 1000)
                #expect(String(buffer: response.body).contains("Too many sign-ins: try again in"))
            }
        }
    }
}
