import Foundation
import Testing

@testable import SlackIndex
@testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// `JSONText.strings` against `JSONDecoder`, the model: the same answer for every text, and the byte scan taking
/// exactly the texts `JSONText.array` writes without escapes.
@Suite struct JSONTextTests {
    static func decoded(_ text: String) -> [String]? {
        try? JSONDecoder().decode([String].self, from: Data(text.utf8))
    }

    @Test func writtenArraysReadBackThroughTheScanUnlessEscaped() {
        var rng = SeededGenerator(seed: 15)
        // Pieces with escapes (quote, backslash, controls), UTF-8 of every length, a slash, spaces and commas.
        let pieces = [
            "U0", "W1ABC", "é", "日本", "🦊", "\"", "\\", "\n", "\t", "\u{1}", "/", " ", ",", "]", "[", "",
            "\u{7F}", "\u{85}", "\u{2028}", "\u{FFFF}",
        ]
        for _ in 0..<3_000 {
            let strings = (0..<Int.random(in: 0...6, using: &rng)).map { _ in
                (0..<Int.random(in: 0...4, using: &rng)).map { _ in pieces.randomElement(using: &rng) ?? "" }.joined()
            }
            let text = JSONText.array(strings)
            #expect(JSONText.strings(text) == strings, "\(text)")
            #expect(Self.decoded(text) == strings, "\(text)")
            let escaped = strings.contains { $0.contains { "\"\\\n\t\u{1}".contains($0) } }
            #expect((JSONText.plainStrings(text) == nil) == escaped, "\(text)")
        }
    }

    @Test func otherTextsAnswerAsTheDecoderDoes() {
        let texts = [
            "", "[", "]", "[]", "[ ]", " []", "[] ", "[,]", "[\"a\",]", "[\"a\" ]", "[ \"a\"]", "[\"a\",,\"b\"]",
            "[\"a\"\"b\"]", "[\"a\" \"b\"]", "[\"a\",\"b\"]", "[\"a\", \"b\"]", "[\"a\\u0041\"]", "[\"a\\/b\"]",
            "[1]", "[null]", "[\"a\",1]", "[[\"a\"]]", "{\"a\":1}", "\"a\"", "[\"a\"", "[\"a]", "[\"\u{1}\"]",
            "[\"\"]", "[\"é\"]", "[\"a\"]x", "null",
        ]
        for text in texts {
            #expect(JSONText.strings(text) == Self.decoded(text), "\(text)")
        }
        #expect(JSONText.plainStrings("[\"a\", \"b\"]") == nil)
        #expect(JSONText.plainStrings("[\"U1\",\"U2\"]") == ["U1", "U2"])
    }
}
