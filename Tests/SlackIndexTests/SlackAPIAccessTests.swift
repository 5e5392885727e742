import Foundation
import SlackIndex
import SlackIndexServer
import Testing
@testable import SlackIndexTestSupport

/// Who sees what: a DM is visible only to its members and to admin tokens, in every method.
@Suite struct SlackAPIAccessTests {
    /// Everything a token can learn about the DM: history, replies, info, listing, search hits.
    struct View: Equatable {
        var historyError: String?
        var historyCount: Int
        var listed: Bool
        var searchHits: Int
        var searchHitsInDM: Int
    }

    static func view(_ f: APIFixture, token: String?) async throws -> View {
        let history = try await f.call("conversations.history", ["channel": APIFixture.dm, "limit": "1000"], token: token)
        let list = try await f.call("conversations.list", ["types": "public_channel,private_channel,mpim,im"], token: token)
        let listed = ((list["channels"] as? [[String: Any]]) ?? []).contains { $0["id"] as? String == APIFixture.dm }
        var hits = 0
        var inDM = 0
        for query in ["exception", "in:\(APIFixture.dm)", "function in:\(APIFixture.dm)"] {
            let search = try await f.call("search.messages", ["query": query, "count": "100"], token: token)
            let messages = (search["messages"] as? [String: Any]) ?? [:]
            let matches = (messages["matches"] as? [[String: Any]]) ?? []
            hits += matches.count
            inDM += matches.filter { ($0["channel"] as? [String: Any])?["id"] as? String == APIFixture.dm }.count
            if token != nil, search["ok"] as? Bool == true {
                // The total never counts what the token cannot see.
                #expect((messages["total"] as? Int ?? 0) >= matches.count)
            }
        }
        return View(
            historyError: history["error"] as? String, historyCount: (history["messages"] as? [Any])?.count ?? 0,
            listed: listed, searchHits: hits, searchHitsInDM: inDM)
    }

    @Test func dmIsHiddenFromOthersEverywhere() async throws {
        let f = try APIFixture()
        let expected = try APIFixture.exportHistory(folder: APIFixture.dm).count

        for token in [nil, "xoxp-slackindex-" + String(repeating: "A", count: 40)] {
            let view = try await Self.view(f, token: token)
            #expect(view.historyError == (token == nil ? "not_authed" : "invalid_auth"))
            #expect(view.historyCount == 0 && !view.listed && view.searchHits == 0)
        }

        let outsider = try f.token(for: APIFixture.outsider)
        let hidden = try await Self.view(f, token: outsider)
        #expect(hidden.historyError == "channel_not_found" && hidden.historyCount == 0)
        #expect(!hidden.listed)
        #expect(hidden.searchHits > 0, "the outsider still finds public messages")
        #expect(hidden.searchHitsInDM == 0)
        for (method, parameters) in [
            ("conversations.info", ["channel": APIFixture.dm]),
            ("conversations.replies", ["channel": APIFixture.dm, "ts": "1"]),
            ("chat.getPermalink", ["channel": APIFixture.dm, "message_ts": "1"]),
        ] {
            try await f.fails(method, parameters, token: outsider, with: "channel_not_found")
        }

        for token in [try f.token(for: APIFixture.dmMembers[0]), try f.token(for: APIFixture.dmMembers[1]), f.admin] {
            let view = try await Self.view(f, token: token)
            #expect(view.historyError == nil && view.historyCount == expected)
            #expect(view.listed)
            #expect(view.searchHitsInDM > 0)
        }
        // A non-admin token of someone else is not an admin token of the same user.
        let adminUserPlain = try f.token(for: APIFixture.adminUser)
        #expect(try await Self.view(f, token: adminUserPlain).historyError == "channel_not_found")
    }

    @Test func privateChannelsFollowMembership() async throws {
        let f = try APIFixture()
        let oracle = try SampleOracle(folder: TestSupport.sampleFolder)
        let outsider = try f.token(for: APIFixture.outsider)
        let listed = try await f.pages(
            "conversations.list", ["types": "public_channel,private_channel,mpim,im", "limit": "4"], token: outsider)
        let ids = Set(listed.flatMap { ($0["channels"] as? [[String: Any]]) ?? [] }.compactMap { $0["id"] as? String })
        let expected = Set(
            oracle.conversations.filter { $0.kind == "channel" || $0.members.contains(APIFixture.outsider) }.map(\.id))
        #expect(ids == expected)
        for conversation in oracle.conversations where conversation.kind != "channel" {
            let body = try await f.call("conversations.history", ["channel": conversation.id, "limit": "1"], token: outsider)
            #expect((body["ok"] as? Bool == true) == conversation.members.contains(APIFixture.outsider), "\(conversation.id)")
        }
        // Search totals equal what the token may see, exactly.
        let word = "exception"
        let visible = Set(expected)
        let count = oracle.messages.filter { $0.tokenSet.contains(word) && visible.contains($0.conversationID) }.count
        let body = try await f.ok("search.messages", ["query": word], token: outsider)
        #expect((body["messages"] as? [String: Any])?["total"] as? Int == count)
    }
}

