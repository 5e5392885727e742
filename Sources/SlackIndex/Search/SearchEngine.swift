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
    /// Hits ranked before the ones returned (a later page): ordered, but neither read nor snippeted.
    public var offset = 0

    /// `offset + limit`: how many hits are ranked (saturating, never negative).
    var ranked: Int {
        let (sum, overflow) = max(0, limit).addingReportingOverflow(max(0, offset))
        return overflow ? Int.max : sum
    }
    /// The user's time zone: dates in `before:`/`on:`/… are days there.
    public var timeZone: TimeZone = .current
    /// Who `me` is (`from:me`): a user id or handle.
    public var me: String?
    /// How many of the newest matches relevance ranking considers at most (bounds very common words).
    public var candidateWindow = 500
    /// Today, for `today`/`yesterday` and month names.
    public var now = Date()
    /// Conversation row ids hits must be in (an API token's visible conversations, a workspace's: `restrict(to:)`);
    /// nil for all.
    public var allowedConversations: Set<Int64>?
    /// Words also match their English variants (`deploy` finds `deployed`, `deploying`), as Slack's search does;
    /// `"quoted"` words never do. Off by default in the library (every word matches exactly, as a program
    /// expects); `search`, `serve` and `bench search` turn it on.
    public var wordVariants = false
    /// How much a variant-only match counts against the exact word in relevance (0…1, default 0.2).
    public var variantWeight = 0.2
    /// Look for likelier spellings ("did you mean") when a search finds (almost) nothing: a few ms per rare word.
    /// Off by default in the library; `search` turns it on.
    public var suggest = false
    /// Also count the matches (`SearchResults.total`), stopping at this many; nil counts nothing, `Int.max` all.
    /// The count comes from the search already prepared: nothing is parsed, resolved or compiled again.
    public var countCap: Int?
    /// Past this many matches, take the index's estimate of the count where it has one (PostgreSQL's statistics;
    /// `SearchResults.totalIsEstimate`) instead of counting on: an exact count of a common word visits every match
    /// (0.6 s for `the` at 1M on PostgreSQL). Nil counts exactly, as `countCap` says.
    public var estimateCountsAbove: Int?

    public init() {}

    /// Narrows the conversations hits may be in to `conversations` (a workspace's, `WorkspaceFilter`), on top of
    /// those already allowed (a token's): both must hold a hit's conversation.
    package mutating func restrict(to conversations: Set<Int64>) {
        allowedConversations = allowedConversations.map { $0.intersection(conversations) } ?? conversations
    }
}

/// What a search found, with notes on what was ignored or reinterpreted.
public struct SearchResults: Sendable {
    public var hits: [SearchHit]
    /// Sentences for the user (stderr): ignored syntax, bounded ranking.
    public var notes: [String]
    /// True when relevance was ranked among the newest `candidateWindow` matches only.
    public var windowed: Bool
    /// How many messages match, up to `SearchOptions.countCap`, counted by the same prepared search as the hits;
    /// nil when the options asked for no count.
    public var total: Int?
    /// True when `total` is the index's estimate (`SearchOptions.estimateCountsAbove`), not a count.
    public var totalIsEstimate = false
    /// "Did you mean": likelier spellings of query words the archive (almost) never holds, best first; only when
    /// the search found at most `SearchEngine.rareWordMessages` hits.
    public var suggestions: [WordSuggestion] = []
}

/// Why a search cannot run; `description` is what the user sees.
public enum SearchError: Error, CustomStringConvertible, Sendable {
    /// No user has that handle, name or id; `closest` are the nearest handles (for "did you mean").
    case unknownUser(String, closest: [String] = [])
    case ambiguousUser(String, candidates: [String])
    /// No conversation has that name or id; `closest` are the nearest names.
    case unknownConversation(String, closest: [String] = [])
    case ambiguousConversation(String, candidates: [String])
    case meUnknown
    case nothingToSearch(String)

