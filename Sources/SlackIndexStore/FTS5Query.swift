import CSlackTokenizer

/// What the search index tokenizes: letters and digits (general category L* or N*).
package enum IndexText {
    /// Whether a scalar is a letter or digit, i.e. something the index holds.
    package static func isSearchable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber:
            return true
        default:
            return false
        }
    }

    /// Whether `text` is ASCII letters and digits only: one token of the index, whatever the tokenizer's rules
    /// (a word it would split, `node.js`, `e-mail`, Japanese without spaces, is searched as a phrase).
    package static func isASCIIWord(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }
    }

    /// Whether `text` holds anything the index could match.
    package static func isSearchable(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: isSearchable)
    }
}

/// Compiles a search's words into SQLite FTS5 `MATCH` expressions that cannot be syntax errors: the only place
/// FTS5 query text is written.
///
/// Every term becomes an FTS5 string literal (`"..."`, embedded `"` doubled), so FTS5 operators and column
/// filters in user input (`NEAR`, `AND`, `^`, `body:x`, `*`, `(`) are only ever searched as text.
enum FTS5Query {
    /// A word of the index a prefix stands for, with the number of messages holding it (the vocabulary's count).
    struct PrefixWord: Equatable {
        var text: String
        var documents: Int
    }

    /// Prefix stems (`SearchTerm.text`) → the index's words that a search takes for them.
    typealias PrefixExpansions = [String: [PrefixWord]]

    /// The FTS5 string literal for `text`: control characters become spaces, `"` is doubled.
    ///
    /// Returns nil when the text holds no letter or digit, because it would tokenize to an empty phrase
    /// (which matches nothing and would make an `AND` chain match nothing).
    /// - Complexity: O(n) in the length of `text`.
    static func literal(_ text: String) -> String? {
        var body = String.UnicodeScalarView()
        var searchable = false
        for scalar in text.unicodeScalars {
            if scalar.properties.generalCategory == .control {
                body.append(" ")
            } else {
                if scalar == "\"" { body.append("\"") }
                body.append(scalar)
                searchable = searchable || IndexText.isSearchable(scalar)
            }
        }
        return searchable ? "\"" + String(body) + "\"" : nil
    }

    /// The FTS5 expression for one term: `"word"`, `"a phrase"`, `"stem" *` or `("w1" OR "w2")`; with
    /// `variants`, a word of plain ASCII letters also matches its English variants: `("deploys" OR "␁deploy" OR
    /// "deploy")` (see ``WordVariants``).
    /// - Complexity: O(n) in the length of the term.
    static func expression(for term: SearchTerm, variants: Bool = false, expansions: PrefixExpansions = [:]) -> String? {
        compiled(term, group: 0, variants: variants, expansions: expansions)?.expression
    }

    /// The expression for one term and one rank-spec entry per FTS5 phrase in it (`"0e 0v"`: see
    /// `slackindex_rank` in `Sources/CSlackTokenizer/slack_rank.c`): a word and its variants share group `group`,
    /// every other phrase gets a group of its own, numbered from `group`. Returns the next free group too.
    /// A prefix in `expansions` matches any of its words there instead (see `SQLiteArchive.expandingPrefix`).
    static func compiled(_ term: SearchTerm, group: Int, variants: Bool, expansions: PrefixExpansions = [:])
        -> (expression: String, spec: [String], next: Int)?
    {
        if term.kind == .prefix, let words = expansions[term.text] {
            // A prefix no word of the index has: nothing matches.
            // Each word is a group of its own, whose IDF would count its messages by reading its whole doclist
            // (`xQueryPhrase`): 64 walks for a common prefix, most of its time. The vocabulary read gave the counts.
            let known = words.compactMap { word in literal(word.text).map { ($0, word.documents) } }
            guard !known.isEmpty else { return ("\"\u{1}nomatch\"", ["\(group)e"], group + 1) }
            let spec = known.indices.map { "\(group + $0)e@\(known[$0].1)" }
            return ("(" + known.map(\.0).joined(separator: " OR ") + ")", spec, group + known.count)
        }
        switch term.kind {
        case .word:
            guard let exact = literal(term.text) else { return nil }
            guard variants, let forms = WordVariants.variantTokens(of: term.text) else {
                return (exact, ["\(group)e"], group + 1)
            }
            let phrases = [exact] + forms.map { "\"" + $0 + "\"" }
            return (
                "(" + phrases.joined(separator: " OR ") + ")",
                ["\(group)e"] + forms.map { _ in "\(group)v" }, group + 1
            )
        case .phrase:
            return literal(term.text).map { ($0, ["\(group)e"], group + 1) }
        case .prefix:
            return literal(term.text).map { ($0 + " *", ["\(group)e"], group + 1) }
        }
    }

