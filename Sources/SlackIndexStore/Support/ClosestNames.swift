import Foundation

/// The names closest to one that matched nothing, for "did you mean" hints: names that start with it or contain
/// it first, then names within a few edits (a transposition counts as one), compared without case or accents.
package enum ClosestNames {
    /// At most `limit` of `names`, closest first (ties by name); none further than a third of the query's
    /// length in edits (at least 1, at most 3).
    ///
    /// - Complexity: O(n · q · m) for n names of length m and a query of length q (both capped at 64).
    package static func closest(to query: String, among names: some Sequence<String>, limit: Int = 3) -> [String] {
        let wanted = folded(query)
        guard !wanted.isEmpty else { return [] }
        let allowed = max(1, min(3, wanted.count / 3))
        var scored: [(score: Int, name: String)] = []
        var seen = Set<String>()
        for name in names where seen.insert(name).inserted {
            let candidate = folded(name)
            guard !candidate.isEmpty else { continue }
            if candidate == wanted {  // the same but for case or accents, which the exact lookup respects
                scored.append((-1, name))
            } else if candidate.starts(with: wanted) {
                scored.append((0, name))
            } else if candidate.count >= 3, wanted.count >= 3, containsRun(candidate, wanted) || containsRun(wanted, candidate) {
                scored.append((1, name))
            } else {
                let distance = editDistance(wanted, candidate, limit: allowed)
                if distance <= allowed { scored.append((1 + distance, name)) }
            }
        }
        scored.sort { ($0.score, $0.name.count, $0.name) < ($1.score, $1.name.count, $1.name) }
        return scored.prefix(limit).map(\.name)
    }

    /// Whether `name` starts with `prefix`, compared without case or accents (`#`/`@` ignored); an empty prefix
    /// matches nothing.
    package static func startsWith(_ name: String, _ prefix: String) -> Bool {
        let wanted = folded(prefix)
        return !wanted.isEmpty && folded(name).starts(with: wanted)
    }

    /// Lower-cased, accents removed, `#`/`@` dropped, at most 64 characters.
    static func folded(_ name: String) -> [Character] {
        var text = name.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        while let first = text.first, first == "#" || first == "@" { text.removeFirst() }
        return Array(text.prefix(64))
    }

    private static func containsRun(_ haystack: [Character], _ needle: [Character]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    /// Optimal string alignment distance (Levenshtein plus adjacent transpositions); `limit + 1` once it is sure
    /// to exceed `limit`.
    static func editDistance(_ a: [Character], _ b: [Character], limit: Int) -> Int {
        if abs(a.count - b.count) > limit { return limit + 1 }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowMinimum = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { value = min(value, before[j - 2] + 1) }
                current[j] = value
                rowMinimum = min(rowMinimum, value)
            }
            if rowMinimum > limit { return limit + 1 }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }
}
