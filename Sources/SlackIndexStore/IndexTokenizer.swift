import CSlackTokenizer

/// A text's tokens as the index makes them (`Sources/CSlackTokenizer`): folded words (case, accents, strokes,
/// NFKC), CJK and Thai segmented by ICU, each with its byte range in the text; with stems, a word's English stem
/// token (`␁deploy`) follows it at the same range. What a snippet must see to highlight exactly what matched.
package enum IndexTokenizer {
    package struct Token: Sendable, Equatable {
        /// The folded token (a stem token starts with U+0001).
        package var text: String
        /// Its UTF-8 byte range in the tokenized text.
        package var start: Int
        package var end: Int
        /// A stem token, at the same place as the word before it.
        package var isStem: Bool
    }

    /// The tokens of `text`, in order (a stem token right after its word).
    /// - Complexity: O(n) in the text's length.
    package static func tokens(in text: String, stems: Bool) -> [Token] {
        tokens(in: text, mode: stems ? 1 : 0)
    }

    /// The tokens a phrase query of `text` asks the index for (tokenize = 'slackindex pairs', migration v20): its
    /// words, each that documents pair with the word before it as that pair (`␂size␂the`).
    package static func phraseQueryTokens(in text: String) -> [Token] {
        tokens(in: text, mode: 2)
    }

    /// `slackindex_tokenize`'s modes: 0 a query word, 1 a stored text with stems, 2 a phrase query with pairs.
    private static func tokens(in text: String, mode: Int32) -> [Token] {
        final class Collector {
            var tokens: [Token] = []
        }
        let collector = Collector()
        var text = text
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                _ = slackindex_tokenize(
                    chars.baseAddress, Int32(clamping: chars.count), mode,
                    Unmanaged.passUnretained(collector).toOpaque()
                ) { context, colocated, bytes, length, start, end in
                    guard let context, let bytes else { return 0 }
                    let collector = Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue()
                    let token = String(
                        decoding: UnsafeRawBufferPointer(start: bytes, count: Int(length)), as: UTF8.self)
                    collector.tokens.append(
                        Token(text: token, start: Int(start), end: Int(end), isStem: colocated != 0))
                    return 0
                }
            }
        }
        return collector.tokens
    }
}
