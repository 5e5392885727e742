import Foundation
import GRDB

/// One free-text term of a search, as the query parser reads it and the store matches it (`SearchQuery.Term`).
public struct SearchTerm: Sendable, Hashable {
    /// How the term matches.
    public enum Kind: Sendable, Hashable {
        /// A single word (`budget`).
        case word
        /// An exact phrase (`"quarterly budget"`); `text` holds the words without quotes.
        case phrase
        /// A word prefix (`budg*`); `text` holds the stem without `*`.
        case prefix
    }

    /// How the term matches.
    public var kind: Kind
    /// The word, phrase or prefix stem, without quotes, `*` or the leading `-`.
    public var text: String
    /// True for excluded terms (`-word`, `-"phrase"`).
    public var negated: Bool

    /// Creates a term.
    public init(_ kind: Kind, _ text: String, negated: Bool = false) {
        self.kind = kind
        self.text = text
        self.negated = negated
    }
}

/// One search candidate: its message id (the sort key), bm25 (lower is better) and time.
package struct SearchCandidate: Sendable, Equatable {
    package var sortKey: Int64
    package var bm25: Double
    package var tsKey: Int64

    package init(sortKey: Int64, bm25: Double, tsKey: Int64) {
        self.sortKey = sortKey
        self.bm25 = bm25
        self.tsKey = tsKey
    }
}

/// A search with every name resolved to ids: what the store runs.
package struct ResolvedSearch: Sendable {
    /// Terms every hit matches (empty: filters only).
    package var words: [SearchTerm] = []
    /// Terms no hit may match.
    package var excluded: [SearchTerm] = []
    /// Posted at or after / before, in microseconds (`ts_key`).
    package var lower: Int64?
    package var upper: Int64?
    /// Conversation row ids a hit must be in (any of), or nil for all.
    package var inConversations: [Int64]?
    package var notInConversations: [Int64] = []
    /// Author ids a hit must have (any of), or nil for all.
    package var fromUsers: [String]?
    package var notFromUsers: [String] = []
    /// `to:`: DMs with the user, or a mention of the user.
    package var toUsers: [(userID: String, conversations: [Int64])] = []
    /// `with:`: DMs with the user, or threads the user posted in.
    package var withUsers: [(userID: String, conversations: [Int64])] = []
    /// Flags a hit must all have (has:link, has:file, has:reaction, has:pin).
    package var requiredFlags: MessageFlags = []
    /// Reactions a hit must carry (`has::emoji:`), each name also matching its skin-tone variants.
    package var reactions: [String] = []
    /// Kinds of file a hit must carry one of each (`has:image`, `type:pdfs`): `images`, `snippets`, `posts`, `pdfs`,
    /// `zips`, or a lowercased file type or extension.
    package var fileKinds: [String] = []
    /// `is:thread`.
    package var inThread = false
    /// Words also match their English variants (`deploy` finds `deployed`); quoted words never do.
    package var wordVariants = true
    /// How much a variant counts against the exact word in ranking (0…1): a message holding only `deployed` scores
    /// as if it held `deploy` this many times.
    package var variantWeight = 0.2

    package init() {}

    /// True when the only filter on the message row is `in:` (then its conversations' ids can stand in for it).
    package var onlyInConversations: Bool {
        inConversations != nil && notInConversations.isEmpty && fromUsers == nil && notFromUsers.isEmpty
            && toUsers.isEmpty && withUsers.isEmpty && requiredFlags.isEmpty && reactions.isEmpty && !inThread
            && fileKinds.isEmpty
    }

    /// True when a filter needs the message row (anything but words and dates).
    package var hasRowFilters: Bool {
        inConversations != nil || !notInConversations.isEmpty || fromUsers != nil || !notFromUsers.isEmpty
            || !toUsers.isEmpty || !withUsers.isEmpty || !requiredFlags.isEmpty || !reactions.isEmpty || inThread
            || !fileKinds.isEmpty
    }
}

