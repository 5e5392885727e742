import Foundation
import PostgresNIO

/// A search compiled for PostgreSQL once: its `tsquery` text (from the C tokenizer's tokens), the filter
/// conditions and their bindings, shared by its hits and its count.
///
/// The strategy: the GIN index finds the matches; date orders walk them by `id` (time-ordered, as on SQLite) and
/// stop after `limit`; relevance ranks the newest `window` matches only with `ts_rank` scaled for recency (the
/// SQLite index's formula with `ts_rank` for bm25), never every match of a common word. Counts stop at the cap.
struct PostgresPreparedSearch: PreparedSearch {
    let archive: PostgresArchive
    let search: ResolvedSearch
    /// The query every hit matches (exclusions inside it), nil for a search without words.
    let query: String?
    /// The conditions after `WHERE` over `message m`, with `$n` placeholders numbered from 1 (`$1`: `query`).
    let conditions: String
    let binds: PostgresBindings
    /// `binds` with every word of `query` in its typed form only (`Relevance.window`); nil when that is `query`.
    let typedBinds: PostgresBindings?
    let notes: [String] = []

    /// Relevance ranks at most this share of the window when filters read each candidate's row (as SQLite).
    private static let rowFilterWindowShare = 4

    init(archive: PostgresArchive, search: ResolvedSearch) {
        self.archive = archive
        self.search = search
        let query = PostgresTokens.query(search)
        self.query = query
        (conditions, binds) = Self.compile(search, query: query)
        let typed = PostgresTokens.query(search, typedForms: true)
        typedBinds = typed == query ? nil : Self.compile(search, query: typed).binds
    }

    /// The conditions of `search` with `query` for its words, and their bindings.
    private static func compile(_ search: ResolvedSearch, query: String?) -> (conditions: String, binds: PostgresBindings) {
        var binds = PostgresBindings()
        var parts = ["NOT m.is_deleted"]
        func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
        if let query { parts.append("m.search @@ \(bind(query))::tsquery") }
        let (low, high) = (MessageID.lowerBound(atOrAfter: search.lower), MessageID.upperBound(before: search.upper))
        if low != Int64.min { parts.append("m.id >= \(bind(low))") }
        if high != Int64.max { parts.append("m.id < \(bind(high))") }
        if let ids = search.inConversations {
            // One conversation as `=`: `= ANY` of a one-element array does not let the planner walk the primary key
            // in (conversation, ts) order, and `in:#product` sorted 182,000 rows for 20 (400 ms at 1M).
            parts.append(ids.count == 1 ? "m.conversation_id = \(bind(ids[0]))" : "m.conversation_id = ANY(\(bind(ids)))")
        }
        if !search.notInConversations.isEmpty {
            parts.append("NOT (m.conversation_id = ANY(\(bind(search.notInConversations))))")
        }
        if let users = search.fromUsers { parts.append("m.user_id = ANY(\(bind(users)))") }
        if !search.notFromUsers.isEmpty {
            parts.append("(m.user_id IS NULL OR NOT (m.user_id = ANY(\(bind(search.notFromUsers)))))")
        }
        for (userID, dms) in search.toUsers {
            // A mention: the user's id among the extra text's tokens (weight C), as FTS5's `search_extra : id`.
            let mention = PostgresTokens.tokens(userID, documents: false).map { PostgresTokens.lexeme($0.token) + ":C" }
                .joined(separator: " <-> ")
            let mentions = mention.isEmpty ? "false" : "m.search @@ \(bind(mention))::tsquery"
            parts.append("(m.conversation_id = ANY(\(bind(dms))) OR \(mentions))")
        }
        for (userID, dms) in search.withUsers {
            parts.append(
                """
                (m.conversation_id = ANY(\(bind(dms))) OR (m.thread_key IS NOT NULL AND EXISTS (
                    SELECT 1 FROM message t WHERE t.conversation_id = m.conversation_id
                    AND t.thread_key = m.thread_key AND t.user_id = \(bind(userID)))))
                """)
        }
        if !search.requiredFlags.isEmpty {
            parts.append("(m.flags & \(search.requiredFlags.rawValue)) = \(search.requiredFlags.rawValue)")
        }
        for name in search.reactions {
            parts.append(
                """
                EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(m.reactions, '[]'::jsonb)) r
                    WHERE r->>'name' = \(bind(name)) OR left(r->>'name', \(bind(Int64(name.count + 2)))::int) = \(bind(name + "::")))
                """)
        }
        if search.inThread { parts.append("m.thread_key IS NOT NULL") }
        if query == nil, let excluded = PostgresTokens.exclusion(search) {
            parts.append("NOT (m.search @@ \(bind(excluded))::tsquery)")
        }
        return (parts.joined(separator: " AND "), binds)
    }

