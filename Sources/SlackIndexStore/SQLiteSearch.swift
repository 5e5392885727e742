import Foundation
import GRDB

/// A search compiled for the SQLite index once: its FTS5 expressions, rank spec, filter conditions and plan, shared
/// by its hits and its count (they were compiled up to three times per search, and again for the count).
struct SQLitePreparedSearch: PreparedSearch, @unchecked Sendable {  // StatementArguments: values only, never mutated
    let archive: SQLiteArchive
    /// The search with its prefixes expanded through the index's vocabulary.
    let search: ResolvedSearch
    /// The MATCH every hit matches (exclusions inside it), nil for a search without words.
    let positive: String?
    /// The MATCH of the excluded words when they run apart from the words (a search without words).
    let negative: String?
    /// `slackindex_rank`'s spec for `positive`.
    let rankSpec: String
    /// `positive` with every word in its typed form only, and its rank spec: the candidates relevance takes first.
    /// Nil when that is `positive` itself (no word has variants).
    let exactForms: (match: String, rankSpec: String)?
    /// The filter conditions over `message m`, for plans that read message rows.
    let conditions: (sql: String, arguments: StatementArguments)
    let plan: SQLiteArchive.SearchPlan
    let notes: [String]

    /// Relevance ranks at most this share of the window when filters read each candidate's row.
    private static let rowFilterWindowShare = 4

    func hits(order: SearchOrder, offset: Int, limit: Int) throws -> RankedHits {
        let (sum, overflow) = max(0, limit).addingReportingOverflow(max(0, offset))
        let wanted = overflow ? Int.max : sum
        guard positive != nil else {
            let messages = try archive.filterOnly(self, newestFirst: order != .oldest, limit: wanted)
            return RankedHits(hits: messages.dropFirst(max(0, offset)).map { ($0, 0) })
        }
        switch order {
        case .newest, .oldest:
            let candidates = try archive.searchCandidates(self, newestFirst: order == .newest, limit: wanted)
            // Date orders keep bm25's information as a score where higher is better.
            return RankedHits(
                hits: try read(candidates.map { ($0.sortKey, -$0.bm25) }, after: offset),
                matches: candidates.count < wanted ? candidates.count : nil)
        case .relevance(let size):
            // Filters make the index walk read each candidate's row: a smaller window keeps that bounded.
            let window = max(wanted, search.hasRowFilters ? size / Self.rowFilterWindowShare : size)
            let typed: ((Int) throws -> [SearchCandidate])? = exactForms.map { forms in
                { limit in
                    try archive.searchCandidates(
                        self, match: forms.match, rankSpec: forms.rankSpec, newestFirst: true, limit: limit)
                }
            }
            let (candidates, exact, full) = try Relevance.window(
                window, id: \.sortKey, exactForms: typed,
                allForms: { try archive.searchCandidates(self, newestFirst: true, limit: $0) })
            let ranked = Self.rank(candidates, exact: exact).prefix(wanted)
            return RankedHits(
                hits: try read(ranked.map { ($0.id, $0.score) }, after: offset), window: full ? window : nil,
                matches: full ? nil : candidates.count)
        }
    }

    func count(cap: Int?) throws -> Int {
        try archive.searchCount(self, cap: cap)
    }

    /// The messages of the ranked ids past the first `offset`, in order.
    private func read(_ ranked: [(Int64, Double)], after offset: Int) throws -> [(message: Message, score: Double)] {
        try archive.messages(ids: Array(ranked.dropFirst(max(0, offset))))
    }

    /// Relevance (`Relevance.order`) with −bm25 as the index's relevance; an index-only candidate's time comes
    /// from its id, exact to the second (`MessageID`).
    static func rank(_ candidates: [SearchCandidate], exact: Set<Int64>? = nil) -> [(id: Int64, score: Double)] {
        Relevance.order(candidates.map { ($0.sortKey, $0.tsKey / 1_000_000, -$0.bm25) }, exact: exact)
    }
}

extension SQLiteArchive {
    /// How many words a prefix expands to at most.
    static let maxPrefixWords = 64

    /// Compiles `search` once: prefixes expanded through the vocabulary, the FTS5 expressions and rank spec, the
    /// filter conditions and the plan, in one read.
    ///
    /// - Complexity: one vocabulary range read per prefix, one count per `in:` over conversations (the plan).
    package func prepare(_ search: ResolvedSearch) throws -> any PreparedSearch {
        try pool.read { db in
            var notes: [String] = []
            var expansions: FTS5Query.PrefixExpansions = [:]
            for term in search.words where expansions[term.text] == nil {
                expansions[term.text] = try SQLiteArchive.expandingPrefix(term, notes: &notes, db: db)
            }
            var (positive, negative) = FTS5Query.match(search, expansions: expansions)
            var rankSpec = FTS5Query.rankSpec(search, expansions: expansions)
            var exactForms = FTS5Query.exactForms(search, expansions: expansions)
            // `in:` and `from:` matched in the index too (`IndexScope`), where it has them and they are few: then
            // only the scope's matches have their rows read for the filters.
            let scope = try IndexScope.indexed(db) ? IndexScope.match(search) : nil
            if let scope, let words = positive {
                (positive, rankSpec) = IndexScope.restrict((words, rankSpec), to: scope)
                exactForms = exactForms.map { IndexScope.restrict($0, to: scope) }
            }
            return SQLitePreparedSearch(
                archive: self, search: search, positive: positive, negative: negative,
                rankSpec: SQLiteArchive.countingAtMost(rankSpec),
                exactForms: exactForms.map { (match: $0.match, rankSpec: SQLiteArchive.countingAtMost($0.rankSpec)) },
                conditions: SQLiteArchive.conditions(search, negative: negative),
                plan: try SQLiteArchive.plan(search, scoped: scope != nil && positive != nil, expansions: expansions, db: db),
                notes: notes)
        }
    }

    /// How many of a phrase's documents the rank counts before it estimates the rest from the share it holds of the
    /// messages up to its last one counted (`slackindex_rank`'s "~CAP", `Sources/CSlackTokenizer/slack_rank.c`).
    /// A query of two words or more weighs them by IDF, which counted each word's documents by reading its whole
    /// doclist: `success the` on the generated 1M archive took 17.5 ms, 0.7 of them for `success` alone.
    static let idfCountCap = 2_000

    /// `spec` with `idfCountCap` in front when it ranks by IDF (it does not start with `!`).
    static func countingAtMost(_ spec: String) -> String {
        spec.hasPrefix("!") ? spec : "~\(idfCountCap) " + spec
    }

    /// For `term`, when it is a prefix of ASCII letters and digits, the index's most frequent words with that prefix
    /// (at most `maxPrefixWords`; a note says when more exist); nil for any other term.
    ///
    /// The index answers a prefix by merging the doclists of every such word before it can return the newest
    /// match (0.3 s for `valu*` on 1M messages); a choice among the words lets it merge lazily and stop early.
    private static func expandingPrefix(_ term: SearchTerm, notes: inout [String], db: Database) throws
        -> [FTS5Query.PrefixWord]?
    {
        let stem = term.text.lowercased()
        guard term.kind == .prefix, IndexText.isASCIIWord(stem) else { return nil }
        let (words, total) = try prefixExpansion(stem, limit: maxPrefixWords, db: db)
        if total > words.count {
            notes.append("\(term.text)* matches \(total) words; searched the \(words.count) most frequent of them.")
        }
        return words
    }
}