extension SQLiteArchive {

    /// Filter conditions over `message m` and their arguments, shared by every plan; `negative` is the MATCH of
    /// the excluded words when they run apart from the words (a search without words).
    static func conditions(_ s: ResolvedSearch, negative: String?) -> (sql: String, arguments: StatementArguments) {
        var parts = ["m.is_deleted = 0"]
        var arguments = StatementArguments()
        func list(_ count: Int) -> String { "(" + Array(repeating: "?", count: count).joined(separator: ", ") + ")" }
        if let ids = s.inConversations {
            parts.append("m.conversation_id IN \(list(ids.count))")
            arguments += StatementArguments(ids)
        }
        if !s.notInConversations.isEmpty {
            parts.append("m.conversation_id NOT IN \(list(s.notInConversations.count))")
            arguments += StatementArguments(s.notInConversations)
        }
        if let users = s.fromUsers {
            parts.append("m.user_id IN \(list(users.count))")
            arguments += StatementArguments(users)
        }
        if !s.notFromUsers.isEmpty {
            parts.append("(m.user_id IS NULL OR m.user_id NOT IN \(list(s.notFromUsers.count)))")
            arguments += StatementArguments(s.notFromUsers)
        }
        for (userID, dms) in s.toUsers {
            parts.append(
                """
                (m.conversation_id IN \(list(dms.count)) OR m.id IN
                    (SELECT rowid FROM message_fts WHERE message_fts MATCH ?))
                """)
            arguments += StatementArguments(dms)
            arguments += [FTS5Query.literal(userID).map { "search_extra : " + $0 } ?? "\"\""]
        }
        for (userID, dms) in s.withUsers {
            parts.append(
                """
                (m.conversation_id IN \(list(dms.count)) OR (m.thread_key IS NOT NULL AND EXISTS (
                    SELECT 1 FROM message t WHERE t.conversation_id = m.conversation_id
                    AND t.thread_key = m.thread_key AND t.user_id = ?)))
                """)
            arguments += StatementArguments(dms)
            arguments += [userID]
        }
        if !s.requiredFlags.isEmpty {
            parts.append("(m.flags & \(s.requiredFlags.rawValue)) = \(s.requiredFlags.rawValue)")
        }
        for name in s.reactions {
            parts.append(
                """
                EXISTS (SELECT 1 FROM reaction r WHERE r.message_id = m.id
                    AND (r.name = ? OR substr(r.name, 1, ?) = ?))
                """)
            arguments += [name, name.utf8.count + 2, name + "::"]
        }
        for kind in s.fileKinds {
            let (condition, values) = fileKindCondition(kind)
            parts.append("EXISTS (SELECT 1 FROM file f WHERE f.message_id = m.id AND (\(condition)))")
            arguments += StatementArguments(values)
        }
        if s.inThread { parts.append("m.thread_key IS NOT NULL") }
        if let negative {
            parts.append("m.id NOT IN (SELECT rowid FROM message_fts WHERE message_fts MATCH ?)")
            arguments += [negative]
        }
        return (parts.joined(separator: " AND "), arguments)
    }

    /// Whether `file f` is of `kind` (`ResolvedSearch.fileKinds`): by Slack's metadata (`mimetype`, `mode`,
    /// `filetype`, the name's extension), or for images also by the type of the bytes stored.
    static func fileKindCondition(_ kind: String) -> (sql: String, values: [String]) {
        switch kind {
        case "images":
            return (
                """
                f.mimetype LIKE 'image/%' OR EXISTS (SELECT 1 FROM file_blob b WHERE b.file_id = f.file_id
                    AND b.content_type LIKE 'image/%')
                """, []
            )
        case "snippets": return ("f.mode = 'snippet'", [])
        case "posts": return ("f.mode = 'post'", [])
        case "pdfs": return ("lower(f.filetype) = 'pdf' OR lower(f.name) LIKE '%.pdf'", [])
        case "zips": return ("lower(f.filetype) = 'zip' OR lower(f.name) LIKE '%.zip'", [])
        default: return ("lower(f.filetype) = ? OR lower(f.name) LIKE ?", [kind, "%." + kind])
        }
    }

