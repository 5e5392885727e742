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

    /// The FTS5 expression for one term: `"word"`, `"a phrase"`, `"stem" *` or `("w1" OR "w2")`.
    /// - Complexity: O(n) in the length of the term.
    static func expression(for term: TextTerm) -> String? {
        switch term.kind {
        case .word, .phrase:
            return literal(term.text)
        case .prefix:
            return literal(term.text).map { $0 + " *" }
        case .anyWord(let words):
            // A prefix no word of the index has: nothing matches.
            guard !words.isEmpty else { return "\"\u{1}nomatch\"" }
            return "(" + words.compactMap(literal).joined(separator: " OR ") + ")"
        }
    }

    /// The expression every hit matches and the one no hit may match; either is nil when it has no term.
    ///
    /// With words to match, the exclusions go inside the MATCH (`(positive) NOT (negative)`): FTS5 checks them
    /// lazily, match by match, where `NOT IN (subquery)` would first collect every message holding the excluded
    /// word (~100 ms for a very common one). FTS5's `NOT` needs a left operand, so without words the negative
    /// part runs apart: `… AND rowid NOT IN (SELECT rowid FROM t WHERE t MATCH :negative)`.
    /// - Complexity: O(total length of the terms).
    static func match(_ search: ResolvedSearch) -> (positive: String?, negative: String?) {
        let (all, none) = expressions(words: search.words, excluded: search.excluded)
        if let all, let none { return ("(\(all)) NOT (\(none))", nil) }
        return (all, none)
    }

    /// The AND of `words` and the OR of `excluded`, each nil when it has no searchable term.
    static func expressions(words: [TextTerm], excluded: [TextTerm]) -> (positive: String?, negative: String?) {
        let positive = words.compactMap(expression(for:))
        let negative = excluded.compactMap(expression(for:))
        return (
            positive.isEmpty ? nil : positive.joined(separator: " AND "),
            negative.isEmpty ? nil : negative.joined(separator: " OR ")
        )
    }
}
