/// Compiles search terms into SQLite FTS5 `MATCH` expressions that cannot be syntax errors.
///
/// Every term becomes an FTS5 string literal (`"..."`, embedded `"` doubled), so FTS5 operators and column
/// filters in user input (`NEAR`, `AND`, `^`, `body:x`, `*`, `(`) are only ever searched as text.
public enum FTSExpression {
    /// The FTS5 string literal for `text`: control characters become spaces, `"` is doubled.
    ///
    /// Returns nil when the text holds no letter or digit, because it would tokenize to an empty phrase
    /// (which matches nothing and would make an `AND` chain match nothing).
    /// - Complexity: O(n) in the length of `text`.
    public static func literal(_ text: String) -> String? {
        var body = String.UnicodeScalarView()
        var searchable = false
        for scalar in text.unicodeScalars {
            if scalar.properties.generalCategory == .control {
                body.append(" ")
            } else {
                if scalar == "\"" { body.append("\"") }
                body.append(scalar)
                searchable = searchable || SyntaxText.isSearchable(scalar)
            }
        }
        return searchable ? "\"" + String(body) + "\"" : nil
    }

    /// The FTS5 expression for one term, ignoring its negation: `"word"`, `"a phrase"` or `"stem" *`.
    /// - Complexity: O(n) in the length of the term.
    public static func expression(for term: SearchQuery.Term) -> String? {
        guard let literal = literal(term.text) else { return nil }
        return term.kind == .prefix ? literal + " *" : literal
    }
}

extension SearchQuery {
    /// FTS5 `MATCH` expressions for the free-text terms.
    ///
    /// `positive` ANDs the non-negated terms; `negative` ORs the negated ones. FTS5's `NOT` needs a left
    /// operand, so run the negative part separately:
    /// `… WHERE t MATCH :positive AND rowid NOT IN (SELECT rowid FROM t WHERE t MATCH :negative)`.
    /// Either side is nil when it has no terms (a filter-only query has `positive == nil`: match all rows).
    /// Terms with no letter or digit are skipped.
    /// - Complexity: O(total length of the terms).
    public func ftsMatch() -> (positive: String?, negative: String?) {
        let positive = terms.filter { !$0.negated }.compactMap(FTSExpression.expression(for:))
        let negative = terms.filter(\.negated).compactMap(FTSExpression.expression(for:))
        return (
            positive.isEmpty ? nil : positive.joined(separator: " AND "),
            negative.isEmpty ? nil : negative.joined(separator: " OR ")
        )
    }
}