    /// The sort-key (id) range of the time bounds (`MessageID.lowerBound`, `upperBound`).
    static func sortKeyRange(_ s: ResolvedSearch) -> (Int64, Int64) {
        let low = MessageID.lowerBound(atOrAfter: s.lower)
        let high = MessageID.upperBound(before: s.upper)
        return (low, high)
    }

    /// Matching messages newest first (or oldest first), at most `limit`, with their bm25; of `match` ranked by
    /// `rankSpec` when given (`SQLitePreparedSearch.exactForms`), else of the search's own expression.
    ///
    /// FTS5 walks its doclists in rowid (= time) order and stops after `limit` rows pass the filters, so the cost
    /// is bounded by `limit` for unfiltered queries however common the words are; bm25 is computed only for rows
    /// returned. Date bounds become rowid ranges inside FTS5.
    /// - Complexity: O(limit × log n) without selective filters; up to O(matches) with them.
    func searchCandidates(
        _ p: SQLitePreparedSearch, match: String? = nil, rankSpec: String? = nil, newestFirst: Bool, limit: Int
    ) throws -> [SearchCandidate] {
        guard let positive = match ?? p.positive else { return [] }
        let rankSpec = rankSpec ?? p.rankSpec
        let s = p.search
        let (low, high) = SQLiteArchive.sortKeyRange(s)
        let order = newestFirst ? "DESC" : "ASC"
        return try pool.read { db in
            if case .index(let ids) = p.plan {
                return try SQLiteArchive.indexCandidates(
                    match: positive, rank: (rankSpec, s.variantWeight), excluded: p.negative, in: ids,
                    low: low, high: high, order: order, limit: limit, db: db)
            }
            let (where_, filterArguments) = p.conditions
            var arguments: StatementArguments = [rankSpec, s.variantWeight, positive, low, high]
            arguments += filterArguments
            arguments += [limit]
            let statement = try db.cachedStatement(
                sql: """
                    SELECT message_fts.rowid AS id, \(SQLiteArchive.rank) AS bm25, m.ts_key
                    FROM message_fts CROSS JOIN message m ON m.id = message_fts.rowid
                    WHERE message_fts MATCH ? AND message_fts.rowid >= ? AND message_fts.rowid < ? AND \(where_)
                    ORDER BY message_fts.rowid \(order)
                    LIMIT ?
                    """)
            return try SQLiteArchive.candidates(statement, arguments) { row in
                SearchCandidate(sortKey: row[0], bm25: row[1], tsKey: row[2])  // positional: hot rows, as above
            }
        }
    }

    /// The relevance of a match, lower is better: bm25 with the text weighing 1.0 and the extra text (names, file
    /// titles, link words) 0.4, where a word and its variants count as one term and a variant counts
    /// `variantWeight` times an exact occurrence (`slackindex_rank`, `Sources/CSlackTokenizer/slack_rank.c`).
    /// Takes two arguments: the rank spec and the variant weight.
    static let rank = "slackindex_rank(message_fts, ?, ?, 1.0, 0.4)"

    /// How a search's matches are filtered.
    enum SearchPlan {
        /// The index alone answers: no filter needs the message rows, or `in:` names conversations few enough to
        /// check the matches against their ids (nil: no conversation filter).
        case index(conversations: [Int64]?)
        /// Each match's message row is read to apply the filters.
        case rows
    }

