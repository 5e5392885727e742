import Foundation

/// How results are ordered.
public enum SearchSort: String, Sendable, CaseIterable {
    /// bm25 blended with recency; ties newest first.
    case relevance
    case newest
    case oldest
}

/// What a search needs besides the query text.
public struct SearchOptions: Sendable {
    public var sort: SearchSort = .relevance
    public var limit = 20
    /// The user's time zone: dates in `before:`/`on:`/… are days there.
    public var timeZone: TimeZone = .current
    /// Who `me` is (`from:me`): a user id or handle.
    public var me: String?
    /// How many of the newest matches relevance ranking considers at most (bounds very common words).
    public var candidateWindow = 500
    /// Today, for `today`/`yesterday` and month names.
    public var now = Date()
    /// Conversation row ids hits must be in (an API token's visible conversations); nil for all.
    public var allowedConversations: Set<Int64>?

    public init() {}
}

/// What a search found, with notes on what was ignored or reinterpreted.
public struct SearchResults: Sendable {
    public var hits: [SearchHit]
    /// Sentences for the user (stderr): ignored syntax, bounded ranking.
    public var notes: [String]
    /// True when relevance was ranked among the newest `candidateWindow` matches only.
    public var windowed: Bool
}

/// Why a search cannot run; `description` is what the user sees.
public enum SearchError: Error, CustomStringConvertible, Sendable {
    case unknownUser(String)
    case ambiguousUser(String, candidates: [String])
    case unknownConversation(String)
    case ambiguousConversation(String, candidates: [String])
    case meUnknown
    case nothingToSearch(String)

    public var description: String {
        switch self {
        case .unknownUser(let name):
            "No user called '\(name)' in the archive (tried handle, display name, real name and id)."
        case .ambiguousUser(let name, let candidates):
            "'\(name)' matches several users: \(candidates.joined(separator: ", ")). Use one of their handles or ids."
        case .unknownConversation(let name):
            "No conversation called '\(name)' in the archive. `slackindex stats` counts what is there."
        case .ambiguousConversation(let name, let candidates):
            "'\(name)' matches several conversations: \(candidates.joined(separator: ", ")). Use one of their ids."
        case .meUnknown:
            "'me' needs to know who you are: pass --me HANDLE, set SLACKINDEX_ME, or put {\"me\": \"HANDLE\"} in "
                + "~/.config/slackindex/config.json."
        case .nothingToSearch(let text):
            "Nothing to search for in '\(text)': give a word, a \"phrase\" or a filter such as in:#general."
        }
    }
}

/// The local query engine: parses Slack's syntax, resolves names, picks a plan, ranks and builds snippets.
public struct SearchEngine: Sendable {
    public let archive: Archive

    public init(archive: Archive) {
        self.archive = archive
    }

    /// Parses and runs a query.
    ///
    /// - Throws: `SearchError` for names that match no one or several, or a query with nothing in it.
    /// - Complexity: bounded by `options.candidateWindow` matches for words, whatever their frequency.
    public func search(_ text: String, options: SearchOptions = SearchOptions()) throws -> SearchResults {
        let query = QueryParser.parse(text, today: Day.today(in: options.timeZone, now: options.now))
        return try search(query, text: text, options: options)
    }