    /// The expression every hit matches and the one no hit may match; either is nil when it has no term.
    ///
    /// With words to match, the exclusions go inside the MATCH (`(positive) NOT (negative)`): FTS5 checks them
    /// lazily, match by match, where `NOT IN (subquery)` would first collect every message holding the excluded
    /// word (~100 ms for a very common one). FTS5's `NOT` needs a left operand, so without words the negative
    /// part runs apart: `… AND rowid NOT IN (SELECT rowid FROM t WHERE t MATCH :negative)`.
    /// - Complexity: O(total length of the terms).
    static func match(_ search: ResolvedSearch, expansions: PrefixExpansions = [:]) -> (positive: String?, negative: String?) {
        let (all, none) = expressions(
            words: search.words, excluded: search.excluded, variants: search.wordVariants, expansions: expansions)
        if let all, let none { return ("(\(all)) NOT (\(none))", nil) }
        return (all, none)
    }

    /// `match(search).positive` with every word in its typed form only (exclusions keep every form) and its rank
    /// spec; nil when that is the same expression (variants off, or no word has any).
    static func exactForms(_ search: ResolvedSearch, expansions: PrefixExpansions = [:])
        -> (match: String, rankSpec: String)?
    {
        guard search.wordVariants else { return nil }
        var typed = search
        typed.wordVariants = false
        let (words, _) = expressions(words: search.words, excluded: [], variants: false, expansions: expansions)
        let (_, none) = expressions(words: [], excluded: search.excluded, variants: true)
        guard let words else { return nil }
        let exact = none.map { "(\(words)) NOT (\($0))" } ?? words
        guard exact != match(search, expansions: expansions).positive else { return nil }
        return (exact, rankSpec(typed, expansions: expansions, negativeVariants: true))
    }

    /// The rank spec of `match(search).positive` for `slackindex_rank`: one entry per phrase of the positive
    /// words, in order (the excluded ones, which no hit holds, get groups of their own by default). With a single
    /// group it starts with `!`: the IDF is the same for every hit, so the function need not read the phrases'
    /// whole doclists to count their documents (most of a common word's ranking time).
    ///
    /// The excluded words' phrases (after the positive ones in `(positive) NOT (negative)`) are marked `x`: no hit
    /// holds them, so their documents are not counted (a common excluded word's whole doclist, read for an IDF
    /// that scores nothing). `negativeVariants`: whether the exclusions were compiled with their variants.
    static func rankSpec(_ search: ResolvedSearch, expansions: PrefixExpansions = [:], negativeVariants: Bool? = nil)
        -> String
    {
        var spec: [String] = []
        var group = 0
        for term in search.words {
            guard let part = compiled(term, group: group, variants: search.wordVariants, expansions: expansions)
            else { continue }
            spec += part.spec
            group = part.next
        }
        // Also with one group, where nothing is counted: phrases after them (the scope's, `IndexScope`) need
        // their entries in place.
        for term in search.excluded {
            let phrases = compiled(term, group: 0, variants: negativeVariants ?? search.wordVariants)?.spec.count
            spec += Array(repeating: "\(group)x", count: phrases ?? 0)
        }
        return (group == 1 ? "!" : "") + spec.joined(separator: " ")
    }

    /// The AND of `words` and the OR of `excluded`, each nil when it has no searchable term.
    /// Only `words` take `expansions` (an excluded prefix stays a prefix).
    static func expressions(
        words: [SearchTerm], excluded: [SearchTerm], variants: Bool = false, expansions: PrefixExpansions = [:]
    ) -> (positive: String?, negative: String?) {
        let positive = words.compactMap { expression(for: $0, variants: variants, expansions: expansions) }
        let negative = excluded.compactMap { expression(for: $0, variants: variants) }
        return (
            positive.isEmpty ? nil : positive.joined(separator: " AND "),
            negative.isEmpty ? nil : negative.joined(separator: " OR ")
        )
    }
}
