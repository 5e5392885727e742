import Foundation
import SlackIndex

extension SlackAPI {
    /// `search.messages`: Slack's query syntax through the archive's `SearchEngine`, over the conversations the
    /// token sees only.
    ///
    /// `count` (default 20, at most 100) and `page` (from 1) page the results; `sort` is `score` (relevance) or
    /// `timestamp` with `sort_dir` `desc`/`asc`; `team_id` searches one workspace's conversations (`team_not_found`
    /// for a team the archive does not hold); `highlight=true` gives the engine's snippet with matches in
    /// U+E000 … U+E001 as `text`. `from:me` is the token's user and dates are days in that user's time zone.
    /// Names that match no one (or a conversation the token cannot see) give no results, not an error.
    /// `exact_total=false` (slackindex's own) leaves the exact count out, which is most of the time a common word
    /// takes: `total` is then the matches up to this page plus one when there are more, and `messages` carries
    /// `"total_exact": false`; `slackindex.count` gives the count. The web UI shows the results first that way.
    /// Past `SlackAPIConfiguration.exactCountsUpTo` matches, `total` is the index's estimate where it has one
    /// (PostgreSQL), also with `"total_exact": false`: no page past 10,000 hits can be asked for anyway.
    /// A first page of at most `SearchEngine.rareWordMessages` hits carries `suggestion` ("did you mean") when a
    /// corrected query finds messages, unless `suggest=false`.
    /// With a remote (`SlackAPIConfiguration.remote`) the first page is merged with the remote's: see
    /// `mergedSearch`.
    /// - Complexity: ranking `page × count` candidates (at most 10,000), reading `count` messages, plus (unless
    ///   `exact_total=false`) an exact count of matches.
    func searchMessages(_ request: APIRequest) throws -> [(String, JSONValue)] {
        let page = try SearchPage(request, options: try searchOptions(request))
        let found = try localHits(page)
        // `suggest=false` (slackindex's own): the web UI's search as you type leaves "did you mean" (60–70 ms over
        // the vocabulary of 1M messages for a partial word) to a request of its own once typing pauses.
        let suggestion = request.bool("suggest", default: true) ? try self.suggestion(page, hits: found.hits.count) : nil
        return try searchAnswer(page, hits: found, remote: nil)
            + (suggestion.map { [("suggestion", .string($0))] } ?? [])
    }

    /// "Did you mean" for a first page of (almost) no hits (slackindex's own `suggestion`, the query with the
    /// terminal's correction): offered only when the corrected query finds a message the token may read, since
    /// the spellings come from the whole archive's words.
    /// - Complexity: the suggestions' vocabulary lookups (a few ms a word), then one search of one hit.
    func suggestion(_ page: SearchPage, hits: Int) throws -> String? {
        guard page.number == 1, hits <= SearchEngine.rareWordMessages else { return nil }
        var options = page.options
        options.offset = 0
        let parsed = engine.parse(page.query, options: options)
        let suggestions = try engine.suggestions(for: parsed, variants: options.wordVariants)
        guard !suggestions.isEmpty else { return nil }
        let corrected = engine.corrected(parsed, with: suggestions)
        options.limit = 1
        let visible = try? engine.search(corrected, text: corrected.slackSyntax, options: options).hits.isEmpty == false
        return visible == true ? corrected.slackSyntax : nil
    }

    /// A page's hits and the number of matches: exact (past `SlackAPIConfiguration.exactCountsUpTo`, the index's
    /// estimate where it has one: `estimated`), or a lower bound without `exact_total`.
    struct LocalHits {
        var hits: [SearchHit]
        var total: Int
        var estimated = false
    }

