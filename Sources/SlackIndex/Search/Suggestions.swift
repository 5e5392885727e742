import Foundation

/// A correction for one word of a query that matched nothing or almost nothing ("did you mean").
public struct WordSuggestion: Sendable, Hashable, Codable {
    /// The word as typed.
    public var word: String
    /// A word of the archive one edit away (a letter added, removed, replaced or two letters swapped).
    public var replacement: String
    /// How many messages hold the replacement.
    public var messages: Int

    public init(word: String, replacement: String, messages: Int) {
        self.word = word
        self.replacement = replacement
        self.messages = messages
    }
}

/// Spelling candidates for "did you mean": every string one edit from a word (Damerau: insertion, deletion,
/// substitution, adjacent transposition), ranked by how often the archive uses them and how likely the typo is.
enum SpellingCandidates {
    /// Words of at most this many characters are corrected; longer ones are not typed words.
    static let maxLength = 32

    /// One edit away from `word` (already folded), without `word` itself; only for words of 3 to `maxLength`
    /// letters. The alphabet is a–z plus the word's own letters.
    /// - Complexity: O(n × a) strings for n letters and an alphabet of a letters (~55 n for English).
    static func edits(of word: String) -> [(candidate: String, likely: Bool)] {
        let letters = Array(word)
        guard letters.count >= 3, letters.count <= maxLength, letters.allSatisfy(\.isLetter) else { return [] }
        var alphabet = Array("abcdefghijklmnopqrstuvwxyz")
        for letter in letters where !alphabet.contains(letter) { alphabet.append(letter) }
        var seen: Set<String> = [word]
        var out: [(String, Bool)] = []
        func add(_ candidate: [Character], likely: Bool) {
            let text = String(candidate)
            if seen.insert(text).inserted { out.append((text, likely)) }
        }
        for i in letters.indices {
            var deleted = letters
            deleted.remove(at: i)
            // A doubled or repeated letter typed once too often is a likely slip.
            add(deleted, likely: i > 0 && letters[i - 1] == letters[i])
            if i + 1 < letters.count {
                var swapped = letters
                swapped.swapAt(i, i + 1)
                add(swapped, likely: true)
            }
            for letter in alphabet where letter != letters[i] {
                var replaced = letters
                replaced[i] = letter
                add(replaced, likely: keyboardAdjacent(letters[i], letter))
            }
        }
        for i in 0...letters.count {
            for letter in alphabet {
                var inserted = letters
                inserted.insert(letter, at: i)
                add(inserted, likely: (i > 0 && letters[i - 1] == letter) || (i < letters.count && letters[i] == letter))
            }
        }
        return out
    }

    /// QWERTY rows; two keys are adjacent when they are neighbours in a row or diagonally in the next row.
    private static let rows = ["qwertyuiop", "asdfghjkl", "zxcvbnm"].map { Array($0) }

    /// Whether `a` and `b` are neighbouring keys on a QWERTY keyboard (a likely substitution).
    static func keyboardAdjacent(_ a: Character, _ b: Character) -> Bool {
        guard let (ra, ca) = position(a), let (rb, cb) = position(b) else { return false }
        if ra == rb { return abs(ca - cb) == 1 }
        // Rows are staggered: a key touches the two keys below it at the same and the previous column.
        if abs(ra - rb) != 1 { return false }
        let (upperColumn, lowerColumn) = ra < rb ? (ca, cb) : (cb, ca)
        return lowerColumn == upperColumn || lowerColumn == upperColumn - 1
    }

    private static func position(_ key: Character) -> (Int, Int)? {
        for (r, row) in rows.enumerated() {
            if let c = row.firstIndex(of: key) { return (r, c) }
        }
        return nil
    }

    /// The best `limit` candidates among those the archive holds (`frequencies`: messages per candidate), most
    /// plausible first: score = ln(1 + messages) + 1.5 for a likely slip (swap, adjacent key, doubled letter).
    static func best(
        _ candidates: [(candidate: String, likely: Bool)], frequencies: [String: Int], atLeast: Int, limit: Int
    ) -> [(word: String, messages: Int)] {
        var scored: [(word: String, messages: Int, score: Double)] = []
        for (candidate, likely) in candidates {
            guard let messages = frequencies[candidate], messages >= atLeast else { continue }
            scored.append((candidate, messages, log(1 + Double(messages)) + (likely ? 1.5 : 0)))
        }
        scored.sort { $0.score != $1.score ? $0.score > $1.score : $0.word < $1.word }
        return scored.prefix(limit).map { ($0.word, $0.messages) }
    }
}

extension SearchEngine {
    /// A query word whose messages number at most this is checked for a likelier spelling.
    package static let rareWordMessages = 2

    /// Corrections for the query's words that the archive holds at most `rareWordMessages` times: for each, up to
    /// `limit` words one edit away that are used more (at least 10 times as often, and in 3 messages, when the word
    /// itself occurs). Quoted words, prefixes and words with digits are left as typed.
    ///
    /// - Complexity: one vocabulary lookup per query word and per candidate (~55 per letter): a few ms for a word.
    /// With `variants`, a word's own count includes its English variants (`budgets` is not corrected when
    /// `budget` is used), as the search matched them.
    public func suggestions(for query: SearchQuery, variants: Bool = true, limit: Int = 3) throws -> [WordSuggestion] {
        var out: [WordSuggestion] = []
        for term in query.terms where term.kind == .word && !term.negated {
            let folded = term.text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            let candidates = SpellingCandidates.edits(of: folded)
            guard !candidates.isEmpty else { continue }
            let forms = [folded] + (variants ? WordVariants.variantTokens(of: folded) ?? [] : [])
            let own = try archive.messagesHolding(words: forms).values.reduce(0, +)
            guard own <= SearchEngine.rareWordMessages else { continue }
            let frequencies = try archive.messagesHolding(words: candidates.map(\.candidate))
            let atLeast = own == 0 ? 1 : max(3, own * 10)
            for (word, messages) in SpellingCandidates.best(
                candidates, frequencies: frequencies, atLeast: atLeast, limit: limit)
            {
                out.append(WordSuggestion(word: term.text, replacement: word, messages: messages))
            }
        }
        return out
    }

    /// The query with each suggested word replaced by its first (best) suggestion.
    public func corrected(_ query: SearchQuery, with suggestions: [WordSuggestion]) -> SearchQuery {
        var corrected = query
        for index in corrected.terms.indices where corrected.terms[index].kind == .word {
            if let best = suggestions.first(where: { $0.word == corrected.terms[index].text }) {
                corrected.terms[index].text = best.replacement
            }
        }
        corrected.notes = []
        return corrected
    }
}