    /// Runs a parsed query.
    public func search(_ query: SearchQuery, text: String, options: SearchOptions) throws -> SearchResults {
        guard !query.isEmpty else { throw SearchError.nothingToSearch(text) }
        var notes = query.notes
        guard var resolved = try resolve(query, options: options) else {
            return SearchResults(hits: [], notes: notes, windowed: false)
        }
        resolved.positive = try expandedPositive(query, notes: &notes) ?? resolved.positive
        if let positive = resolved.positive, let negative = resolved.negative {
            // With words to match, FTS5's own NOT checks exclusions lazily, match by match; `NOT IN (subquery)`
            // would first collect every message holding the excluded word (~100 ms for a very common one).
            resolved.positive = "(\(positive)) NOT (\(negative))"
            resolved.negative = nil
        }
        if resolved.positive == nil {
            if query.terms.contains(where: { !$0.negated }) {
                // Words were given but none is searchable (punctuation only): nothing can match.
                return SearchResults(hits: [], notes: notes, windowed: false)
            }
            if resolved.negative == nil && query.filters.isEmpty {
                throw SearchError.nothingToSearch(text)
            }
            let hits = try archive.filterOnly(
                resolved, newestFirst: options.sort != .oldest, limit: max(0, options.limit))
            return SearchResults(hits: hits, notes: notes, windowed: false)
        }
        let snippets = SnippetBuilder(terms: query.terms)
        func hits(_ ids: [(Int64, Double)]) throws -> [SearchHit] {
            try archive.messages(ids: ids).map { message, score in
                SearchHit(message: message, snippet: snippets.snippet(message.plainText), score: score)
            }
        }
        switch options.sort {
        case .newest, .oldest:
            let candidates = try archive.searchCandidates(
                resolved, newestFirst: options.sort == .newest, limit: max(0, options.limit))
            return SearchResults(hits: try hits(candidates.map { ($0.sortKey, $0.bm25) }), notes: notes, windowed: false)
        case .relevance:
            // Filters make the index walk read each candidate's row: a smaller window keeps that bounded.
            let window = max(
                options.limit, resolved.hasRowFilters ? options.candidateWindow / 4 : options.candidateWindow)
            let candidates = try archive.searchCandidates(resolved, newestFirst: true, limit: window)
            let windowed = candidates.count >= window
            if windowed {
                notes.append(
                    "More than \(window) messages match; ranked the newest \(window) by relevance "
                        + "(add words or filters, or use --sort newest).")
            }
            let ranked = SearchEngine.rank(candidates).prefix(max(0, options.limit))
            return SearchResults(hits: try hits(ranked.map { ($0.sortKey, $0.score) }), notes: notes, windowed: windowed)
        }
    }

    /// The positive FTS expression with prefix terms replaced by an OR of the index's most frequent words with
    /// that prefix (at most `maxPrefixWords`; a note says when more exist). Nil when there is no prefix term.
    private func expandedPositive(_ query: SearchQuery, notes: inout [String]) throws -> String? {
        let positive = query.terms.filter { !$0.negated }
        guard positive.contains(where: { $0.kind == .prefix }) else { return nil }
        var parts: [String] = []
        for term in positive {
            let stem = term.text.lowercased()
            if term.kind == .prefix, stem.unicodeScalars.allSatisfy({ $0.isASCII && $0.properties.isAlphabetic || ("0"..."9").contains($0) }) {
                let (words, total) = try archive.prefixExpansion(stem, limit: SearchEngine.maxPrefixWords)
                if words.isEmpty { return "\"\u{1}nomatch\"" }  // no word has this prefix: nothing matches
                if total > words.count {
                    notes.append(
                        "\(term.text)* matches \(total) words; searched the \(words.count) most frequent of them.")
                }
                parts.append("(" + words.compactMap(FTSExpression.literal).joined(separator: " OR ") + ")")
            } else if let expression = FTSExpression.expression(for: term) {
                parts.append(expression)
            }
        }
        return parts.isEmpty ? nil : parts.joined(separator: " AND ")
    }

    /// How many words a prefix expands to at most.
    static let maxPrefixWords = 64

    /// How many messages match (exact, not windowed).
    public func count(_ text: String, options: SearchOptions = SearchOptions()) throws -> (Int, [String]) {
        let query = QueryParser.parse(text, today: Day.today(in: options.timeZone, now: options.now))
        guard !query.isEmpty else { throw SearchError.nothingToSearch(text) }
        guard let resolved = try resolve(query, options: options) else { return (0, query.notes) }
        if resolved.positive == nil && query.terms.contains(where: { !$0.negated }) { return (0, query.notes) }
        return (try archive.searchCount(resolved), query.notes)
    }

    /// Relevance: bm25 (more negative is better) scaled up for recent messages, newest first on ties.
    ///
    /// score = −bm25 × (1 + 0.5 × e^(−age / 180 days)), age measured from the newest candidate, so an old
    /// archive ranks the same today as on the day it was made.
    /// - Complexity: O(k log k).
    static func rank(_ candidates: [Archive.Candidate]) -> [(sortKey: Int64, score: Double)] {
        guard let newest = candidates.map(\.tsKey).max() else { return [] }
        let halfLife = 180.0 * 86_400 * 1_000_000
        return candidates.map { candidate -> (sortKey: Int64, score: Double) in
            let age = Double(newest - candidate.tsKey)
            let recency = exp(-age / halfLife)
            return (candidate.sortKey, -candidate.bm25 * (1 + 0.5 * recency))
        }.sorted { lhs, rhs in
            lhs.score != rhs.score ? lhs.score > rhs.score : lhs.sortKey > rhs.sortKey
        }
    }