    /// The archive's hits for a page and the number of matches.
    func localHits(_ page: SearchPage) throws -> LocalHits {
        var hits: [SearchHit] = []
        var total = 0
        var estimated = false
        do {
            var options = page.options
            if page.exact {
                options.countCap = Int.max
                options.estimateCountsAbove = configuration.exactCountsUpTo
            }
            let results = try engine.search(page.query, options: options)
            hits = results.hits
            total = results.total ?? 0
            estimated = results.totalIsEstimate
        } catch SearchError.nothingToSearch(_) {
            throw APIFailure(code: "no_query")
        } catch is SearchError {
            // Unknown or ambiguous names: no results (an ambiguity would name conversations the token may not see).
        }
        if !hits.isEmpty { total = max(total, page.options.offset + hits.count) }
        return LocalHits(hits: Array(hits.prefix(page.count)), total: total, estimated: estimated)
    }

    /// Slack's answer for a page of hits: `messages.matches`, `paging`, `pagination`, `total`, built in one place
    /// so that it can be read against Slack's documentation field by field. With a remote, each match carries
    /// `source` (`local`, `remote` or `both`), and `remote_problem` says why the remote's hits are missing.
    func searchAnswer(_ page: SearchPage, hits found: LocalHits, remote: RemoteAnswer?) throws -> [(String, JSONValue)] {
        let (pageHits, total) = (found.hits, found.total)
        let team = try archive.workspace()?.teamID
        let users = try archive.archivedUsers(ids: Set(pageHits.compactMap(\.message.userID)))
        var conversations: [String: Conversation] = [:]
        for id in Set(pageHits.map(\.message.conversationID)) {
            // A remote's hit outside the conversations searched (the token's, of `team_id`'s workspace) is left out.
            guard let conversation = try archive.visibleConversation(id: id, to: page.token)?.conversation,
                page.options.allowedConversations?.contains(conversation.rowID) ?? true
            else { continue }
            conversations[id] = conversation
        }
        let matches: [JSONValue] = pageHits.enumerated().compactMap { index, hit in
            guard let conversation = conversations[hit.message.conversationID] else { return nil }
            return searchMatch(hit, rank: page.options.offset + index + 1, in: conversation,
                user: hit.message.userID.flatMap { users[$0] }, team: team, page: page, marked: remote != nil)
        }
        let count = page.count
        let pages = total == 0 ? 0 : (total + count - 1) / count
        let first = total == 0 ? 0 : (page.number - 1) * count + 1
        let last = min(page.number * count, total)
        let estimate: [(String, JSONValue)] = page.exact && !found.estimated ? [] : [("total_exact", .bool(false))]
        let problem: [(String, JSONValue)] = remote?.problem.map { [("remote_problem", .string($0))] } ?? []
        return [
            ("query", .string(page.query)),
            (
                "messages",
                .object(estimate + [
                    ("total", .int(total)),
                    ("matches", .array(matches)),
                    (
                        "paging",
                        .object([("count", .int(count)), ("page", .int(page.number)), ("pages", .int(pages)), ("total", .int(total))])
                    ),
                    (
                        "pagination",
                        .object([
                            ("total_count", .int(total)), ("page", .int(page.number)), ("per_page", .int(count)),
                            ("page_count", .int(pages)), ("first", .int(first)), ("last", .int(last)),
                        ])
                    ),
                ])
            ),
        ] + problem
    }

    /// One match of `search.messages`, the `rank`-th of the results (from 1).
    ///
    /// Its `score` is `1 / rank` (1, 0.5, 0.333…), whatever the sort: the engine's own score (bm25) weighs words by
    /// how often they occur in the whole archive, conversations the token cannot read included, so exposing it
    /// would let a token learn what hidden conversations say (a score falls when hidden messages add a word).
    private func searchMatch(
        _ hit: SearchHit, rank: Int, in conversation: Conversation, user: ArchivedUser?, team: String?,
        page: SearchPage, marked: Bool
    ) -> JSONValue {
        let message = hit.message
        var members: [(String, JSONValue)] = [
            ("iid", .string(UUID().uuidString.lowercased())),
            ("team", .string(conversation.workspaceID ?? team ?? user?.teamID)),
            ("type", .string("message")),
            ("ts", .string(message.ts)),
            ("channel", SlackAPI.searchChannel(conversation, for: page.token)),
            ("user", .string(message.userID)),
            ("username", .string(user?.user.handle ?? message.user ?? "")),
            ("text", .string(page.highlight ? hit.snippet : message.text)),
            ("permalink", .string(hit.remotePermalink ?? message.permalink ?? SlackAPI.fallbackPermalink(message))),
            ("score", .double(1 / Double(rank))),
        ]
        if let thread = message.threadTS { members.append(("thread_ts", .string(thread))) }
        if marked { members.append(("source", .string(hit.source.rawValue))) }
        return .object(members)
    }