    /// The plan for `s`, shared by the search and its count so they always filter alike (chosen once, when the
    /// search is prepared). `scoped`: the MATCH holds the search's `in:`/`from:` as scope words (`IndexScope`), so
    /// only the scope's matches are read, and the id set is for the others (archives before v22, more conversations).
    static func plan(_ s: ResolvedSearch, scoped: Bool, expansions: FTS5Query.PrefixExpansions, db: Database) throws
        -> SearchPlan
    {
        if !s.hasRowFilters { return .index(conversations: nil) }
        if scoped { return .rows }
        guard s.onlyInConversations, let ids = s.inConversations else { return .rows }
        let size = try messageCount(conversations: ids, in: db)
        guard size <= idSetLimit else { return .rows }
        let fewer = size / idSetEntriesPerRowRead
        // Only words of one token: a word the tokenizer splits is a phrase, which a count cannot stop early when rare.
        for term in s.words where term.kind == .word && IndexText.isASCIIWord(term.text) {
            guard let match = FTS5Query.expression(for: term, variants: s.wordVariants, expansions: expansions)
            else { continue }
            // A word in fewer messages than that: reading their rows costs less than collecting the ids.
            if try matchCount(match, upTo: fewer, db: db) < fewer { return .rows }
        }
        return .index(conversations: ids)
    }

    /// Conversations with at most this many messages in all are searched through their ids (see
    /// `indexCandidates`); bigger ones through the message rows, where a common word finds its
    /// window early.
    static let idSetLimit = 50_000

    /// What one message row read costs, in ids collected for the id set: a word in fewer messages than the
    /// conversations' size over this is searched through the rows. Measured on the generated 1M archive, whose
    /// `#東京オフィス` holds 37,098 messages: collecting their ids costs ~7.5 ms (`in:#東京オフィス the`, whose window
    /// fills at once); `in:#東京オフィス locale` (1,497 messages hold the word) took 12.0 ms through the ids and
    /// 4.0 ms through the rows, `… steven` (949) 2.9 ms through the rows.
    static let idSetEntriesPerRowRead = 8

    /// How many messages `match` finds, counting at most `limit` (the scan stops there: a bounded probe).
    static func matchCount(_ match: String, upTo limit: Int, db: Database) throws -> Int {
        let statement = try db.cachedStatement(
            sql: "SELECT count(*) FROM (SELECT 1 FROM message_fts WHERE message_fts MATCH ? LIMIT ?)")
        return try Int.fetchOne(statement, arguments: [match, limit]) ?? 0
    }

    /// Messages in the given conversations (the archive's `message_count`).
    static func messageCount(conversations ids: [Int64], in db: Database) throws -> Int {
        let marks = Array(repeating: "?", count: ids.count).joined(separator: ", ")
        return try Int.fetchOne(
            db, sql: "SELECT total(messages + deleted) FROM message_count WHERE conversation_id IN (\(marks))",
            arguments: StatementArguments(ids)) ?? 0
    }

    /// Candidates the index alone answers, without reading message rows. Deleted messages are not in the index,
    /// and the rowid is the message id (`MessageID`), which holds its time.
    ///
    /// With `conversations` (`in:` over small conversations), the matches are checked against the conversations'
    /// ids, read once from the history index (covering: no message row is read), instead of reading every
    /// match's row to learn its conversation: `iterator in:#product` on 1M messages (13,662 matches of which 26
    /// in #product) read 13,662 rows. The unary `+` keeps the id set a filter: as a constraint SQLite could hand
    /// FTS5 one MATCH per id.
    ///
    /// - Complexity: O(k) for k matches in the date range, plus O(c) for c messages in the conversations.
    static func indexCandidates(
        match: String, rank: (spec: String, variantWeight: Double), excluded: String?, in conversations: [Int64]?,
        low: Int64, high: Int64, order: String, limit: Int, db: Database
    ) throws -> [SearchCandidate] {
        let (filters, filterArguments) = indexFilters(
            match: match, excluded: excluded, in: conversations, low: low, high: high)
        var arguments: StatementArguments = [rank.spec, rank.variantWeight]
        arguments += filterArguments
        arguments += [limit]
        let statement = try db.cachedStatement(
            sql: """
                SELECT rowid AS id, \(SQLiteArchive.rank) AS bm25 FROM message_fts
                WHERE message_fts MATCH ? AND rowid >= ? AND rowid < ? \(filters)
                ORDER BY rowid \(order) LIMIT ?
                """)
        return try candidates(statement, arguments) { row in
            // Positional: candidates are the search's hot rows (up to the whole window per query); reading them by
            // name cost the `bench search` workload ~20% at p50 on 1M messages.
            let id: Int64 = row[0]
            return SearchCandidate(sortKey: id, bm25: row[1], tsKey: MessageID(rawValue: id).tsKey)
        }
    }

