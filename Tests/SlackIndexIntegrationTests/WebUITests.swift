import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import SlackIndex
@testable import SlackIndexServer
import Testing
@testable import SlackIndexTestSupport

/// The web UI's server side: sign-in and session cookies, `--ui off`, headers, gzip, page weight, and the two
/// methods of slackindex's own that the UI reads, under the API's access rules. (The page itself is tested in a
/// browser: `WebUIBrowserTests`.)
@Suite struct WebUITests {
    static func json(_ buffer: ByteBuffer) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(String(buffer: buffer).utf8)) as? [String: Any])
    }

    /// `name=value` of a `Set-Cookie` header, for sending it back.
    static func cookiePair(_ setCookie: String?) throws -> String {
        try #require(setCookie?.split(separator: ";").first.map(String.init))
    }

    /// gunzip through the system's `gzip`, so the check does not share code with what it checks.
    static func gunzip(_ buffer: ByteBuffer) throws -> String {
        let file = TestSupport.temporaryDirectory().appendingPathComponent("body.gz")
        try Data(buffer.readableBytesView).write(to: file)
        let run = try CLITests.run(executable: URL(fileURLWithPath: "/usr/bin/env"), ["gzip", "-dc", file.path])
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout
    }

    @Test func tokenSignInSetsAStrictHttpOnlyCookieThatActsAsTheToken() async throws {
        let f = try APIFixture()
        let member = try f.token(for: APIFixture.dmMembers[0])
        let outsider = try f.token(for: APIFixture.outsider)
        let app = Application(router: SlackAPIServer.buildRouter(api: f.api, ui: WebUI()))
        try await app.test(.router) { client in
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.status == .ok)
                let page = String(buffer: response.body)
                #expect(page.contains(#"action="/ui/signin""#) && page.contains(#"name="token""#))
                #expect(!page.contains("/ui/app.js"), "no app before signing in")
            }
            try await client.execute(
                uri: "/ui/signin", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "token=xoxp-slackindex-wrong")
            ) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.setCookie] == nil)
                #expect(String(buffer: response.body).contains("That is not a token of this archive."))
            }
            var memberCookie = ""
            try await client.execute(
                uri: "/ui/signin", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "token=\(member)")
            ) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[.location] == "/")
                let cookie = try #require(response.headers[.setCookie])
                #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/"))
                #expect(!cookie.contains(member), "the cookie names a session, not the token")
                memberCookie = try Self.cookiePair(cookie)
            }
            try await client.execute(uri: "/", method: .get, headers: [.cookie: memberCookie]) { response in
                #expect(response.headers[.cacheControl] == "no-store", "the signed-in page is never kept")
                #expect(
                    String(buffer: response.body).contains(#"<script src="/ui/app.js?v=\#(WebAsset.version)" defer></script>"#))
            }
            try await client.execute(uri: "/api/auth.test", method: .post, headers: [.cookie: memberCookie]) {
                let value = try Self.json($0.body)["user_id"] as? String
                #expect(value == APIFixture.dmMembers[0])
            }
            // The member's DM through the cookie; an outsider's cookie gets the API's answer for its token.
            try await client.execute(
                uri: "/api/slackindex.timeline?channel=\(APIFixture.dm)&limit=5", method: .get, headers: [.cookie: memberCookie]
            ) {
                let messages = try Self.json($0.body)["messages"] as? [Any]
                #expect(messages?.count == 5)
            }
            var outsiderCookie = ""
            try await client.execute(
                uri: "/ui/signin", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "token=\(outsider)")
            ) { outsiderCookie = try Self.cookiePair($0.headers[.setCookie]) }
            for method in ["slackindex.timeline", "conversations.history", "conversations.info"] {
                try await client.execute(
                    uri: "/api/\(method)?channel=\(APIFixture.dm)", method: .get, headers: [.cookie: outsiderCookie]
                ) {
                    let value = try Self.json($0.body)["error"] as? String
                    #expect(value == "channel_not_found", "\(method)")
                }
            }
            // Signing out ends the session: the cookie no longer stands for anything.
            try await client.execute(uri: "/ui/signout", method: .post, headers: [.cookie: memberCookie]) { response in
                #expect(response.status == .seeOther)
                #expect(response.headers[.setCookie]?.contains("Max-Age=0") == true)
            }
            try await client.execute(uri: "/api/auth.test", method: .post, headers: [.cookie: memberCookie]) {
                let value = try Self.json($0.body)["error"] as? String
                #expect(value == "not_authed")
            }
        }
    }

    @Test func revokingTheTokenEndsItsSessions() async throws {
        let f = try APIFixture()
        let (token, record) = try f.archive.createToken(userID: APIFixture.outsider)
        let app = Application(router: SlackAPIServer.buildRouter(api: f.api, ui: WebUI()))
        try await app.test(.router) { client in
            var cookie = ""
            try await client.execute(
                uri: "/ui/signin", method: .post, body: ByteBuffer(string: "token=\(token)")
            ) { cookie = try Self.cookiePair($0.headers[.setCookie]) }
            try await client.execute(uri: "/api/auth.test", method: .get, headers: [.cookie: cookie]) {
                let user = try Self.json($0.body)["user_id"] as? String
                #expect(user == APIFixture.outsider)
            }
            try f.archive.revokeToken(id: record.id)
            // The revocation ended the session (as an expired one: no credentials left), wherever it was made.
            try await client.execute(uri: "/api/auth.test", method: .get, headers: [.cookie: cookie]) {
                let value = try Self.json($0.body)["error"] as? String
                #expect(value == "not_authed")
            }
            try await client.execute(uri: "/", method: .get, headers: [.cookie: cookie]) {
                #expect(String(buffer: $0.body).contains(#"name="token""#), "back to the sign-in form")
            }
        }
    }

    @Test func theOwnersOneTimeLinkWorksOnceAndSeesEverything() async throws {
        let f = try APIFixture()
        let ui = WebUI()
        let path = ui.oneTimeSignInPath()
        #expect(path.hasPrefix("/ui/signin?code=") && path.count > 50)
        let app = Application(router: SlackAPIServer.buildRouter(api: f.api, ui: ui))
        try await app.test(.router) { client in
            var cookie = ""
            try await client.execute(uri: path, method: .get) { response in
                #expect(response.status == .seeOther)
                cookie = try Self.cookiePair(response.headers[.setCookie])
            }
            try await client.execute(uri: path, method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(response.headers[.setCookie] == nil)
            }
            try await client.execute(uri: "/ui/signin?code=made-up", method: .get) { #expect($0.status == .unauthorized) }
            try await client.execute(
                uri: "/api/conversations.info?channel=\(APIFixture.dm)", method: .get, headers: [.cookie: cookie]
            ) {
                    let value = try Self.json($0.body)["ok"] as? Bool
                    #expect(value == true, "the owner's session is an admin's")
                }
        }
    }

    @Test func withTheUIOffThereIsNoPageAndCookiesAreIgnored() async throws {
        let f = try APIFixture()
        let on = WebUI()
        let path = on.oneTimeSignInPath()
        let cookie = try await Application(router: SlackAPIServer.buildRouter(api: f.api, ui: on)).test(.router) {
            client in
            try await client.execute(uri: path, method: .get) { try Self.cookiePair($0.headers[.setCookie]) }
        }
        let off = Application(router: SlackAPIServer.buildRouter(api: f.api, ui: nil))
        try await off.test(.router) { client in
            for uri in ["/", "/ui/app.js", "/ui/app.css", "/ui/emoji.txt", path] {
                try await client.execute(uri: uri, method: .get) { #expect($0.status == .notFound, "\(uri)") }
            }
            try await client.execute(uri: "/api/auth.test", method: .get, headers: [.cookie: cookie]) {
                let value = try Self.json($0.body)["error"] as? String
                #expect(value == "not_authed")
            }
        }
    }

    @Test(arguments: ["/", "/ui/app.js", "/ui/app.css", "/ui/emoji.txt"])
    func everyAnswerCarriesAStrictPolicy(uri: String) async throws {
        let f = try APIFixture()
        try await Application(router: SlackAPIServer.buildRouter(api: f.api, ui: WebUI())).test(.router) { client in
            try await client.execute(uri: uri, method: .get) { response in
                #expect(response.status == .ok)
                let policy = try #require(response.headers[.contentSecurityPolicy])
                #expect(policy.contains("default-src 'none'") && policy.contains("script-src 'self'"))
                #expect(policy.contains("connect-src 'self'") && policy.contains("frame-ancestors 'none'"))
                #expect(!policy.contains("unsafe") && !policy.contains("http"), "no inline code, no other origin")
                #expect(response.headers[.xContentTypeOptions] == "nosniff")
            }
        }
    }

    @Test func thePagesHaveNoInlineScriptStyleOrOutsideReferences() throws {
        let page = WebAssets.page
        let signIn = WebAssets.signIn
        for html in [page, signIn] {
            let scripts = html.components(separatedBy: "<script").dropFirst()
            #expect(scripts.allSatisfy { $0.hasPrefix(#" src="/ui/"#) && $0.contains("></script>") })
            #expect(html.range(of: #"\son[a-z]+="#, options: .regularExpression) == nil, "no event handler attributes")
            #expect(html.range(of: #"style="#, options: .regularExpression) == nil, "no inline styles")
            #expect(!html.contains("<style"))
            #expect(html.range(of: #"(src|href)="(https?:)?//"#, options: .regularExpression) == nil, "nothing external")
        }
        #expect(!WebAssets.script.contains("http://") && !WebAssets.script.contains("https://"))
        #expect(!WebAssets.styles.contains("url("), "no fonts or images fetched by the style sheet")
        #expect(!WebAssets.script.contains("eval(") && !WebAssets.script.contains("new Function"))
    }

    @Test func theWholeUIWeighsAtMost150KB() async throws {
        let f = try APIFixture()
        let total = try await Application(router: SlackAPIServer.buildRouter(api: f.api, ui: WebUI())).test(.router) {
            client in
            var total = 0
            for uri in ["/", "/ui/app.js", "/ui/app.css", "/ui/emoji.txt"] {
                total += try await client.execute(uri: uri, method: .get) { $0.body.readableBytes }
            }
            return total
        }
        #expect(total > 40_000 && total <= 150_000, "\(total) bytes uncompressed")
    }

    @Test func assetsAndLargeAnswersAreGzippedForClientsThatAcceptIt() async throws {
        let f = try APIFixture()
        let channel = try APIFixture.conversationID(folder: "general")
        try await Application(router: SlackAPIServer.buildRouter(api: f.api, ui: WebUI())).test(.router) { client in
            var plain = ""
            try await client.execute(uri: "/ui/app.js", method: .get) { response in
                #expect(response.headers[.contentEncoding] == nil)
                plain = String(buffer: response.body)
            }
            try await client.execute(uri: "/ui/app.js", method: .get, headers: [.acceptEncoding: "gzip, deflate, br"]) {
                response in
                #expect(response.headers[.contentEncoding] == "gzip")
                #expect(response.body.readableBytes < plain.utf8.count / 2)
                let unzipped = try Self.gunzip(response.body)
                #expect(unzipped == plain)
            }
            try await client.execute(uri: "/ui/app.js", method: .get, headers: [.acceptEncoding: "gzip;q=0"]) {
                #expect($0.headers[.contentEncoding] == nil)
            }
            let uri = "/api/conversations.history?channel=\(channel)&limit=100"
            var json = ""
            try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(f.admin)"]) {
                json = String(buffer: $0.body)
            }
            try await client.execute(
                uri: uri, method: .get, headers: [.authorization: "Bearer \(f.admin)", .acceptEncoding: "gzip"]
            ) { response in
                #expect(response.headers[.contentEncoding] == "gzip")
                let unzipped = try Self.gunzip(response.body)
                #expect(unzipped == json)
            }
        }
    }

    @Test func assetsOfTheCurrentVersionAreKeptAndPagesAreNot() async throws {
        let f = try APIFixture()
        #expect(WebAsset.version.count >= 8)
        #expect(WebAsset.page.plain.getString(at: 0, length: WebAsset.page.plain.readableBytes)?
            .contains("/ui/app.css?v=\(WebAsset.version)") == true)
        try await Application(router: SlackAPIServer.buildRouter(api: f.api, ui: WebUI())).test(.router) { client in
            for uri in ["/ui/app.js", "/ui/app.css", "/ui/emoji.txt"] {
                try await client.execute(uri: uri + "?v=" + WebAsset.version, method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.cacheControl] == "public, max-age=31536000, immutable", "\(uri)")
                }
                for stale in [uri, uri + "?v=0123456789abcdef"] {
                    try await client.execute(uri: stale, method: .get) { #expect($0.headers[.cacheControl] == "no-cache") }
                }
            }
            try await client.execute(uri: "/", method: .get) { response in
                #expect(response.headers[.cacheControl] == "no-cache", "the sign-in form")
                #expect(String(buffer: response.body).contains("/ui/app.css?v=\(WebAsset.version)"))
            }
        }
    }

    @Test(arguments: [
        "<script>alert(1)</script>", #"<img src=x onerror="alert(1)">"#, "a & b ' \" >",
    ])
    func htmlTextEscapesMarkup(text: String) {
        let escaped = HTMLText.escape(text)
        #expect(!escaped.contains("<") && !escaped.contains(">") && !escaped.contains("\""))
        #expect(escaped.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&") == text)
    }
}