    /// `slackindex.count`: how many messages `query` matches among those the token sees, exactly as
    /// `search.messages` counts them (`{"total": N}`). Unknown names count 0.
    ///
    /// - Complexity: O(matches) through the index (plus each match's message row when a filter other than `in:`
    ///   over small conversations needs it), as `Archive.searchCount` chooses.
    func searchCount(_ request: APIRequest) throws -> [(String, JSONValue)] {
        let query = request.string("query")?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard !query.isEmpty else { throw APIFailure(code: "no_query") }
        do {
            return [("query", .string(query)), ("total", .int(try engine.count(query, options: searchOptions(request)).0))]
        } catch SearchError.nothingToSearch(_) {
            throw APIFailure(code: "no_query")
        } catch is SearchError {
            return [("query", .string(query)), ("total", .int(0))]
        }
    }

    /// What every search of a token shares: `from:me` is the token's user, dates are days in that user's time
    /// zone (UTC when unknown), and only the conversations it sees are searched (of the `team_id` workspace only,
    /// when given).
    func searchOptions(_ request: APIRequest) throws -> SearchOptions {
        let me = try archive.archivedUser(id: request.token.userID)
        var options = SearchOptions()
        options.me = request.token.userID
        options.timeZone = me?.timeZone.flatMap(TimeZone.init(identifier:)) ?? TimeZone(identifier: "UTC") ?? .current
        options.allowedConversations = try archive.visibleConversationRowIDs(to: request.token)
        if let workspace = try workspaceFilter(request) { options.restrict(to: workspace.conversations) }
        // A word also finds its English variants, as in Slack's own search, when the client asks (`variants=true`,
        // slackindex's own parameter; the web UI sends it): SDK clients get exact words, as before.
        options.wordVariants = request.string("variants") == "true"
        return options
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

/// A `search.messages` request read and checked: the query, the page asked for, and the search options of the
/// token (`from:me`, time zone, the conversations it sees).
struct SearchPage: Sendable {
    var query: String
    var token: APIToken
    /// Hits a page (`count`).
    var count: Int
    /// The page, from 1 (`page`, at most 100 as in Slack).
    var number: Int
    var exact: Bool
    var highlight: Bool
    /// The engine's options: this page's window (one hit more without the exact count, to tell whether there is
    /// a next page).
    var options: SearchOptions
}

extension SearchPage {
    /// - Parameter options: the token's (`SlackAPI.searchOptions`).
    init(_ request: APIRequest, options: SearchOptions) throws {
        query = request.string("query")?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard !query.isEmpty else { throw APIFailure(code: "no_query") }
        token = request.token
        count = try request.limit(default: 20, maximum: 100, name: "count")
        // Slack caps `page` at 100; the cap also keeps `page × count` far from overflow and bounds the work.
        number = max(1, try request.int("page") ?? 1)
        guard number <= 100 else { throw APIFailure.invalid("page", "must be at most 100") }
        exact = request.bool("exact_total", default: true)
        highlight = request.bool("highlight")
        self.options = options
        let byTime = request.string("sort") == "timestamp"
        let ascending = request.string("sort_dir")?.lowercased() == "asc"
        self.options.sort = byTime ? (ascending ? .oldest : .newest) : .relevance
        // Only the requested page is read and snippeted; the pages before it are ranked, not built.
        self.options.limit = exact ? count : count + 1
        self.options.offset = (number - 1) * count
        self.options.candidateWindow = max(options.candidateWindow, number * count + 1)
    }
}
