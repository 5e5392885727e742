import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore

/// Builds hostile search strings from a grammar-ish alphabet of Slack and FTS5 syntax fragments.
///
/// Ported from the standalone query parser package (`QueryFuzzSupport`); the fragment list also holds names that
/// exist in the fuzz archive (`ann`, `general`, `U1`, `C1`), so filters resolve and run SQL rather than stopping
/// at `SearchError.unknownUser`.
enum QueryFuzzer {
    /// Fragments that exercise the parser, the FTS5 compiler and the SQL built from filters.
    static let fragments: [String] = [
        " ", " ", " ", "  ", "\t", "\n", "\r\n", "\0", "\u{1}", "\u{7F}", "\u{85}", "\u{2028}", "\u{A0}",
        "\"", "\"", "\"", "\"\"", "\u{201C}", "\u{201D}", "'", "`",
        "(", ")", "NEAR", "NEAR(", "NEAR/3", "AND", "OR", "NOT", "and", "or", "*", "**", "^", ":", "::", "-", "--",
        "+", "{", "}", "[", "]", ",", ".", "!", "?", "#", "@", "<", ">", "|", "\\", "/", "//", "=", "~", "%",
        "a", "ab", "abc", "hello", "world", "budget", "x", "Z", "42", "2024", "2024-05-01", "2024-13-40",
        "2024-02-29", "2023-02-29", "05", "-05", "today", "yesterday", "soon", "may", "January", "sept", "dec",
        "in:", "-in:", "from:", "-from:", "to:", "with:", "before:", "after:", "on:", "during:", "has:", "is:",
        "IN:", "From:", "foo:", "body:", "t:", "http://", "https://example.com/a?b=c", "rowid:", "{body}:",
        "#general", "#", "@alice", "@", "me", "@me", "U0123ABCD9", "C0123ABCD9", "<@U123>", "<@U123|bob>",
        "<#C1|general>", "<#>", "<@>", ":tada:", ":+1:", "link", "file", "reaction", "pin", "thread",
        "🎉", "👩‍💻", "🇯🇵", "漢字", "日本語", "한국어", "Ελληνικά", "עברית", "مرحبا", "e\u{301}", "\u{301}",
        "\u{200B}", "\u{200D}", "\u{FEFF}", "\u{FFFD}", "\u{E000}", "𞤀", "𝔘", "Ⅻ", "½", "ß", "İ", "ﬁ",
        // Names that resolve in the fuzz archive, and SQL-looking text.
        "ann", "@ann", "Ann Lee", "\"Ann Lee\"", "general", "#general", "U1", "<@U1>", "<#C1>", "C1", "in:#general",
        "from:@ann", "to:@ann", "with:@ann", "in:@ann", "has::+1:", "is:thread", "'; DROP TABLE message; --",
        "search_extra:", "message_fts", "rank", "*:", "\"\" *", "'", "''", "%", "_", "\\\"",
    ]

    /// One random query: mostly fragment soup, sometimes random scalars or random UTF-8 bytes (decoded lossily,
    /// so invalid sequences become U+FFFD as they would when a shell hands over bad bytes).
    static func randomQuery(using rng: inout SeededGenerator) -> String {
        switch rng.next() % 10 {
        case 0:
            var bytes: [UInt8] = []
            for _ in 0..<Int(rng.next() % 48) {
                bytes.append(UInt8(truncatingIfNeeded: rng.next()))
            }
            return String(decoding: bytes, as: UTF8.self)
        case 1:
            var view = String.UnicodeScalarView()
            for _ in 0..<Int(rng.next() % 24) {
                let raw = UInt32(truncatingIfNeeded: rng.next() % 0x11_0000)
                view.append(Unicode.Scalar(raw) ?? "\u{FFFD}")
            }
            return String(view)
        default:
            var text = ""
            for _ in 0..<Int(rng.next() % 16) {
                text += fragments[Int(rng.next() % UInt64(fragments.count))]
            }
            return text
        }
    }

    /// A long query (about `length` scalars) of fragment soup, for linear-time checks.
    static func longQuery(length: Int, using rng: inout SeededGenerator) -> String {
        var view = String.UnicodeScalarView()
        var count = 0
        while count < length {
            let fragment = fragments[Int(rng.next() % UInt64(fragments.count))].unicodeScalars
            view.append(contentsOf: fragment)
            count += fragment.count
        }
        return String(view)
    }
}

/// A checker for the FTS5 subset that ``SearchQuery/ftsMatch()`` emits:
/// `item (" " op " " item)*`, where `item` is `"…"` (with `""` escapes) optionally followed by ` *`.
enum FTSSubsetValidator {
    /// Whether `expression` is a non-empty chain of well-formed items joined by `op` (`AND` or `OR`).
    static func isValid(_ expression: String, joinedBy op: String) -> Bool {
        let text = Array(expression.unicodeScalars)
        let separator = Array(" \(op) ".unicodeScalars)
        var index = 0
        while true {
            guard let end = literalEnd(text, from: index) else { return false }
            index = end
            if text[index...].starts(with: [" ", "*"]) { index += 2 }
            if index == text.count { return true }
            guard text[index...].starts(with: separator) else { return false }
            index += separator.count
        }
    }

    /// The index just past a well-formed literal starting at `start` that holds a letter or digit.
    private static func literalEnd(_ text: [Unicode.Scalar], from start: Int) -> Int? {
        guard start < text.count, text[start] == "\"" else { return nil }
        var index = start + 1
        var searchable = false
        while index < text.count {
            let scalar = text[index]
            if scalar == "\"" {
                if index + 1 < text.count, text[index + 1] == "\"" {
                    index += 2
                    continue
                }
                return searchable ? index + 1 : nil
            }
            if scalar.properties.generalCategory == .control { return nil }
            if scalar.properties.isAlphabetic || scalar.properties.numericType != nil { searchable = true }
            index += 1
        }
        return nil
    }
}

extension SearchQuery {
    /// The FTS5 expressions the store compiles for this query's terms (positive AND-chain, negative OR-chain),
    /// before the store folds the negative side into the positive one.
    func ftsMatch() -> (positive: String?, negative: String?) {
        FTS5Query.expressions(
            words: terms.filter { !$0.negated }, excluded: terms.filter(\.negated))
    }
}
