import Foundation

/// Builds a snippet with highlighted matches from the text and the query's terms, on the index's own tokens.
///
/// FTS5's `snippet()` needs its own index lookup per hit (`MATCH … AND rowid = ?`), which cost ~0.5 ms a hit for
/// very common words on 1M messages — most of such a query's time. The hits are already known to match; this only
/// decides what to show and bold. The text and the terms go through the index's tokenizer (`IndexTokenizer`, the
/// C one), so folding, CJK/Thai segmentation and English variants (the stem tokens) are the index's: a run of tokens
/// is bold when the index would match it. A prefix bolds every word it starts (the index may have searched only
/// the most frequent of them). A mismatch here can only change what is bolded, never which messages are found.
struct SnippetBuilder {
    /// One place of a term: the tokens it accepts, or any token starting with `prefix`.
    private struct Place {
        var tokens: Set<String>
        var prefix: String?

        func accepts(_ word: Word) -> Bool {
            if let prefix, word.token.hasPrefix(prefix) { return true }
            return tokens.contains(word.token) || word.stem.map(tokens.contains) == true
        }
    }

    /// A word of the text: its token, its stem token (when the index keeps one) and where it is.
    private struct Word {
        var token: String
        var stem: String?
        var range: Range<String.Index>
    }

    /// Each positive term as the places of its tokens (a phrase, or a word the tokenizer splits, has several).
    private let terms: [[Place]]

    /// - Parameters:
    ///   - terms: the query's terms (negated ones are left out).
    ///   - variants: also bold the English variants of unquoted words (as the search matched them).
    init(terms: [SearchQuery.Term], variants: Bool = false) {
        self.terms = terms.filter { !$0.negated }.compactMap { term in
            let tokens = IndexTokenizer.tokens(in: term.text, stems: false).map(\.text)
            guard let last = tokens.last else { return nil }
            switch term.kind {
            case .word where tokens.count == 1:
                // As `FTS5Query.compiled`: the word, or any of its variant tokens.
                let forms = variants ? WordVariants.variantTokens(of: term.text) ?? [] : []
                return [Place(tokens: Set([last] + forms))]
            case .prefix:
                return tokens.dropLast().map { Place(tokens: [$0]) } + [Place(tokens: [], prefix: last)]
            case .word, .phrase:
                return tokens.map { Place(tokens: [$0]) }
            }
        }
    }

    /// The text around the first match (about `width` words), matches wrapped in U+E000 … U+E001; the words of a
    /// phrase separated by spaces share one highlight.
    ///
    /// - Complexity: O(n × t) in the text's words and the terms' places.
    func snippet(_ text: String, width: Int = 24) -> String {
        // Only the indexed part can hold the match (older archives indexed whole texts).
        let text = MessagePreparer.indexable(text)
        let words = Self.words(in: text)
        guard !words.isEmpty else { return text }
        var marked = [Bool](repeating: false, count: words.count)
        /// Words after the first of a phrase match: they join the previous word's highlight.
        var continuation = Set<Int>()
        for places in terms where places.count <= words.count {
            for start in 0...(words.count - places.count)
            where places.indices.allSatisfy({ places[$0].accepts(words[start + $0]) }) {
                for index in start..<(start + places.count) { marked[index] = true }
                for index in (start + 1)..<(start + places.count) { continuation.insert(index) }
            }
        }
        let first = marked.firstIndex(of: true) ?? 0
        let startWord = max(0, min(first - width / 3, words.count - width))
        let endWord = min(words.count, startWord + width)
        var out = startWord > 0 ? "…" : ""
        var cursor = startWord > 0 ? words[startWord].range.lowerBound : text.startIndex
        for index in startWord..<endWord {
            let range = words[index].range
            let gap = text[cursor..<range.lowerBound]
            if marked[index], continuation.contains(index), index > startWord, !gap.isEmpty,
                gap.allSatisfy({ $0 == " " }), out.hasSuffix(Highlight.end)
            {
                out.removeLast(Highlight.end.count)
                out += gap + text[range] + Highlight.end
            } else if marked[index] {
                out += gap + Highlight.start + text[range] + Highlight.end
            } else {
                out += gap + text[range]
            }
            cursor = range.upperBound
        }
        out += endWord < words.count ? "…" : String(text[cursor...])
        return out
    }

    /// The text's words as the index tokenizes it, each with its stem token.
    private static func words(in text: String) -> [Word] {
        var words: [Word] = []
        var index = text.utf8.startIndex
        var offset = 0
        func position(_ target: Int) -> String.Index {
            index = text.utf8.index(index, offsetBy: target - offset)
            offset = target
            return index
        }
        for token in IndexTokenizer.tokens(in: text, stems: true) {
            if token.isStem {
                if !words.isEmpty { words[words.count - 1].stem = token.text }
                continue
            }
            guard token.start >= offset, token.end >= token.start, token.end <= text.utf8.count else { continue }
            let lower = position(token.start)
            words.append(Word(token: token.text, stem: nil, range: lower..<position(token.end)))
        }
        return words
    }
}