    /// The candidates a statement gives, read from its cursor's one row in place: `fetchAll` copied every row of
    /// the window (GRDB's `StatementCopyRowImpl`, ~4% of `bench search`'s samples on medium words at 1M).
    private static func candidates(
        _ statement: Statement, _ arguments: StatementArguments, _ candidate: (Row) -> SearchCandidate
    ) throws -> [SearchCandidate] {
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        var found: [SearchCandidate] = []
        while let row = try rows.next() { found.append(candidate(row)) }
        return found
    }

    /// The conditions of a query the index alone answers (`indexCandidates`, `searchCount`): the words and the
    /// time range, then `filters` (`AND …`) for the conversations and the excluded words; `arguments` bind them
    /// in that order.
    private static func indexFilters(match: String, excluded: String?, in conversations: [Int64]?, low: Int64, high: Int64)
        -> (filters: String, arguments: StatementArguments)
    {
        var arguments: StatementArguments = [match, low, high]
        var filters = ""
        if let conversations {
            let marks = Array(repeating: "?", count: conversations.count).joined(separator: ", ")
            filters += "AND +rowid IN (SELECT id FROM message WHERE conversation_id IN (\(marks))) "
            arguments += StatementArguments(conversations)
        }
        if let excluded {
            filters += "AND rowid NOT IN (SELECT rowid FROM message_fts WHERE message_fts MATCH ?)"
            arguments += [excluded]
        }
        return (filters, arguments)
    }

    /// The messages with the given ids, in the given order, with their scores.
    ///
    /// - Complexity: O(k log n) for k ids.
    func messages(ids: [(Int64, Double)]) throws -> [(message: Message, score: Double)] {
        guard !ids.isEmpty else { return [] }
        return try pool.read { db in
            let list = "(" + ids.map { _ in "?" }.joined(separator: ",") + ")"
            // Cursors, not `fetchAll`, for rows read by name: a copied row finds a column by lowercasing every
            // column's name (see `rawMessages`).
            // Cached, as the counts and filter-only searches are: compiling this join (GRDB's authorizer visits
            // every column) per search showed in profiles; a page of hits mostly has the same number of ids. With
            // them cached, `bench search` p50 1M 4.38 -> 3.81 ms, 100k 3.23 -> 2.94 ms (medians of 3, interleaved).
            let statement = try db.cachedStatement(
                sql: "SELECT \(MessageRows.columns) FROM message m \(MessageRows.joins) WHERE m.id IN \(list)")
            let rows = try Row.fetchCursor(statement, arguments: StatementArguments(ids.map(\.0)))
            var byID: [Int64: Message] = [:]
            while let row = try rows.next() {
                let message = MessageRows.message(row)
                byID[message.rowID] = message
            }
            return ids.compactMap { id, score in byID[id].map { ($0, score) } }
        }
    }

