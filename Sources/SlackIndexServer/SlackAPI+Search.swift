import Foundation
import SlackIndex

extension SlackAPI {
    /// `search.messages`: Slack's query syntax through the archive's `SearchEngine`, over the conversations the
    /// token sees only.
    ///
    /// `count` (default 20, at most 100) and `page` (from 1) page the results; `sort` is `score` (relevance) or
    /// `timestamp` with `sort_dir` `desc`/`asc`; `highlight=true` gives the engine's snippet with matches in
    /// U+E000 … U+E001 as `text`. `from:me` is the token's user and dates are days in that user's time zone.
    /// Names that match no one (or a conversation the token cannot see) give no results, not an error.
    /// - Complexity: ranking `page × count` candidates (at most 10,000), reading `count` messages, plus an exact
    ///   count of matches.
    /// Over 60 lines: Slack's answer shape (`messages.matches`, `paging`, `pagination`, `total`) is built in one
    /// place so that it can be read against Slack's documentation field by field.
    func searchMessages(_ request: APIRequest) throws -> [(String, JSONValue)] {
        let query = request.string("query")?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard !query.isEmpty else { throw APIFailure(code: "no_query") }
        let count = try request.limit(default: 20, maximum: 100, name: "count")
        // Slack caps `page` at 100; the cap also keeps `page × count` far from overflow and bounds the work.
        let page = max(1, try request.int("page") ?? 1)
        guard page <= 100 else { throw APIFailure.invalid("page", "must be at most 100") }
        let byTime = request.string("sort") == "timestamp"
        let ascending = request.string("sort_dir")?.lowercased() == "asc"
        let me = try archive.archivedUser(id: request.token.userID)
        var options = SearchOptions()
        options.sort = byTime ? (ascending ? .oldest : .newest) : .relevance
        // Only the requested page is read and snippeted; the pages before it are ranked, not built.
        options.limit = count
        options.offset = (page - 1) * count
        options.candidateWindow = max(options.candidateWindow, page * count)
        options.me = request.token.userID
        options.timeZone = me?.timeZone.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC") ?? .current
        options.allowedConversations = try archive.visibleConversationRowIDs(to: request.token)
        // A word also finds its English variants, as in Slack's own search, when the client asks (`variants=true`,
        // slackindex's own parameter; the web UI sends it): SDK clients get exact words, as before.
        options.wordVariants = request.string("variants") == "true"

        var hits: [SearchHit] = []
        var total = 0
        do {
            hits = try engine.search(query, options: options).hits
            total = try engine.count(query, options: options).0
        } catch SearchError.nothingToSearch(_) {
            throw APIFailure(code: "no_query")
        } catch is SearchError {
            // Unknown or ambiguous names: no results (an ambiguity would name conversations the token may not see).
        }
        let pageHits = Array(hits.prefix(count))
        if !hits.isEmpty { total = max(total, options.offset + hits.count) }

        let team = try archive.workspace()?.teamID
        let users = try archive.archivedUsers(ids: Set(pageHits.compactMap(\.message.userID)))
        var conversations: [String: Conversation] = [:]
        for id in Set(pageHits.map(\.message.conversationID)) {
            conversations[id] = try archive.visibleConversation(id: id, to: request.token)?.conversation
        }
        let highlight = request.bool("highlight")
        let matches: [JSONValue] = pageHits.compactMap { hit in
            let message = hit.message
            guard let conversation = conversations[message.conversationID] else { return nil }
            let user = message.userID.flatMap { users[$0] }
            let score = byTime ? max(0, -hit.score) : hit.score
            var members: [(String, JSONValue)] = [
                ("iid", .string(UUID().uuidString.lowercased())),
                ("team", .string(team ?? user?.teamID)),
                ("type", .string("message")),
                ("ts", .string(message.ts)),
                ("channel", SlackAPI.searchChannel(conversation, for: request.token)),
                ("user", .string(message.userID)),
                ("username", .string(user?.user.handle ?? message.user ?? "")),
                ("text", .string(highlight ? hit.snippet : message.text)),
                ("permalink", .string(message.permalink ?? SlackAPI.fallbackPermalink(message))),
                ("score", .double(score.isFinite ? score : 0)),
            ]
            if let thread = message.threadTS { members.append(("thread_ts", .string(thread))) }
            return .object(members)
        }
        let pages = total == 0 ? 0 : (total + count - 1) / count
        let first = total == 0 ? 0 : (page - 1) * count + 1
        let last = min(page * count, total)
        return [
            ("query", .string(query)),
            (
                "messages",
                .object([
                    ("total", .int(total)),
                    ("matches", .array(matches)),
                    (
                        "paging",
                        .object([("count", .int(count)), ("page", .int(page)), ("pages", .int(pages)), ("total", .int(total))])
                    ),
                    (
                        "pagination",
                        .object([
                            ("total_count", .int(total)), ("page", .int(page)), ("per_page", .int(count)),
                            ("page_count", .int(pages)), ("first", .int(first)), ("last", .int(last)),
                        ])
                    ),
                ])
            ),
        ]
    }

    /// The `channel` of a search match: id, name (a DM's other member), privacy.
    static func searchChannel(_ c: Conversation, for token: APIToken) -> JSONValue {
        let name = c.kind == .dm ? (c.members.first { $0 != token.userID } ?? c.members.first ?? c.name) : c.name
        return .object([
            ("id", .string(c.id)),
            ("is_channel", .bool(c.kind == .channel || c.kind == .private)),
            ("is_group", .bool(c.kind == .mpim)),
            ("is_im", .bool(c.kind == .dm)),
            ("is_mpim", .bool(c.kind == .mpim)),
            ("is_private", .bool(c.kind != .channel)),
            ("name", .string(name)),
        ])
    }
}
