/// The search index's words for PostgreSQL: the C tokenizer's tokens (the very ones SQLite's FTS5 index holds:
/// folding, CJK words, English stems colocated with the exact word) as `tsvector` and `tsquery` text.
///
/// PostgreSQL's own parser never sees the text: a document is stored as the lexemes below, and a query is built
/// from lexemes, so both sides tokenize alike. Positions start at 1; a stem token shares its word's position, so
/// phrases (`<->`) work as on FTS5. The extra text (names, file titles, link words) is weight C, after a gap of 64
/// positions, so no phrase spans the text and the extra. Positions past 16,383 are PostgreSQL's limit (it keeps them
/// at 16,383).
enum PostgresTokens {
    /// Gap in positions between the text and the extra text.
    private static let extraGap = 64

    /// The tokens of `text`, with their positions (1-based) and whether each is a stem token.
    ///
    /// - Complexity: O(n) in the text's bytes.
    static func tokens(_ text: String, documents: Bool) -> [(token: String, position: Int)] {
        var position = 0
        return IndexTokenizer.tokens(in: text, stems: documents).map { token in
            if !token.isStem { position += 1 }
            return (token.text, max(1, position))
        }
    }

    /// The `tsvector` text of a message: its search text's tokens, then its extra text's (weight C).
    static func vector(text: String, extra: String) -> String {
        var out = ""
        let words = tokens(text, documents: true)
        let last = words.last?.position ?? 0
        for (token, position) in words {
            if !out.isEmpty { out += " " }
            out += lexeme(token) + ":" + String(min(position, 16_383))
        }
        for (token, position) in tokens(extra, documents: true) {
            if !out.isEmpty { out += " " }
            out += lexeme(token) + ":" + String(min(last + extraGap + position, 16_383)) + "C"
        }
        return out
    }

    /// A lexeme as `tsvector`/`tsquery` text: quoted, `'` and `\` doubled.
    static func lexeme(_ token: String) -> String {
        var out = "'"
        for character in token.unicodeScalars {
            if character == "'" || character == "\\" { out.unicodeScalars.append(character) }
            out.unicodeScalars.append(character)
        }
        return out + "'"
    }

    /// The `tsquery` text of one search term, or nil when it holds no searchable token. A word of several tokens
    /// (`e-mail`, a CJK run) is a phrase of them, as FTS5 reads a quoted string; with `variants`, a plain ASCII word
    /// also matches its English variants (`WordVariants`).
    static func query(_ term: SearchTerm, variants: Bool) -> String? {
        switch term.kind {
        case .word:
            let words = tokens(term.text, documents: false).map(\.token)
            guard !words.isEmpty else { return nil }
            guard variants, words.count == 1, let forms = WordVariants.variantTokens(of: term.text) else {
                return phrase(words)
            }
            return "(" + ([lexeme(words[0])] + forms.map(lexeme)).joined(separator: " | ") + ")"
        case .phrase:
            let words = tokens(term.text, documents: false).map(\.token)
            return words.isEmpty ? nil : phrase(words)
        case .prefix:
            let words = tokens(term.text, documents: false).map(\.token)
            guard let stem = words.last else { return nil }
            let head = words.dropLast().map(lexeme)
            return "(" + (head + [lexeme(stem) + ":*"]).joined(separator: " <-> ") + ")"
        }
    }

    /// Words in order, adjacent.
    private static func phrase(_ words: [String]) -> String {
        words.count == 1 ? lexeme(words[0]) : "(" + words.map(lexeme).joined(separator: " <-> ") + ")"
    }

    /// The `tsquery` of a search: every word (AND), none of the excluded ones; nil without words. With
    /// `typedForms`, every word in its typed form only (the exclusions keep every form).
    static func query(_ search: ResolvedSearch, typedForms: Bool = false) -> String? {
        let all = search.words.compactMap { query($0, variants: search.wordVariants && !typedForms) }
        let none = search.excluded.compactMap { query($0, variants: search.wordVariants) }
        guard !all.isEmpty else { return nil }
        return (all + none.map { "!" + $0 }).joined(separator: " & ")
    }

    /// The `tsquery` of the excluded words alone (a search without words: the rows must not match it).
    static func exclusion(_ search: ResolvedSearch) -> String? {
        let none = search.excluded.compactMap { query($0, variants: search.wordVariants) }
        return none.isEmpty ? nil : none.joined(separator: " | ")
    }
}
