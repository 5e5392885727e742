/// Words and "phrases" of a search box turned into a safe FTS5 expression (every token quoted).
public enum BasicQuery {
    /// The FTS5 expression ANDing every word and phrase, or nil when nothing searchable remains.
    ///
    /// - Complexity: O(n) in the query's length.
    public static func ftsExpression(_ text: String) -> String? {
        var parts: [String] = []
        var current = ""
        var inQuote = false
        func flush() {
            let cleaned = current.unicodeScalars.filter { $0.value >= 0x20 && $0 != "\"" }
            let token = String(String.UnicodeScalarView(cleaned))
            if token.unicodeScalars.contains(where: { $0.properties.isAlphabetic || $0.properties.numericType != nil })
            {
                parts.append("\"" + token + "\"")
            }
            current = ""
        }
        for character in text {
            if character == "\"" {
                flush()
                inQuote.toggle()
            } else if character.isWhitespace && !inQuote {
                flush()
            } else {
                current.append(character)
            }
        }
        flush()
        return parts.isEmpty ? nil : parts.joined(separator: " AND ")
    }
}
