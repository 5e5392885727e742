import Foundation
import SlackIndex
import SlackIndexServer
import Testing
@testable import SlackIndexTestSupport

/// The Web API methods called directly (no HTTP), each test on its own archive of sample-data, answers checked
/// against the export's own files.
@Suite struct SlackAPITests {
    @Test func authTestNamesTheTokensUserAndWorkspace() async throws {
        let f = try APIFixture()
        let token = try f.token(for: APIFixture.outsider)
        let body = try await f.ok("auth.test", token: token)
        #expect(body["user_id"] as? String == APIFixture.outsider)
        #expect(body["user"] as? String == "sarah.thompson" || (body["user"] as? String)?.isEmpty == false)
        let users = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: TestSupport.sampleFolder + "/users.json"))) as? [[String: Any]]
        let me = try #require(users?.first { $0["id"] as? String == APIFixture.outsider })
        #expect(body["user"] as? String == me["name"] as? String)
        #expect(body["team_id"] as? String == me["team_id"] as? String)
        #expect((body["url"] as? String)?.hasPrefix("https://") == true)
        #expect(body["team"] is String)
    }

    @Test func usersListPagesToTheEnd() async throws {
        let f = try APIFixture()
        let pages = try await f.pages("users.list", ["limit": "7"])
        #expect(pages.count > 1)
        let members = pages.flatMap { ($0["members"] as? [[String: Any]]) ?? [] }
        #expect(pages.dropLast().allSatisfy { ($0["members"] as? [Any])?.count == 7 })
        let ids = members.compactMap { $0["id"] as? String }
        #expect(ids == ids.sorted() && Set(ids).count == ids.count)
        let stats = try f.archive.stats()
        #expect(ids.count == stats.users + stats.placeholderUsers)
        let exported = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: TestSupport.sampleFolder + "/users.json"))) as? [[String: Any]]
        for user in exported ?? [] {
            let id = try #require(user["id"] as? String)
            let served = try #require(members.first { $0["id"] as? String == id }, "\(id) missing")
            #expect(served["name"] as? String == user["name"] as? String)
            #expect(served["deleted"] as? Bool == (user["deleted"] as? Bool ?? false))
            #expect(served["is_bot"] as? Bool == (user["is_bot"] as? Bool ?? false))
            let realName = user["real_name"] as? String ?? (user["profile"] as? [String: Any])?["real_name"] as? String
            #expect(served["real_name"] as? String == realName ?? "")
            #expect(served["tz"] as? String == user["tz"] as? String)
            let profile = try #require(served["profile"] as? [String: Any])
            #expect(profile["display_name"] as? String == (user["profile"] as? [String: Any])?["display_name"] as? String)
        }
        // Without a limit, one page holds everyone.
        let all = try await f.ok("users.list")
        #expect((all["members"] as? [Any])?.count == ids.count)
        #expect((all["response_metadata"] as? [String: Any])?["next_cursor"] as? String == "")
    }

    @Test func conversationsListFiltersByTypeAndPages() async throws {
        let f = try APIFixture()
        let oracle = try SampleOracle(folder: TestSupport.sampleFolder)
        let everything = "public_channel,private_channel,mpim,im"
        let pages = try await f.pages("conversations.list", ["types": everything, "limit": "5"])
        let channels = pages.flatMap { ($0["channels"] as? [[String: Any]]) ?? [] }
        #expect(Set(channels.compactMap { $0["id"] as? String }) == Set(oracle.conversations.map(\.id)))
        #expect(channels.count == oracle.conversations.count)
        // Default: public channels only.
        let publicOnly = try await f.ok("conversations.list")
        let publicIDs = Set(oracle.conversations.filter { $0.kind == "channel" }.map(\.id))
        #expect(Set(((publicOnly["channels"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? String }) == publicIDs)
        let ims = try await f.ok("conversations.list", ["types": "im"])
        for im in (ims["channels"] as? [[String: Any]]) ?? [] {
            #expect(im["is_im"] as? Bool == true && im["user"] is String && im["name"] == nil)
        }
        #expect(((ims["channels"] as? [Any]) ?? []).count == oracle.conversations.filter { $0.kind == "dm" }.count)
        // Object shape of a public channel.
        let general = try #require(channels.first { $0["name"] as? String == "general" })
        #expect(general["is_channel"] as? Bool == true && general["is_private"] as? Bool == false)
        #expect((general["topic"] as? [String: Any])?["value"] is String)
        #expect((general["purpose"] as? [String: Any])?["value"] is String)
        #expect(general["num_members"] as? Int == oracle.conversation(folder: "general")?.members.count)
        #expect((general["created"] as? Int ?? 0) > 0)
        // exclude_archived leaves out exactly the archived ones.
        let archived = Set(channels.filter { $0["is_archived"] as? Bool == true }.compactMap { $0["id"] as? String })
        let unarchived = try await f.pages("conversations.list", ["types": everything, "exclude_archived": "true"])
        let kept = unarchived.flatMap { ($0["channels"] as? [[String: Any]]) ?? [] }.compactMap { $0["id"] as? String }
        #expect(kept.count == channels.count - archived.count && archived.isDisjoint(with: kept))
        try await f.fails("conversations.list", ["types": "public_channel,bogus"], token: f.admin, with: "invalid_types")
    }

    @Test func historyPagesToTheEndNewestFirst() async throws {
        let f = try APIFixture()
        let channel = try APIFixture.conversationID(folder: "general")
        let expected = try APIFixture.exportHistory(folder: "general")
        let pages = try await f.pages("conversations.history", ["channel": channel, "limit": "17"])
        #expect(pages.count == (expected.count + 16) / 17)
        let messages = pages.flatMap { ($0["messages"] as? [[String: Any]]) ?? [] }
        #expect(messages.compactMap { $0["ts"] as? String } == expected)
        // Messages are Slack's own objects.
        let exported = try APIFixture.exportMessages(folder: "general")
        let sample = try #require(messages.first { $0["subtype"] == nil && $0["thread_ts"] == nil })
        let original = try #require(exported.first { $0["ts"] as? String == sample["ts"] as? String })
        #expect(sample["text"] as? String == original["text"] as? String)
        #expect(sample["user"] as? String == original["user"] as? String)
        #expect(sample["type"] as? String == "message")
        // Default limit 100; at most 1000.
        let first = try await f.ok("conversations.history", ["channel": channel])
        #expect((first["messages"] as? [Any])?.count == min(100, expected.count))
        let big = try await f.ok("conversations.history", ["channel": channel, "limit": "5000"])
        #expect((big["messages"] as? [Any])?.count == expected.count && big["has_more"] as? Bool == false)
    }

    @Test func historyBoundsAreExactAndExclusiveUnlessInclusive() async throws {
        let f = try APIFixture()
        let channel = try APIFixture.conversationID(folder: "general")
        let all = try APIFixture.exportHistory(folder: "general")  // newest first
        let latest = all[10]
        let oldest = all[20]
        func ts(_ parameters: [String: String]) async throws -> [String] {
            var arguments = parameters
            arguments["channel"] = channel
            return try await f.pages("conversations.history", arguments).flatMap {
                (($0["messages"] as? [[String: Any]]) ?? []).compactMap { $0["ts"] as? String }
            }
        }
        #expect(try await ts(["latest": latest, "oldest": oldest]) == Array(all[11..<20]))
        #expect(try await ts(["latest": latest, "oldest": oldest, "inclusive": "true"]) == Array(all[10...20]))
        #expect(try await ts(["latest": latest, "oldest": oldest, "inclusive": "1", "limit": "4"]) == Array(all[10...20]))
        #expect(try await ts(["latest": latest, "limit": "3"]) == Array(all[11...]))
        #expect(try await ts(["oldest": oldest, "limit": "6"]) == Array(all[..<20]))
        #expect(try await ts(["oldest": all[0]]).isEmpty)
        #expect(try await ts(["oldest": all[0], "inclusive": "true"]) == [all[0]])
        #expect(try await ts(["latest": oldest, "oldest": latest]).isEmpty)
        // A bound between messages: one microsecond after `oldest` excludes it even when inclusive.
        let after = SlackTimestamp(key: try #require(SlackTimestamp.parseKey(oldest)) + 1).string
        #expect(try await ts(["latest": latest, "oldest": after, "inclusive": "true"]) == Array(all[10..<20]))
        // A page that ends exactly at `oldest` says there is no more.
        let exact = try await f.ok(
            "conversations.history",
            ["channel": channel, "latest": latest, "oldest": oldest, "inclusive": "true", "limit": "11"])
        #expect((exact["messages"] as? [Any])?.count == 11 && exact["has_more"] as? Bool == false)
        try await f.fails("conversations.history", ["channel": channel, "oldest": "yesterday"], token: f.admin, with: "invalid_arguments")
    }

    @Test func historyHasEditsNoDeletionsAndCurrentReplyCounts() async throws {
        let f = try APIFixture(pages: true)
        struct Expected: Decodable {
            struct Edit: Decodable {
                var ts: String
                var new_text: String
            }
            var id: String
            var edited: [Edit]
            var deleted_ts: [String]
        }
        for folder in ["marketing", "exec", APIFixture.dm] {
            let url = URL(fileURLWithPath: TestSupport.samplePages).appendingPathComponent("\(folder)/expected.json")
            let expected = try JSONDecoder().decode(Expected.self, from: Data(contentsOf: url))
            let pages = try await f.pages("conversations.history", ["channel": expected.id, "limit": "200"])
            let messages = pages.flatMap { ($0["messages"] as? [[String: Any]]) ?? [] }
            let byTS = Dictionary(messages.map { ($0["ts"] as? String ?? "", $0) }) { first, _ in first }
            #expect(byTS.count == messages.count)
            for ts in expected.deleted_ts { #expect(byTS[ts] == nil, "deleted \(ts) served") }
            var seen = 0
            for edit in expected.edited {
                guard let message = byTS[edit.ts] else { continue }  // an edited reply is not in the channel view
                seen += 1
                #expect(message["text"] as? String == edit.new_text)
            }
            #expect(seen > 0 || expected.edited.isEmpty)
            // Thread parents carry the replies the archive holds.
            for parent in messages where (parent["reply_count"] as? Int ?? 0) > 0 {
                let ts = try #require(parent["ts"] as? String)
                let thread = try await f.pages("conversations.replies", ["channel": expected.id, "ts": ts])
                let replies = thread.flatMap { (($0["messages"] as? [[String: Any]]) ?? []).dropFirst() }
                #expect(parent["reply_count"] as? Int ?? 0 >= replies.count)
                if let last = replies.last?["ts"] as? String {
                    #expect(parent["latest_reply"] as? String == last, "\(ts)")
                }
            }
        }
    }

    @Test func repliesParentFirstOnEveryPage() async throws {
        let f = try APIFixture()
        let channel = try APIFixture.conversationID(folder: "general")
        let exported = try APIFixture.exportMessages(folder: "general")
        let parentTS = "1716185438.024538"
        let expectedReplies = exported.filter {
            $0["thread_ts"] as? String == parentTS && $0["ts"] as? String != parentTS
        }.compactMap { $0["ts"] as? String }.sorted { SampleOracle.micros($0) < SampleOracle.micros($1) }
        #expect(expectedReplies.count == 8)
        let pages = try await f.pages("conversations.replies", ["channel": channel, "ts": parentTS, "limit": "3"])
        #expect(pages.count == 3)
        var replies: [String] = []
        for page in pages {
            let messages = try #require(page["messages"] as? [[String: Any]])
            #expect(messages.first?["ts"] as? String == parentTS)
            #expect(messages.first?["reply_count"] as? Int == expectedReplies.count)
            replies += messages.dropFirst().compactMap { $0["ts"] as? String }
        }
        #expect(replies == expectedReplies)
        // A reply's ts opens the same thread.
        let viaReply = try await f.ok("conversations.replies", ["channel": channel, "ts": expectedReplies[4]])
        #expect(((viaReply["messages"] as? [[String: Any]]) ?? []).compactMap { $0["ts"] as? String }
            == [parentTS] + expectedReplies)
        // Bounds apply to the replies; the parent stays first.
        let bounded = try await f.ok(
            "conversations.replies",
            ["channel": channel, "ts": parentTS, "oldest": expectedReplies[2], "latest": expectedReplies[5]])
        #expect(((bounded["messages"] as? [[String: Any]]) ?? []).compactMap { $0["ts"] as? String }
            == [parentTS] + expectedReplies[3..<5])
        let inclusive = try await f.ok(
            "conversations.replies",
            ["channel": channel, "ts": parentTS, "oldest": expectedReplies[2], "latest": expectedReplies[5],
             "inclusive": "true"])
        #expect(((inclusive["messages"] as? [[String: Any]]) ?? []).compactMap { $0["ts"] as? String }
            == [parentTS] + expectedReplies[2...5])
        try await f.fails("conversations.replies", ["channel": channel, "ts": "1716185438.024539"], token: f.admin, with: "thread_not_found")
        try await f.fails("conversations.replies", ["channel": channel, "ts": "nope"], token: f.admin, with: "thread_not_found")
        try await f.fails("conversations.replies", ["channel": channel], token: f.admin, with: "invalid_arguments")
    }

    @Test func searchShapePagingAndHighlights() async throws {
        let f = try APIFixture()
        let oracle = try SampleOracle(folder: TestSupport.sampleFolder)
        let word = "exception"
        let expected = Set(oracle.messages.filter { $0.tokenSet.contains(word) }.map(\.key))
        #expect(expected.count > 25)
        let first = try await f.ok("search.messages", ["query": word, "highlight": "true"])
        #expect(first["query"] as? String == word)
        let messages = try #require(first["messages"] as? [String: Any])
        #expect(messages["total"] as? Int == expected.count)
        let paging = try #require(messages["paging"] as? [String: Any])
        #expect(paging["count"] as? Int == 20 && paging["page"] as? Int == 1 && paging["total"] as? Int == expected.count)
        #expect(paging["pages"] as? Int == (expected.count + 19) / 20)
        let pagination = try #require(messages["pagination"] as? [String: Any])
        #expect(pagination["total_count"] as? Int == expected.count && pagination["per_page"] as? Int == 20)
        #expect(pagination["first"] as? Int == 1 && pagination["last"] as? Int == 20)
        let matches = try #require(messages["matches"] as? [[String: Any]])
        #expect(matches.count == 20)
        for match in matches {
            for key in ["iid", "team", "type", "ts", "channel", "user", "username", "text", "permalink", "score"] {
                #expect(match[key] != nil, "missing \(key)")
            }
            let channel = try #require(match["channel"] as? [String: Any])
            #expect(channel["id"] is String && channel["name"] is String && channel["is_private"] is Bool)
            #expect((match["text"] as? String)?.contains("\u{E000}") == true)
            let permalink = try #require(match["permalink"] as? String)
            #expect(permalink.contains("/archives/\(channel["id"] as? String ?? "")/p"))
        }
        let scores = matches.compactMap { $0["score"] as? Double }
        #expect(scores == scores.sorted(by: >))
        // Without highlight the text is the message's own.
        let plain = try await f.ok("search.messages", ["query": word, "count": "5"])
        for match in ((plain["messages"] as? [String: Any])?["matches"] as? [[String: Any]]) ?? [] {
            let key = "\((match["channel"] as? [String: Any])?["id"] as? String ?? "") \(match["ts"] as? String ?? "")"
            #expect(match["text"] as? String == oracle.messages.first { $0.key == key }?.text)
        }
        // Every page to the end, by time: each match once, newest first, all of them.
        var keys: [String] = []
        var micros: [Int64] = []
        for page in 1...((expected.count + 6) / 7) {
            let body = try await f.ok(
                "search.messages", ["query": word, "count": "7", "page": "\(page)", "sort": "timestamp", "sort_dir": "desc"])
            let matches = ((body["messages"] as? [String: Any])?["matches"] as? [[String: Any]]) ?? []
            for match in matches {
                let ts = match["ts"] as? String ?? ""
                keys.append("\((match["channel"] as? [String: Any])?["id"] as? String ?? "") \(ts)")
                micros.append(SampleOracle.micros(ts))
            }
        }
        #expect(Set(keys) == expected && keys.count == expected.count)
        #expect(micros == micros.sorted(by: >))
        let ascending = try await f.ok("search.messages", ["query": word, "sort": "timestamp", "sort_dir": "asc", "count": "3"])
        let oldest = (((ascending["messages"] as? [String: Any])?["matches"] as? [[String: Any]]) ?? []).compactMap {
            $0["ts"] as? String
        }
        #expect(oldest.map(SampleOracle.micros) == Array(micros.reversed().prefix(3)))
        try await f.fails("search.messages", [:], token: f.admin, with: "no_query")
        // Slack's page cap; a huge page once overflowed page × count.
        for page in ["101", "9223372036854775807"] {
            try await f.fails(
                "search.messages", ["query": "the", "page": page], token: f.admin, with: "invalid_arguments")
        }
        let nobody = try await f.ok("search.messages", ["query": "\(word) from:@nobody-at-all"])
        #expect((nobody["messages"] as? [String: Any])?["total"] as? Int == 0)
    }

    /// The web UI's way: results without the exact count (a lower bound and whether there is more), then the count
    /// alone; both agree with search.messages' own, under the token's access rules.
    @Test func resultsWithoutTheCountThenTheCount() async throws {
        let f = try APIFixture()
        let outsider = try f.token(for: APIFixture.outsider)
        for (word, token) in [("exception", f.admin), ("exception", outsider), ("exception in:#general", outsider)] {
            let exact = try await f.ok("search.messages", ["query": word, "count": "10"], token: token)
            let total = try #require((exact["messages"] as? [String: Any])?["total"] as? Int)
            #expect((exact["messages"] as? [String: Any])?["total_exact"] == nil)
            #expect(total > 0)
            let counted = try await f.ok("slackindex.count", ["query": word], token: token)
            #expect(counted["total"] as? Int == total, "\(word)")
            var seen: [String] = []
            for page in 1...((total + 9) / 10) {
                let body = try await f.ok(
                    "search.messages", ["query": word, "count": "10", "page": "\(page)", "exact_total": "false"], token: token)
                let messages = try #require(body["messages"] as? [String: Any])
                #expect(messages["total_exact"] as? Bool == false)
                let matches = messages["matches"] as? [[String: Any]] ?? []
                seen += matches.compactMap { $0["ts"] as? String }
                let last = page == (total + 9) / 10
                // The matches so far, one more while there are more: a pager knows whether there is a next page.
                #expect(messages["total"] as? Int == seen.count + (last ? 0 : 1), "\(word) page \(page)")
            }
            #expect(seen.count == total)
        }
        let nobody = try await f.ok("slackindex.count", ["query": "exception from:@nobody-at-all"])
        #expect(nobody["total"] as? Int == 0)
        try await f.fails("slackindex.count", [:], token: f.admin, with: "no_query")
        try await f.fails("slackindex.count", ["query": "exception"], token: nil, with: "not_authed")
    }

    @Test func errorsAsSlackGivesThem() async throws {
        let f = try APIFixture()
        let channel = try APIFixture.conversationID(folder: "general")
        try await f.fails("conversations.history", ["channel": channel], token: nil, with: "not_authed")
        try await f.fails("conversations.history", ["channel": channel], token: "xoxp-slackindex-wrong", with: "invalid_auth")
        try await f.fails("conversations.history", ["channel": channel], token: "xoxb-1-2-3", with: "invalid_auth")
        try await f.fails("conversations.histories", ["channel": channel], token: f.admin, with: "unknown_method")
        try await f.fails("conversations.history", [:], token: f.admin, with: "invalid_arguments")
        try await f.fails("conversations.history", ["channel": "C_NOPE"], token: f.admin, with: "channel_not_found")
        try await f.fails("conversations.history", ["channel": channel, "cursor": "garbage!"], token: f.admin, with: "invalid_cursor")
        try await f.fails("conversations.history", ["channel": channel, "limit": "ten"], token: f.admin, with: "invalid_arguments")
        try await f.fails("users.list", ["cursor": "bm9wZQ"], token: f.admin, with: "invalid_cursor")
        // A cursor of another conversation is not valid here.
        let other = try APIFixture.conversationID(folder: "marketing")
        let page = try await f.ok("conversations.history", ["channel": other, "limit": "2"])
        let cursor = try #require((page["response_metadata"] as? [String: Any])?["next_cursor"] as? String)
        try await f.fails("conversations.history", ["channel": channel, "cursor": cursor], token: f.admin, with: "invalid_cursor")
        // The token may come as a parameter too.
        let viaParameter = await f.api.call("auth.test", parameters: ["token": f.admin])
        #expect(viaParameter.ok)
        // Revoked tokens stop working.
        let (token, record) = try f.archive.createToken(userID: APIFixture.outsider)
        #expect(await f.api.call("auth.test", parameters: [:], bearer: token).ok)
        try f.archive.revokeToken(id: record.id)
        try await f.fails("auth.test", token: token, with: "invalid_auth")
        let permalink = try await f.ok("chat.getPermalink", ["channel": channel, "message_ts": "1716185438.024538"])
        #expect((permalink["permalink"] as? String)?.hasSuffix("/archives/\(channel)/p1716185438024538") == true)
    }

    /// "Did you mean" in `search.messages` (slackindex's `suggestion`), for the web UI as the terminal has it, only
    /// when the correction finds messages the token may read (issue 55).
    @Test func searchSuggestsACorrectionTheTokenCanRead() async throws {
        let f = try APIFixture()
        let typo = try await f.ok("search.messages", ["query": "excepton"])
        #expect(typo["suggestion"] as? String == "exception")
        let right = try await f.ok("search.messages", ["query": "exception"])
        #expect(right["suggestion"] == nil)
        // The web UI's keystrokes leave it out, and ask once typing pauses.
        let typing = try await f.ok("search.messages", ["query": "excepton", "suggest": "false"])
        #expect(typing["suggestion"] == nil)

        // A word only a DM holds, misspelled: the outsider is not told it.
        let oracle = try SampleOracle(folder: TestSupport.sampleFolder)
        let visible = Set(
            oracle.conversations.filter { $0.kind == "channel" || $0.members.contains(APIFixture.outsider) }.map(\.id))
        let seen = Set(oracle.messages.filter { visible.contains($0.conversationID) }.flatMap(\.tokens))
        let hidden = try #require(
            oracle.messages.filter { $0.conversationID == APIFixture.dm }.flatMap(\.tokens)
                .filter { $0.count > 5 && !seen.contains($0) && $0.allSatisfy(\.isLetter) }.min())
        let misspelled = String(hidden.dropLast())
        let member = try f.token(for: APIFixture.dmMembers[0])
        let asMember = try await f.ok("search.messages", ["query": misspelled], token: member)
        #expect(asMember["suggestion"] as? String == hidden, "the DM's member is offered it")
        let outsider = try f.token(for: APIFixture.outsider)
        let asOutsider = try await f.ok("search.messages", ["query": misspelled], token: outsider)
        #expect(asOutsider["suggestion"] as? String != hidden)
    }

    @Test func tokensAreStoredHashedAndNeedAKnownUser() throws {
        let archive = try TestSupport.sampleArchive()
        let (token, record) = try archive.createToken(userID: APIFixture.outsider, isAdmin: true, label: "ci")
        #expect(token.hasPrefix("xoxp-slackindex-") && token.count >= "xoxp-slackindex-".count + 32)
        #expect(token.dropFirst("xoxp-slackindex-".count).allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) })
        #expect(try archive.verifyToken(token) == record)
        #expect(try archive.verifyToken(token + "x") == nil)
        #expect(try archive.tokens() == [record])
        let second = try archive.createToken(userID: APIFixture.outsider).token
        #expect(second != token)
        // Only hashes are stored: the secret is in neither the database nor its WAL.
        for suffix in ["", "-wal"] {
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: archive.path + suffix))) ?? Data()
            #expect(bytes.range(of: Data(token.utf8)) == nil && bytes.range(of: Data(second.utf8)) == nil)
        }
        #expect(throws: TokenError.self) { try archive.createToken(userID: "U_NOT_THERE") }
        #expect(throws: TokenError.self) { try archive.revokeToken(id: 999) }
        try archive.revokeToken(id: record.id)
        #expect(try archive.verifyToken(token) == nil)
        #expect(try archive.tokens().count == 1)
    }
}