    public var description: String {
        switch self {
        case .unknownUser(let name, let closest):
            "No user called '\(name)' in the archive (tried handle, display name, real name and id)"
                + (closest.isEmpty ? "." : "; did you mean \(closest.joined(separator: ", "))?")
        case .ambiguousUser(let name, let candidates):
            "'\(name)' matches several users: \(candidates.joined(separator: ", ")). Use one of their handles or ids."
        case .unknownConversation(let name, let closest):
            "No conversation called '\(name)' in the archive"
                + (closest.isEmpty ? "." : "; did you mean \(closest.joined(separator: ", "))?")
        case .ambiguousConversation(let name, let candidates):
            "'\(name)' matches several conversations: \(candidates.joined(separator: ", ")). Use one of their ids"
                + (candidates.contains { $0.contains("/#") } ? " or the workspace/#name shown." : ".")
        case .meUnknown:
            "'me' needs to know who you are: set SearchOptions.me to your handle or user id."
        case .nothingToSearch(let text):
            "Nothing to search for in '\(text)': give a word, a \"phrase\" or a filter such as in:#general."
        }
    }
}

/// The local query engine: parses Slack's syntax, resolves names, picks a plan, ranks and builds snippets.
public struct SearchEngine: Sendable {
    /// The roles a search needs: the index, names, the archive's time span, and the import sink that stores a
    /// remote's hits (`--save-remote`).
    package let archive: any ArchiveStore

    public init(archive: Archive) {
        self.archive = archive.store
    }

    package init(store: any ArchiveStore) {
        self.archive = store
    }

    /// Parses and runs a query.
    ///
    /// - Throws: `SearchError` for names that match no one or several, or a query with nothing in it.
    /// - Complexity: bounded by `options.candidateWindow` matches for words, whatever their frequency.
    public func search(_ text: String, options: SearchOptions = SearchOptions()) throws -> SearchResults {
        try search(parse(text, options: options), text: text, options: options)
    }

    /// Parses `text` as Slack's query syntax, with dates in the options' time zone.
    package func parse(_ text: String, options: SearchOptions) -> SearchQuery {
        QueryParser.parse(text, today: Day.today(in: options.timeZone, now: options.now))
    }