/// `slackindex.timeline` and `slackindex.conversations`: keyset pages both ways, around a message, access rules.
@Suite struct UITimelineMethodTests {
    @Test func pagesBackToTheStartAndForwardToTheEnd() async throws {
        let f = try APIFixture()
        let channel = try APIFixture.conversationID(folder: "marketing")
        let expected = Array(try APIFixture.exportHistory(folder: "marketing").reversed())  // oldest first
        var seen: [String] = []
        var body = try await f.ok("slackindex.timeline", ["channel": channel, "limit": "40"])
        seen = Self.ts(body)
        #expect(seen == Array(expected.suffix(40)))
        #expect(body["after"] as? String == "")
        while let cursor = body["before"] as? String, !cursor.isEmpty {
            body = try await f.ok("slackindex.timeline", ["channel": channel, "limit": "40", "cursor": cursor])
            seen = Self.ts(body) + seen
        }
        #expect(seen == expected)

        // Around a message in the middle: it is in the page and named as the anchor; then forward to the end.
        let middle = expected[expected.count / 2]
        body = try await f.ok("slackindex.timeline", ["channel": channel, "limit": "20", "around": middle])
        #expect(body["anchor"] as? String == middle)
        var forward = Self.ts(body)
        #expect(forward.count == 20 && forward.contains(middle))
        #expect((body["before"] as? String)?.isEmpty == false)
        while let cursor = body["after"] as? String, !cursor.isEmpty {
            body = try await f.ok("slackindex.timeline", ["channel": channel, "limit": "20", "cursor": cursor])
            forward += Self.ts(body)
        }
        #expect(forward == Array(expected[(expected.count / 2 - 9)...]), "half a page at or before it, half after")

        // A time between messages (jump to a date): the anchor is the first message at or after it.
        let gap = SampleOracle.micros(middle) - 1
        let between = String(format: "%d.%06d", gap / 1_000_000, gap % 1_000_000)
        body = try await f.ok("slackindex.timeline", ["channel": channel, "around": between])
        #expect(body["anchor"] as? String == middle)
    }

