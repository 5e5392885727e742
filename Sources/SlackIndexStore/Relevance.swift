import Foundation

/// The relevance order both indexes give: which matches are ranked, and how (SQLite's bm25 and PostgreSQL's
/// `ts_rank` are the relevance each index computes; the window and the order around it are the same).
enum Relevance {
    /// What relevance ranks, the typed forms first at any depth: the newest `window` matches that hold every word
    /// as typed (`exactForms`); when fewer do, all of those and then the newest `window` matches of any form
    /// (`allForms`). `exact` holds the first kind's ids (nil: no word has variants, `exactForms` is nil and every
    /// candidate counts as exact). `full`: matches were left out.
    ///
    /// One window over every form let a common family bury the typed word: `iterators` on 100k generated messages
    /// found 500 newer messages with other forms and ranked none that held `iterators` (issue 54). The typed
    /// forms' own window costs one more index walk only when they are rarer than the window; otherwise it
    /// replaces the walk over every form.
    static func window<Candidate>(
        _ window: Int, id: (Candidate) -> Int64,
        exactForms: ((Int) throws -> [Candidate])?, allForms: (Int) throws -> [Candidate]
    ) throws -> (candidates: [Candidate], exact: Set<Int64>?, full: Bool) {
        guard let exactForms else {
            let all = try allForms(window)
            return (all, nil, all.count >= window)
        }
        let exact = try exactForms(window)
        let exactIDs = Set(exact.map(id))
        if exact.count >= window { return (exact, exactIDs, true) }
        let all = try allForms(window)
        return (exact + all.filter { !exactIDs.contains(id($0)) }, exactIDs, all.count >= window)
    }

    /// Candidates in relevance order, best first, with their scores (higher is better): the index's relevance
    /// scaled up for recent messages, newest first on ties. Messages in `exact` (every word as typed) come before
    /// the others: their score is raised by the best score among the others, so scores stay in the hits' order.
    ///
    /// score = relevance × (1 + 0.5 × e^(−age / 180 days)), age in seconds from the newest candidate, so an old
    /// archive ranks the same today as on the day it was made.
    /// - Complexity: O(k log k).
    static func order(_ candidates: [(id: Int64, seconds: Int64, relevance: Double)], exact: Set<Int64>?)
        -> [(id: Int64, score: Double)]
    {
        guard let newest = candidates.map(\.seconds).max() else { return [] }
        let halfLife = 180.0 * 86_400
        var scored = candidates.map { candidate in
            (id: candidate.id,
             score: candidate.relevance * (1 + 0.5 * exp(-Double(newest - candidate.seconds) / halfLife)))
        }
        if let exact, let best = scored.lazy.filter({ !exact.contains($0.id) }).map(\.score).max() {
            let lift = max(best, 0)
            for index in scored.indices where exact.contains(scored[index].id) {
                // Strictly above the best of the others, even for an exact hit that scored 0 (or less).
                scored[index].score = max(scored[index].score + lift, best).nextUp
            }
        }
        return scored.sorted { lhs, rhs in lhs.score != rhs.score ? lhs.score > rhs.score : lhs.id > rhs.id }
    }
}