    /// Messages matching filters only (no words), newest or oldest first.
    ///
    /// - Complexity: O(limit × log n) when the filters are not selective; SQLite picks the index
    ///   (conversation, user or time) that fits the filters.
    func filterOnly(_ p: SQLitePreparedSearch, newestFirst: Bool, limit: Int) throws -> [Message] {
        let s = p.search
        let (where_, filterArguments) = p.conditions
        let order = newestFirst ? "DESC" : "ASC"
        var arguments = StatementArguments()
        let range: String
        let orderBy: String
        if let conversations = s.inConversations, conversations.count == 1 {
            // One conversation: walk its (conversation, ts) index in time order instead of sorting its rows.
            range = "m.ts_key >= ? AND m.ts_key < ?"
            arguments += [s.lower ?? Int64.min, s.upper ?? Int64.max]
            orderBy = "m.ts_key \(order)"
        } else {
            // Otherwise walk the table itself, whose ids are in time order, and stop after `limit` rows.
            let (low, high) = SQLiteArchive.sortKeyRange(s)
            range = "m.id >= ? AND m.id < ?"
            arguments += [low, high]
            orderBy = "m.id \(order)"
        }
        arguments += filterArguments
        arguments += [limit]
        return try pool.read { db in
            let statement = try db.cachedStatement(
                sql: """
                    SELECT \(MessageRows.columns)
                    FROM message m
                    \(MessageRows.joins)
                    WHERE \(range) AND \(where_)
                    ORDER BY \(orderBy)
                    LIMIT ?
                    """)
            let rows = try Row.fetchCursor(statement, arguments: arguments)
            return try Array(rows.map { MessageRows.message($0) })
        }
    }

    /// How many messages match.
    ///
    /// - Complexity: O(matches).
    func searchCount(_ p: SQLitePreparedSearch, cap: Int?) throws -> Int {
        let (where_, filterArguments) = p.conditions
        let (low, high) = SQLiteArchive.sortKeyRange(p.search)
        // With a cap the scan stops at that many matches: "the" on 1M messages counts in 0.6 s, its first 1,000
        // in a few ms.
        let limit = cap.map { " LIMIT \(max(0, $0))" } ?? ""
        let match = p.positive
        return try pool.read { db in
            // The plan `searchCandidates` takes (`iterator in:#product` on 1M messages: 13,662 rows read before,
            // the index alone now).
            if let positive = match, case .index(let ids) = p.plan {
                let (filters, arguments) = SQLiteArchive.indexFilters(
                    match: positive, excluded: p.negative, in: ids, low: low, high: high)
                let statement = try db.cachedStatement(
                    sql: """
                        SELECT count(*) FROM (
                            SELECT 1 FROM message_fts WHERE message_fts MATCH ? AND rowid >= ? AND rowid < ? \(filters)
                            \(limit))
                        """)
                return try Int.fetchOne(statement, arguments: arguments) ?? 0
            }
            if let positive = match {
                var arguments: StatementArguments = [positive, low, high]
                arguments += filterArguments
                let statement = try db.cachedStatement(
                    sql: """
                        SELECT count(*) FROM (
                            SELECT 1 FROM message_fts CROSS JOIN message m ON m.id = message_fts.rowid
                            WHERE message_fts MATCH ? AND message_fts.rowid >= ? AND message_fts.rowid < ? AND \(where_)
                            \(limit))
                        """)
                return try Int.fetchOne(statement, arguments: arguments) ?? 0
            }
            var arguments: StatementArguments = [low, high]
            arguments += filterArguments
            let statement = try db.cachedStatement(
                sql: "SELECT count(*) FROM (SELECT 1 FROM message m WHERE m.id >= ? AND m.id < ? AND \(where_)\(limit))")
            return try Int.fetchOne(statement, arguments: arguments) ?? 0
        }
    }