    @Test func cursorsOfOtherConversationsAndHiddenConversationsAreRefused() async throws {
        let f = try APIFixture()
        let general = try APIFixture.conversationID(folder: "general")
        let marketing = try APIFixture.conversationID(folder: "marketing")
        let body = try await f.ok("slackindex.timeline", ["channel": general, "limit": "5"])
        let cursor = try #require(body["before"] as? String)
        try await f.fails(
            "slackindex.timeline", ["channel": marketing, "cursor": cursor], token: f.admin, with: "invalid_cursor")
        let outsider = try f.token(for: APIFixture.outsider)
        for params in [["channel": APIFixture.dm], ["channel": APIFixture.dm, "around": "1700000000.000000"]] {
            try await f.fails("slackindex.timeline", params, token: outsider, with: "channel_not_found")
        }
        try await f.fails("slackindex.timeline", ["channel": general], token: nil, with: "not_authed")
    }

    @Test func conversationsListsWhatTheTokenSeesWithCounts() async throws {
        let f = try APIFixture()
        let outsider = try f.token(for: APIFixture.outsider)
        let member = try f.token(for: APIFixture.dmMembers[0])
        func ids(_ token: String) async throws -> [String: Int] {
            let body = try await f.ok("slackindex.conversations", token: token)
            let list = try #require(body["conversations"] as? [[String: Any]])
            return Dictionary(uniqueKeysWithValues: list.compactMap { c in
                (c["id"] as? String).map { ($0, c["count"] as? Int ?? -1) }
            })
        }
        let seenByOutsider = try await ids(outsider)
        let seenByMember = try await ids(member)
        let seenByAdmin = try await ids(f.admin)
        #expect(seenByOutsider[APIFixture.dm] == nil)
        #expect(seenByMember[APIFixture.dm] != nil)
        let stats = try f.archive.store.keptMessageCounts()
        let all = try f.archive.conversations()
        #expect(seenByAdmin.count == all.count)
        for c in all { #expect(seenByAdmin[c.id] == (stats[c.rowID]?.first ?? 0), "\(c.id)") }
        // Exactly the API's own list: public channels and the member's conversations.
        let listed = try await f.pages(
            "conversations.list", ["types": "public_channel,private_channel,mpim,im", "limit": "100"], token: outsider)
        let expected = Set(listed.flatMap { ($0["channels"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String } })
        #expect(Set(seenByOutsider.keys) == expected)
    }

    /// The first page is shown before the member list arrives: each page names its conversation and every person
    /// it shows (authors, mentions, reactions), as users.list names them.
    @Test func pagesNameTheirConversationAndThePeopleTheyShow() async throws {
        let f = try APIFixture()
        var labels: [String: String] = [:]
        for page in try await f.pages("users.list", ["limit": "1000"], token: f.admin) {
            for u in page["members"] as? [[String: Any]] ?? [] {
                let profile = u["profile"] as? [String: Any] ?? [:]
                let display = profile["display_name"] as? String ?? ""
                let real = u["real_name"] as? String ?? ""
                labels[u["id"] as? String ?? ""] = !display.isEmpty ? display : !real.isEmpty ? real : u["name"] as? String
            }
        }
        let mention = try Regex(#"<@([UW][A-Z0-9]+)"#)
        for (channel, token) in [(try APIFixture.conversationID(folder: "general"), f.admin), (APIFixture.dm, f.admin)] {
            var body = try await f.ok("slackindex.timeline", ["channel": channel, "limit": "40"], token: token)
            var pages = 0
            while true {
                pages += 1
                let conversation = try #require(body["conversation"] as? [String: Any])
                #expect(conversation["id"] as? String == channel)
                let users = try #require(body["users"] as? [String: [String: Any]])
                var shown: Set<String> = channel == APIFixture.dm ? Set(APIFixture.dmMembers) : []
                for m in body["messages"] as? [[String: Any]] ?? [] {
                    if let user = m["user"] as? String { shown.insert(user) }
                    for match in (m["text"] as? String ?? "").matches(of: mention) {
                        shown.insert(String(match.output[1].substring ?? ""))
                    }
                    for r in m["reactions"] as? [[String: Any]] ?? [] { shown.formUnion(r["users"] as? [String] ?? []) }
                }
                let known = shown.filter { labels[$0] != nil }
                #expect(!known.isEmpty)
                #expect(known.isSubset(of: Set(users.keys)), "\(known.subtracting(users.keys))")
                for (id, user) in users { #expect(user["label"] as? String == labels[id], "\(id)") }
                guard let cursor = body["before"] as? String, !cursor.isEmpty, pages < 20 else { break }
                body = try await f.ok("slackindex.timeline", ["channel": channel, "limit": "40", "cursor": cursor], token: token)
            }
        }
        let list = try await f.ok("slackindex.conversations", token: f.admin)
        let users = try #require(list["users"] as? [String: Any])
        #expect(Set(APIFixture.dmMembers).isSubset(of: Set(users.keys)), "the sidebar names DMs by their members")
    }

    @Test(arguments: [
        (#"{"user":"U0AB12","text":"hi <@W0CD34> and <@U0EF56|ed>"}"#, ["U0AB12", "W0CD34", "U0EF56"]),
        (#"{"reactions":[{"users":["U1","U0AAA","U0BBB"]}],"ts":"1.2"}"#, ["U0AAA", "U0BBB"]),
        (#"{"text":"USA and \"UNICEF\" and @UPPER case, <@u0lower>, U0NOQUOTE", "team":"UNICEF"}"#, ["UNICEF"]),
        (#"{"user":"U0TOOLONG0123456789012345678901234567"}"#, []),
        ("", []), ("U", []), ("\"U0AB", []), ("\"U0AB\"", ["U0AB"]),
    ])
    func userIDsAreTheIDsAMessagesJSONNames(json: String, expected: [String]) {
        var ids: Set<String> = []
        SlackAPI.userIDs(inJSON: json, into: &ids)
        #expect(ids == Set(expected))
    }

    static func ts(_ body: [String: Any]) -> [String] {
        ((body["messages"] as? [[String: Any]]) ?? []).compactMap { $0["ts"] as? String }
    }
}
