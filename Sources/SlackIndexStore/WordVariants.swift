import CSlackTokenizer

/// English word variants: the inflectional stem (Porter2 steps 0–1c) the index stores beside each plain ASCII word,
/// and the tokens a query word asks for to match all its forms.
///
/// The tokenizer (`Sources/CSlackTokenizer`) emits, at the position of every word of 3 to 64 plain ASCII letters
/// whose stem differs from it, a second token: the marker byte U+0001 then the stem (`deployed` → `deployed` and
/// `␁deploy`). A word whose stem is itself (`deploy`) gets no second token. So the variants of a word are the
/// stem token, plus the stem as a word when the stem is its own stem. Words with digits, accents or other scripts
/// have no variants: English rules would mangle them.
package enum WordVariants {
    /// The inflectional stem of `word` (lowercased; Porter2 steps 0–1c, `english_stemmer.c`), or nil when the index
    /// keeps no stem for such a word: fewer than 3 or more than 64 characters, or anything but ASCII letters.
    /// - Complexity: O(n) in the length of the word.
    package static func stem(_ word: String) -> String? {
        let utf8 = Array(word.utf8)
        guard utf8.count >= 3, utf8.count <= Int(SLACKINDEX_MAX_TOKEN_BYTES),
            utf8.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
        else { return nil }
        let lower = utf8.map { $0 | 0x20 }
        var out = [UInt8](repeating: 0, count: lower.count)
        let length = lower.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { output in
                input.withMemoryRebound(to: CChar.self) { word in
                    output.withMemoryRebound(to: CChar.self) { stem in
                        slackindex_stem(word.baseAddress, Int32(word.count), stem.baseAddress)
                    }
                }
            }
        }
        guard length > 0, Int(length) <= out.count else { return nil }
        return String(decoding: out[0..<Int(length)], as: UTF8.self)
    }

    /// The FTS5 string contents (without quotes) that find the other forms of `word`: the stem token, and the stem
    /// itself when it is a word the index holds as its own stem. Nil when the word has no variants.
    package static func variantTokens(of word: String) -> [String]? {
        guard let stem = stem(word) else { return nil }
        var tokens = ["\u{1}" + stem]
        if stem != word.lowercased(), self.stem(stem) == stem { tokens.append(stem) }
        return tokens
    }

    /// Whether two words are forms of one another (the same stem), e.g. for highlighting.
    package static func areVariants(_ a: String, _ b: String) -> Bool {
        guard let left = stem(a) else { return false }
        return left == stem(b)
    }
}