    func hits(order: SearchOrder, offset: Int, limit: Int) throws -> RankedHits {
        let (sum, overflow) = max(0, limit).addingReportingOverflow(max(0, offset))
        let wanted = overflow ? Int.max : sum
        guard query != nil else {
            // Filters only: one conversation walks its (conversation, ts) key; otherwise the time-ordered ids.
            let key = search.inConversations?.count == 1 ? "m.ts_key" : "m.id"
            let rows = try matches(orderBy: "\(key) \(order == .oldest ? "ASC" : "DESC")", limit: wanted)
            return RankedHits(hits: try archive.hitMessages(rows.dropFirst(max(0, offset)).map { ($0.row, 0) }))
        }
        switch order {
        case .newest, .oldest:
            let rows = try matches(orderBy: "m.id \(order == .newest ? "DESC" : "ASC")", limit: wanted)
            return RankedHits(
                hits: try archive.hitMessages(rows.dropFirst(max(0, offset)).map { ($0.row, $0.rank) }),
                matches: rows.count < wanted ? rows.count : nil)
        case .relevance(let size):
            let window = max(wanted, search.hasRowFilters ? size / Self.rowFilterWindowShare : size)
            let typed: ((Int) throws -> [(row: PostgresRandomAccessRow, rank: Double)])? = typedBinds.map { typed in
                { limit in try matches(orderBy: "m.id DESC", limit: limit, binds: typed) }
            }
            let (candidates, exact, full) = try Relevance.window(
                window, id: { (try? $0.row.int("id")) ?? 0 }, exactForms: typed,
                allForms: { try matches(orderBy: "m.id DESC", limit: $0) })
            let ranked = Self.rank(candidates, exact: exact).prefix(wanted).dropFirst(max(0, offset))
            return RankedHits(
                hits: try archive.hitMessages(Array(ranked)), window: full ? window : nil,
                matches: full ? nil : candidates.count)
        }
    }

    /// Matching rows in `orderBy`, at most `limit`, each with `ts_rank` (computed for the rows returned only);
    /// with `typed` (`typedBinds`), of the words in their typed forms only.
    private func matches(orderBy: String, limit: Int, binds typed: PostgresBindings? = nil)
        throws -> [(row: PostgresRandomAccessRow, rank: Double)]
    {
        var binds = typed ?? binds
        binds.append(Int64(min(limit, Int(Int32.max))))
        let rank = query.map { _ in "ts_rank(m.search, $1::tsquery)::float8" } ?? "0::float8"
        let rows = try archive.link.query(
            """
            SELECT \(PostgresArchive.messageColumns), \(rank) AS rank FROM message m
            WHERE \(conditions)
            ORDER BY \(orderBy)
            LIMIT $\(binds.count)
            """, binds)
        return try rows.map { ($0, try $0["rank"].decode(Double.self)) }
    }

    /// The planner's row estimate for the search's conditions (`EXPLAIN`, no row read): from the statistics
    /// `ANALYZE` keeps of the vectors' lexemes, close for the common words whose exact count is expensive (`the`
    /// at 1M: 534,230 estimated, 538,007 counted in 0.6 s, a scan of its matches).
    var estimatesCounts: Bool { true }