    /// Resolves names to ids. Returns nil when the filters cannot match anything (contradictory dates).
    func resolve(_ query: SearchQuery, options: SearchOptions) throws -> ResolvedSearch? {
        var resolved = ResolvedSearch()
        let (positive, negative) = query.ftsMatch()
        resolved.positive = positive
        resolved.negative = negative
        let bounds = query.timeBounds(in: options.timeZone)
        if bounds.isEmpty { return nil }
        resolved.lower = bounds.lower
        resolved.upper = bounds.upper
        var inConversations: [Int64] = []
        var fromUsers: [String] = []
        for filter in query.filters {
            switch filter {
            case .inConversation(let ref, let negated):
                let ids = try conversationIDs(ref, options: options)
                if negated { resolved.notInConversations += ids } else { inConversations += ids }
            case .from(let ref, let negated):
                let id = try userID(ref, options: options)
                if negated { resolved.notFromUsers.append(id) } else { fromUsers.append(id) }
            case .to(let ref):
                let id = try userID(ref, options: options)
                resolved.toUsers.append((id, try archive.directConversations(of: id)))
            case .with(let ref):
                let id = try userID(ref, options: options)
                resolved.withUsers.append((id, try archive.directConversations(of: id)))
            case .has(let kind):
                switch kind {
                case .link: resolved.requiredFlags.insert(.hasLink)
                case .file: resolved.requiredFlags.insert(.hasFile)
                case .reaction: resolved.requiredFlags.insert(.hasReaction)
                case .pin: resolved.requiredFlags.insert(.pinned)
                case .emoji(let name): resolved.reactions.append(name)
                }
            case .isThread:
                resolved.inThread = true
            case .before, .after, .on, .during:
                break  // in timeBounds
            }
        }
        if !inConversations.isEmpty { resolved.inConversations = inConversations }
        if let allowed = options.allowedConversations {
            if !inConversations.isEmpty {
                let kept = inConversations.filter(allowed.contains)
                if kept.isEmpty { return nil }
                resolved.inConversations = kept
            } else {
                // The shorter list: usually the few conversations hidden from a token (NOT IN), not the many it
                // sees; none at all when it sees everything, so such a search runs exactly as an admin's.
                let all = try archive.conversationRowIDs()
                let hidden = all.subtracting(allowed)
                let visible = all.intersection(allowed)
                if visible.isEmpty { return nil }
                if hidden.count <= visible.count {
                    resolved.notInConversations = Array(Set(resolved.notInConversations).union(hidden)).sorted()
                } else {
                    resolved.inConversations = visible.sorted()
                }
            }
        }
        if !fromUsers.isEmpty { resolved.fromUsers = fromUsers }
        return resolved
    }

    private func userID(_ ref: SearchQuery.UserRef, options: SearchOptions) throws -> String {
        switch ref {
        case .id(let id):
            return id
        case .me:
            guard let me = options.me, !me.isEmpty else { throw SearchError.meUnknown }
            return try userID(.handle(me), options: options)
        case .handle(let name):
            let bare = name.hasPrefix("@") ? String(name.dropFirst()) : name
            let users = try archive.users(matching: bare)
            if users.isEmpty { throw SearchError.unknownUser(bare) }
            if users.count == 1 { return users[0].id }
            // An exact handle wins over display/real-name matches.
            let byHandle = users.filter { $0.handle.lowercased() == bare.lowercased() }
            if byHandle.count == 1 { return byHandle[0].id }
            throw SearchError.ambiguousUser(
                bare, candidates: users.map { "@\($0.handle) (\($0.realName ?? $0.bestName), \($0.id))" })
        }
    }

    private func conversationIDs(_ ref: SearchQuery.ConversationRef, options: SearchOptions) throws -> [Int64] {
        switch ref {
        case .dmWith(let user):
            let other = try userID(user, options: options)
            let me = try options.me.map { try userID(.handle($0), options: options) }
            return try archive.directMessages(with: other, me: me)
        case .id(let id), .name(let id):
            let name = id.hasPrefix("#") ? String(id.dropFirst()) : id
            let found = try archive.conversations(matching: name)
            if found.isEmpty { throw SearchError.unknownConversation(name) }
            if found.count > 1 {
                throw SearchError.ambiguousConversation(
                    name, candidates: found.map { "\($0.displayName) (\($0.id))" })
            }
            return found.map(\.rowID)
        }
    }
}
