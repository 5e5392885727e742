import Foundation

/// Builds a snippet with highlighted matches in Swift, from the text and the query's terms.
///
/// FTS5's `snippet()` needs its own index lookup per hit (`MATCH … AND rowid = ?`), which cost ~0.5 ms a hit for
/// very common words on 1M messages — most of such a query's time. The hits are already known to match; this only
/// decides what to show and bold: words are compared case- and accent-insensitively, prefixes by their stem, phrases
/// as runs of words, and CJK/Thai terms as substrings (those scripts have no spaces). A mismatch here can only
/// change what is bolded, never which messages are found.
struct SnippetBuilder {
    private let words: Set<String>
    private let prefixes: [String]
    private let phrases: [[String]]
    private let substrings: [String]
    /// Stems of the unquoted words: a word with one of these stems is one of their variants.
    private let stems: Set<String>
    /// The first letters of `stems` (a stem keeps its word's first letter): only words starting so are stemmed.
    private let stemInitials: Set<Character>

    /// - Parameters:
    ///   - terms: the query's positive terms.
    ///   - variants: also bold the English variants of unquoted words (as the search matched them).
    init(terms: [SearchQuery.Term], variants: Bool = false) {
        var words = Set<String>()
        var prefixes: [String] = []
        var phrases: [[String]] = []
        var substrings: [String] = []
        for term in terms where !term.negated {
            let parts = SnippetBuilder.tokens(in: term.text).map { SnippetBuilder.fold(String(term.text[$0])) }
            for part in parts where part.unicodeScalars.contains(where: SnippetBuilder.isSpaceless) {
                substrings.append(part)
            }
            switch term.kind {
            case .word: if parts.count == 1 { words.insert(parts[0]) } else if parts.count > 1 { phrases.append(parts) }
            case .prefix: prefixes += parts.prefix(1)
            case .phrase: if parts.count == 1 { words.insert(parts[0]) } else if parts.count > 1 { phrases.append(parts) }
            }
        }
        self.words = words
        self.prefixes = prefixes
        self.phrases = phrases
        self.substrings = substrings
        let stems =
            variants
            ? Set(terms.filter { !$0.negated && $0.kind == .word }.compactMap { WordVariants.stem($0.text) }) : []
        self.stems = stems
        self.stemInitials = Set(stems.compactMap(\.first))
    }

    /// Whether `word` (folded) is an English variant of a query word.
    private func isVariant(_ word: String) -> Bool {
        guard let first = word.first, stemInitials.contains(first), let stem = WordVariants.stem(word) else {
            return false
        }
        return stems.contains(stem)
    }

    /// The text around the first match (about `width` words), matches wrapped in U+E000 … U+E001.
    ///
    /// - Complexity: O(n) in the text's length.
    func snippet(_ text: String, width: Int = 24) -> String {
        // Only the indexed part can hold the match (older archives indexed whole texts).
        let text = MessagePreparer.indexable(text)
        let ranges = SnippetBuilder.tokens(in: text)
        guard !ranges.isEmpty else { return text }
        let folded = ranges.map { SnippetBuilder.fold(String(text[$0])) }
        var marked = [Bool](repeating: false, count: ranges.count)
        /// Tokens matched only through a substring (CJK/Thai inside a longer run): bold just that part.
        var partial: [Int: String] = [:]
        for (index, word) in folded.enumerated() {
            if words.contains(word) || prefixes.contains(where: { word.hasPrefix($0) })
                || isVariant(word)
            {
                marked[index] = true
            } else if let part = substrings.first(where: { word.contains($0) }) {
                marked[index] = true
                partial[index] = part
            }
        }
        /// Tokens after the first of a phrase match: they join the previous token's highlight.
        var phraseContinuation = Set<Int>()
        for phrase in phrases where phrase.count <= folded.count {
            for start in 0...(folded.count - phrase.count) where Array(folded[start..<(start + phrase.count)]) == phrase {
                for index in start..<(start + phrase.count) { marked[index] = true }
                for index in (start + 1)..<(start + phrase.count) { phraseContinuation.insert(index) }
            }
        }
        let first = marked.firstIndex(of: true) ?? 0
        let startToken = max(0, min(first - width / 3, ranges.count - width))
        let endToken = min(ranges.count, startToken + width)
        var out = startToken > 0 ? "…" : ""
        var cursor = startToken > 0 ? ranges[startToken].lowerBound : text.startIndex
        for index in startToken..<endToken {
            let range = ranges[index]
            out += text[cursor..<range.lowerBound]
            if marked[index], let part = partial[index], let inner = text[range].range(of: part) {
                out += text[range.lowerBound..<inner.lowerBound] + Highlight.start + text[inner] + Highlight.end
                    + text[inner.upperBound..<range.upperBound]
            } else if marked[index] {
                // The words of a phrase separated by spaces share one highlight.
                let gap = index > startToken ? text[ranges[index - 1].upperBound..<range.lowerBound] : ""
                if phraseContinuation.contains(index) && index > startToken && partial[index - 1] == nil && !gap.isEmpty
                    && gap.allSatisfy({ $0 == " " }), out.hasSuffix(Highlight.end + gap)
                {
                    out.removeLast(Highlight.end.count + gap.count)
                    out += gap + text[range] + Highlight.end
                } else {
                    out += Highlight.start + text[range] + Highlight.end
                }
            } else {
                out += text[range]
            }
            cursor = range.upperBound
        }
        if endToken < ranges.count {
            out += "…"
        } else {
            out += text[cursor...]
        }
        return out
    }

    /// Word ranges: runs of letters, digits and combining marks.
    static func tokens(in text: String) -> [Range<String.Index>] {
        var ranges: [Range<String.Index>] = []
        var start: String.Index?
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            let isWord = character.isLetter || character.isNumber
            if isWord && start == nil { start = index }
            if !isWord, let s = start {
                ranges.append(s..<index)
                start = nil
            }
            index = text.index(after: index)
        }
        if let start { ranges.append(start..<text.endIndex) }
        return ranges
    }

    /// Case and accent folding like the index's (İ → i, é → e, ł → l).
    static func fold(_ word: String) -> String {
        IndexText.foldingStrokes(word.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil))
            .replacingOccurrences(of: "\u{307}", with: "")
    }

    /// Scripts written without spaces between words (matched as substrings).
    static func isSpaceless(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3040...0x30FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x0E00...0x0EFF, 0x1000...0x109F,
            0x1780...0x17FF, 0x20000...0x2FFFF:
            return true
        default:
            return false
        }
    }
}