extension SlackAPIAccessTests {
    /// An export with one public message about zebras among filler, and a DM between U2 and U3 that holds
    /// `hidden` messages about zebras too (U1, the outsider, is in `general` only).
    static func zebraExport(hidden: Int) throws -> URL {
        func day(_ texts: [String], user: String, start: Int) -> String {
            let messages = texts.enumerated().map { index, text in
                #"{"type": "message", "user": "\#(user)", "text": "\#(text)", "ts": "\#(start + index).000100"}"#
            }
            return "[" + messages.joined(separator: ",") + "]"
        }
        let filler = (0..<40).map { "standup notes number \($0) about the release" }
        let users = ["U1", "U2", "U3"].map { #"{"id": "\#($0)", "name": "user\#($0)", "team_id": "T1"}"# }
        return try TestSupport.minimalExport(
            days: ["2024-05-01": day(filler + ["the zebra crossing near the office is closed"], user: "U2", start: 1_714_550_000)],
            extra: [
                "users.json": "[" + users.joined(separator: ",") + "]",
                "channels.json": #"[{"id": "C1", "name": "general", "created": "1433558319", "members": ["U1", "U2", "U3"]}]"#,
                "dms.json": #"[{"id": "D1", "created": 1433558319, "members": ["U2", "U3"]}]"#,
                "D1/2024-05-02.json": day(
                    (0..<max(1, hidden)).map { hidden == 0 ? "lunch? \($0)" : "zebra \($0) at the zoo" }, user: "U3",
                    start: 1_714_640_000),
            ])
    }

    /// An outsider's search score says nothing about conversations it cannot read: 300 messages about zebras
    /// added to a DM it is not in leave its score for the one public zebra unchanged (the archive's bm25 score
    /// fell from 47.1 to 35.9 in the security test that found this).
    @Test func scoresDoNotChangeWhenHiddenMessagesAreAdded() async throws {
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: try Self.zebraExport(hidden: 0).path)
        let api = SlackAPI(archive: archive, configuration: SlackAPIConfiguration(rateLimit: RateLimit(requests: 1_000, interval: .seconds(1))))
        let outsider = try archive.createToken(userID: "U1").token
        let admin = try archive.createToken(userID: "U2", isAdmin: true).token
        func search(_ query: String, _ token: String) async throws -> (total: Int, scores: [Double]) {
            let answer = await api.call("search.messages", parameters: ["query": query], bearer: token)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
            let messages = try #require(body["messages"] as? [String: Any], "\(answer.body)")
            let matches = (messages["matches"] as? [[String: Any]]) ?? []
            return (messages["total"] as? Int ?? -1, matches.compactMap { $0["score"] as? Double })
        }
        let before = try await search("zebra crossing", outsider)
        let beforeAlone = try await search("zebra", outsider)
        _ = try Importer(archive: archive).importExport(at: try Self.zebraExport(hidden: 300).path)
        #expect(try await search("zebra", admin).total == 301, "the hidden messages are in the archive")
        let after = try await search("zebra crossing", outsider)
        let afterAlone = try await search("zebra", outsider)
        #expect(before.total == 1 && after.total == 1)
        #expect(before.scores.count == 1 && before.scores == after.scores, "\(before.scores) → \(after.scores)")
        #expect(beforeAlone.total == 1 && beforeAlone.scores == afterAlone.scores)
    }
}

/// Rate limits: a token bucket per token, over the limit HTTP 429 with Retry-After.
@Suite struct SlackAPIRateLimitTests {
    @Test func overTheLimitIs429WithRetryAfterUntilTheBucketRefills() async throws {
        let time = ManualTime()
        let f = try APIFixture(rateLimit: RateLimit(requests: 3, interval: .seconds(10)), now: time.now)
        for _ in 0..<3 { #expect(await f.api.call("auth.test", parameters: [:], bearer: f.admin).ok) }
        let limited = await f.api.call("auth.test", parameters: [:], bearer: f.admin)
        #expect(limited.status == 429)
        #expect(limited.retryAfter == 4)  // one request every 3.33 s
        #expect(limited.body == #"{"ok":false,"error":"ratelimited"}"#)
        // Other tokens have their own bucket.
        let other = try f.token(for: APIFixture.outsider)
        #expect(await f.api.call("auth.test", parameters: [:], bearer: other).ok)
        time.advance(by: .seconds(3))
        #expect(await f.api.call("auth.test", parameters: [:], bearer: f.admin).status == 429)
        time.advance(by: .milliseconds(400))
        #expect(await f.api.call("auth.test", parameters: [:], bearer: f.admin).ok)
        #expect(await f.api.call("auth.test", parameters: [:], bearer: f.admin).status == 429)
        time.advance(by: .seconds(60))
        for _ in 0..<3 { #expect(await f.api.call("auth.test", parameters: [:], bearer: f.admin).ok) }
        #expect(await f.api.call("auth.test", parameters: [:], bearer: f.admin).status == 429)
    }

    @Test(arguments: [("100/10", 100, 10_000), ("5/1s", 5, 1_000), ("20/0.5", 20, 500)])
    func rateLimitsParse(text: String, requests: Int, milliseconds: Int64) {
        let limit = RateLimit(parsing: text)
        #expect(limit?.requests == requests && limit?.interval == .milliseconds(milliseconds))
    }

    @Test(arguments: ["", "100", "0/10", "10/0", "x/10", "10/y", "-1/5"])
    func badRateLimitsAreRefused(text: String) {
        #expect(RateLimit(parsing: text) == nil)
    }
}