    func estimatedCount() throws -> Int? {
        let plan = try archive.link.query("EXPLAIN SELECT 1 FROM message m WHERE \(conditions)", binds)
        guard let line = try plan.first?["QUERY PLAN"].decode(String.self),
            let range = line.range(of: #"rows=\d+"#, options: .regularExpression)
        else { return nil }
        return Int(line[range].dropFirst("rows=".count))
    }

    func count(cap: Int?) throws -> Int {
        var binds = binds
        let limit: String
        if let cap {
            binds.append(Int64(max(0, cap)))
            limit = "LIMIT $\(binds.count)"
        } else {
            limit = ""
        }
        let rows = try archive.link.query(
            "SELECT count(*) AS n FROM (SELECT 1 FROM message m WHERE \(conditions) \(limit)) AS hits", binds)
        return Int(try rows.first?.int("n") ?? 0)
    }

    /// Relevance (`Relevance.order`) with `ts_rank` as the index's relevance.
    static func rank(_ candidates: [(row: PostgresRandomAccessRow, rank: Double)], exact: Set<Int64>?)
        -> [(PostgresRandomAccessRow, Double)]
    {
        var rows: [Int64: PostgresRandomAccessRow] = [:]
        let keyed = candidates.compactMap { candidate -> (id: Int64, seconds: Int64, relevance: Double)? in
            guard let id = try? candidate.row.int("id"), let tsKey = try? candidate.row.int("ts_key") else { return nil }
            rows[id] = candidate.row
            return (id, tsKey / 1_000_000, candidate.rank)
        }
        return Relevance.order(keyed, exact: exact).compactMap { ranked in rows[ranked.id].map { ($0, ranked.score) } }
    }
}

extension PostgresArchive {
    /// Compiles `search` for this index once (no round trip: the plan is PostgreSQL's, made per statement).
    package func prepare(_ search: ResolvedSearch) throws -> any PreparedSearch {
        // Files are not stored here yet: a file filter ignored would answer messages without such files.
        guard search.fileKinds.isEmpty else { throw unavailable("has:image and type: (files)") }
        return PostgresPreparedSearch(archive: self, search: search)
    }

    /// Counts at most this many messages a word (`messagesHolding`): "did you mean" compares rare words with
    /// more common ones, and counting every message of a common word would read all its matches.
    static let wordCountCap = 10_000

    /// How many messages (not deleted) hold each of `words` (index tokens), counted through the GIN index up to
    /// `wordCountCap`; words no message holds are left out. One round trip for all the words.
    ///
    /// - Complexity: O(min(matches, cap)) per word.
    package func messagesHolding(words: [String]) throws -> [String: Int] {
        let words = Array(Set(words.filter { !$0.isEmpty }))
        guard !words.isEmpty else { return [:] }
        let rows = try link.query(
            """
            SELECT w.word, (SELECT count(*) FROM (SELECT 1 FROM message m
                WHERE m.search @@ w.query::tsquery AND NOT m.is_deleted LIMIT $3) AS held) AS messages
            FROM unnest($1::text[], $2::text[]) AS w(word, query)
            """, .of(words, words.map(PostgresTokens.lexeme), Int64(Self.wordCountCap)))
        var found: [String: Int] = [:]
        for row in rows {
            let count = Int(try row.int("messages"))
            if count > 0 { found[try row.string("word")] = count }
        }
        return found
    }

    /// Hits from rows of `messageColumns`, as the SQLite archive's hits read (`MessageRows`): the conversation's
    /// shown name, the author's shown name, and the search text as the plain text.
    func hitMessages(_ rows: [(PostgresRandomAccessRow, Double)]) throws -> [(message: Message, score: Double)] {
        guard !rows.isEmpty else { return [] }
        let conversations = try conversationsByRowID()
        var names: [String: String] = [:]
        for user in try allUsers() { names[user.user.id] = user.user.bestName }
        return try rows.compactMap { row, score in
            guard let conversation = conversations[try row.int("conversation_id")] else { return nil }
            var message = try Self.message(row, conversation: conversation, names: names)
            message.plainText = SearchTextColumn.value(stored: try row.string("search_text"), text: message.text)
            return (message, score)
        }
    }
}