    /// Parses `text` with filters given apart from it (`("in", "general")`, as `search --in general` and the MCP
    /// tool's arguments give them) added as filters, not turned back into text; a value the filter cannot take is
    /// searched the way the query would search `name:value`, with its note.
    ///
    /// - Complexity: O(n) in the text and the filters.
    package func parse(_ text: String, filters: [(name: String, value: String)], options: SearchOptions) -> SearchQuery {
        var parsed = parse(text, options: options)
        let today = Day.today(in: options.timeZone, now: options.now)
        for (name, value) in filters {
            if let filter = QueryParser.filter(name, value: value, today: today) {
                parsed.filters.append(filter)
            } else {
                let quoted =
                    value.contains(where: \.isWhitespace)
                    ? "\"\(value.replacingOccurrences(of: "\"", with: ""))\"" : value
                let fallback = parse("\(name):\(quoted)", options: options)
                parsed.terms += fallback.terms
                parsed.filters += fallback.filters
                parsed.notes += fallback.notes
            }
        }
        return parsed
    }

    /// Runs a parsed query; with (almost) no hits, also looks for likelier spellings of its words.
    package func search(_ query: SearchQuery, text: String, options: SearchOptions) throws -> SearchResults {
        var results = try searchOnly(query, text: text, options: options)
        if options.suggest, results.hits.count <= SearchEngine.rareWordMessages {
            results.suggestions = try suggestions(for: query, variants: options.wordVariants)
        }
        if results.hits.isEmpty, let note = try outsideTheArchive(query, timeZone: options.timeZone) {
            results.notes.append(note)
        }
        return results
    }

    /// When a query's dates lie wholly before or after the archive's messages, says so with the archive's span
    /// (issue 55: `during:may` is the latest May, which the archive may not reach, and found nothing unexplained).
    private func outsideTheArchive(_ query: SearchQuery, timeZone: TimeZone) throws -> String? {
        let bounds = query.timeBounds(in: timeZone)
        guard bounds.lower != nil || bounds.upper != nil, !bounds.isEmpty, let span = try archive.messageSpan() else {
            return nil
        }
        let after = bounds.lower.map { $0 > span.last } ?? false
        guard after || bounds.upper.map({ $0 <= span.first }) == true else { return nil }
        func day(_ key: Int64) -> Day { Day.today(in: timeZone, now: Date(timeIntervalSince1970: Double(key) / 1e6)) }
        return "The dates asked for lie \(after ? "after" : "before") the archive's messages, which run from "
            + "\(day(span.first)) to \(day(span.last)). A month or weekday name alone means the latest one; "
            + "add a year for another (during:\"may 2024\")."
    }

    /// Hits whose snippet shows no match: when an attached text file's words matched (`FileText`), the snippet
    /// of that file's text, and its name.
    ///
    /// - Complexity: one read for the hits without a match, and O(256 KiB) per file of theirs with text.
    private func inAttachedFiles(_ hits: [SearchHit], snippets: SnippetBuilder) throws -> [SearchHit] {
        let unmatched = hits.filter { !Highlight.isMarked($0.snippet) }.map(\.message.rowID)
        guard !unmatched.isEmpty else { return hits }
        let files = try archive.indexedFileTexts(messageIDs: unmatched)
        guard !files.isEmpty else { return hits }
        let store = FileBlobs(archivePath: archive.path)
        return hits.map { hit in
            guard let attached = files[hit.message.rowID], !Highlight.isMarked(hit.snippet) else { return hit }
            for file in attached {
                guard let text = FileText.read(file.blob, in: store) else { continue }
                let snippet = snippets.snippet(text)
                guard Highlight.isMarked(snippet) else { continue }
                var found = hit
                found.snippet = snippet
                found.matchedFile = file.name ?? file.id
                return found
            }
            return hit
        }
    }

    /// Runs a parsed query: resolved and prepared once, its hits (and count, when asked) from that preparation.
    private func searchOnly(_ query: SearchQuery, text: String, options: SearchOptions) throws -> SearchResults {
        guard !query.isEmpty else { throw SearchError.nothingToSearch(text) }
        var notes = query.notes
        guard let prepared = try prepare(query, text: text, options: options, notes: &notes) else {
            return SearchResults(hits: [], notes: notes, windowed: false, total: options.countCap.map { _ in 0 })
        }
        notes += prepared.notes
        let order: SearchOrder =
            switch options.sort {
            case .relevance: .relevance(window: options.candidateWindow)
            case .newest: .newest
            case .oldest: .oldest
            }
        let ranked = try prepared.hits(order: order, offset: options.offset, limit: options.limit)
        if let window = ranked.window {
            notes.append(
                "More than \(window) messages match; ranked the newest \(window) by relevance "
                    + "(add words or filters, or sort by date).")
        }
        let hits: [SearchHit]
        if query.terms.contains(where: { !$0.negated }) {
            let snippets = SnippetBuilder(terms: query.terms, variants: options.wordVariants)
            hits = try inAttachedFiles(
                ranked.hits.map { SearchHit(message: $0.message, snippet: snippets.snippet($0.message.plainText), score: $0.score) },
                snippets: snippets)
        } else {
            hits = ranked.hits.map { SearchHit(message: $0.message, snippet: $0.message.plainText, score: $0.score) }
        }
        let (total, estimated) = try Self.count(prepared, options: options, known: ranked.matches)
        var results = SearchResults(hits: hits, notes: notes, windowed: ranked.window != nil, total: total)
        results.totalIsEstimate = estimated
        return results
    }

    /// The matches counted as `options` asks: up to `countCap`, or past `estimateCountsAbove` the index's
    /// estimate (at least what was counted) where it has one. `known`: every match's count, when the hits' walk
    /// saw them all (`RankedHits.matches`): then nothing is walked again. A rare phrase of a common word walks the
    /// rarer word's whole doclist to find few matches (`"addition the"` on 10M messages: 47,518 documents of
    /// `addition` for 66 matches, ~70 ms), and the count walked it a second time.
    private static func count(_ prepared: any PreparedSearch, options: SearchOptions, known: Int? = nil) throws
        -> (Int?, Bool)
    {
        guard let cap = options.countCap else { return (nil, false) }
        let limit = cap == Int.max ? nil : cap
        if let known { return (limit.map { min($0, known) } ?? known, false) }
        guard let above = options.estimateCountsAbove, limit.map({ $0 > above }) ?? true, prepared.estimatesCounts else {
            return (try prepared.count(cap: limit), false)
        }
        // Counted first: a rare word costs no estimate.
        let counted = try prepared.count(cap: above + 1)
        guard counted > above else { return (counted, false) }
        guard let estimate = try prepared.estimatedCount() else { return (try prepared.count(cap: limit), false) }
        return (max(counted, limit.map { min(estimate, $0) } ?? estimate), true)
    }

    /// The query resolved and prepared by the index; nil when nothing can match (contradictory dates, a filter that
    /// names nothing, words that are only punctuation).
    ///
    /// - Throws: `SearchError.nothingToSearch` when only unsearchable exclusions are left.
    private func prepare(_ query: SearchQuery, text: String, options: SearchOptions, notes: inout [String]) throws
        -> (any PreparedSearch)?
    {
        guard let resolved = try resolve(query, options: options, notes: &notes) else { return nil }
        if resolved.words.isEmpty {
            // Words were given but none is searchable (punctuation only): nothing can match.
            if query.terms.contains(where: { !$0.negated }) { return nil }
            if resolved.excluded.isEmpty && query.filters.isEmpty { throw SearchError.nothingToSearch(text) }
        }
        return try archive.prepare(resolved)
    }

    /// How many messages match (exact, not windowed).
    public func count(_ text: String, options: SearchOptions = SearchOptions()) throws -> (Int, [String]) {
        try count(parse(text, options: options), text: text, options: options)
    }

    /// How many messages a parsed query matches (exact, not windowed).
    /// - Parameter cap: stop counting at this many (the answer is then `cap`); nil counts them all.
    package func count(_ query: SearchQuery, text: String, options: SearchOptions, cap: Int? = nil) throws
        -> (Int, [String])
    {
        guard !query.isEmpty else { throw SearchError.nothingToSearch(text) }
        var notes = query.notes
        guard let prepared = try prepare(query, text: text, options: options, notes: &notes) else {
            return (0, notes)
        }
        return (try prepared.count(cap: cap), notes + prepared.notes)
    }

    /// Resolves names to ids. Returns nil when the filters cannot match anything (contradictory dates).
    /// Over 60 lines: one switch over the filter kinds, then the token's visibility; each case is two lines.
    func resolve(_ query: SearchQuery, options: SearchOptions) throws -> ResolvedSearch? {
        var notes: [String] = []
        return try resolve(query, options: options, notes: &notes)
    }

    /// `resolve`, adding to `notes` why a filter matches nothing (an `in:@person` with whom there is no DM).
    func resolve(_ query: SearchQuery, options: SearchOptions, notes: inout [String]) throws -> ResolvedSearch? {
        var resolved = ResolvedSearch()
        resolved.wordVariants = options.wordVariants
        resolved.variantWeight = min(1, max(0, options.variantWeight.isFinite ? options.variantWeight : 0.2))
        // Terms without a letter or digit would match nothing: they are left out.
        let searchable = query.terms.filter { IndexText.isSearchable($0.text) }
        resolved.words = searchable.filter { !$0.negated }
        resolved.excluded = searchable.filter(\.negated)
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
                if negated {
                    resolved.notInConversations += ids
                } else if ids.isEmpty {
                    // A filter that names no conversation matches nothing; dropping it searched everything
                    // (issue 47's D2: `in:@paul.wilson` without a DM counted the whole archive).
                    if case .dmWith(let user) = ref {
                        notes.append(
                            "No direct message with \(user.display) is in the archive: nothing matches "
                                + "in:@\(user.display).")
                    }
                    return nil
                } else {
                    inConversations += ids
                }
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
                case .fileType(let kind): resolved.fileKinds.append(kind)
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

    /// The id of the user `name` names, as `from:` reads it: a handle (with or without `@`), display or real name.
    ///
    /// - Throws: `SearchError.unknownUser` with the closest handles, `SearchError.ambiguousUser`.
    package func userID(named name: String) throws -> String {
        try userID(.handle(name), options: SearchOptions())
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
            var users = try archive.users(matching: bare)
            // Else the start of a name, when only one user's handle, display name or real name starts so.
            if users.isEmpty { users = try archive.users(withNamePrefix: bare) }
            if users.isEmpty { throw SearchError.unknownUser(bare, closest: try archive.closestUserHandles(to: bare)) }
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
            var found = try archive.conversations(matching: name)
            // Else the start of a name, when it fits one conversation only.
            if found.isEmpty { found = try archive.conversations(withNamePrefix: name) }
            if found.isEmpty {
                throw SearchError.unknownConversation(name, closest: try archive.closestConversationNames(to: name))
            }
            // A name several workspaces share is the one the search may read (`--workspace`, a token's view).
            if found.count > 1, let allowed = options.allowedConversations {
                let kept = found.filter { allowed.contains($0.rowID) }
                if kept.count == 1 { found = kept }
            }
            if found.count > 1 {
                throw SearchError.ambiguousConversation(
                    name, candidates: found.map { "\($0.displayName) (\($0.id))" })
            }
            return found.map(\.rowID)
        }
    }
}