    /// The index's words that start with `stem`, most frequent first, and how many there are in all.
    ///
    /// FTS5 answers a prefix query by merging the doclists of every such word before it can return the newest
    /// match (0.3 s for `valu*` on 1M messages); an OR of the words lets it merge lazily and stop early.
    /// - Complexity: O(w log w) for the w words with the prefix.
    static func prefixExpansion(_ stem: String, limit: Int, db: Database) throws
        -> (words: [FTS5Query.PrefixWord], total: Int)
    {
        let upper = stem + "\u{10FFFF}"
        let t = try WordTable.of(db)
        let words = try Row.fetchAll(
            db,
            sql: """
                SELECT \(t.word), \(t.messages) FROM \(t.name)
                WHERE \(t.word) >= ? AND \(t.word) < ? AND \(t.messages) > 0
                ORDER BY \(t.messages) DESC, \(t.word) LIMIT ?
                """,
            arguments: [stem, upper, limit]
        ).map { FTS5Query.PrefixWord(text: $0[0], documents: $0[1]) }
        let total =
            words.count < limit
            ? words.count
            : try Int.fetchOne(
                db, sql: "SELECT count(*) FROM \(t.name) WHERE \(t.word) >= ? AND \(t.word) < ? AND \(t.messages) > 0",
                arguments: [stem, upper]) ?? 0
        return (words, total)
    }

    /// How many messages hold each of `words` (index tokens: lowercase, accents folded), for the words the index
    /// has; the others are left out.
    ///
    /// - Complexity: one lookup per word in `message_word` (in an archive before v21, in the vocabulary, which reads
    ///   the doclist of each word found).
    package func messagesHolding(words: [String]) throws -> [String: Int] {
        try pool.read { db in
            let t = try WordTable.of(db)
            let statement = try db.cachedStatement(
                sql: "SELECT \(t.messages) FROM \(t.name) WHERE \(t.word) = ? AND \(t.messages) > 0")
            var found: [String: Int] = [:]
            for word in Set(words) where !word.isEmpty {
                if let count = try Int.fetchOne(statement, arguments: [word]) { found[word] = count }
            }
            return found
        }
    }

    /// Users whose id, handle, display name or real name is `name` (case-insensitive).
    ///
    /// - Complexity: O(users).
    package func users(matching name: String) throws -> [User] {
        try pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(UserColumns.list) FROM user
                    WHERE id = ? OR handle = ? COLLATE NOCASE OR display_name = ? COLLATE NOCASE
                        OR real_name = ? COLLATE NOCASE
                    ORDER BY id
                    """, arguments: [name, name, name, name]
            ).map(UserColumns.user)
        }
    }

    /// Row ids of the DMs and group DMs that `userID` is a member of.
    ///
    /// - Complexity: O(conversations).
    package func directConversations(of userID: String) throws -> [Int64] {
        try pool.read { db in
            try Int64.fetchAll(
                db,
                sql: """
                    SELECT c.id FROM conversation c, json_each(c.members) j
                    WHERE c.kind IN ('dm', 'mpim') AND j.value = ?
                    """, arguments: [userID])
        }
    }

    /// DMs whose members are exactly `me` and `other` (or just `other`, when `me` is unknown).
    package func directMessages(with other: String, me: String?) throws -> [Int64] {
        try pool.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT id, members FROM conversation WHERE kind = 'dm'")
            return rows.compactMap { row -> Int64? in
                let members = JSONText.strings(row["members"] as String) ?? []
                guard members.contains(other) else { return nil }
                if let me, me != other, !members.contains(me) { return nil }
                return row["id"]
            }
        }
    }

    /// Conversations whose Slack id, name or folder is `name` (case-insensitive), or `workspace/#name`.
    package func conversations(matching name: String) throws -> [Conversation] {
        try pool.read { db in
            if let qualified = WorkspaceLabel.split(name) {
                return try SQLiteArchive.workspaceConversationRows(qualified.name, workspace: qualified.workspace, in: db)
                    .map(SQLiteArchive.conversation)
            }
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT \(ConversationColumns.list) FROM conversation c
                    WHERE c.slack_id = ? OR c.name = ? COLLATE NOCASE OR c.folder = ? COLLATE NOCASE
                    ORDER BY c.id
                    """, arguments: [name, name, name]
            ).map(SQLiteArchive.conversation)
        }
    }
}
