import Foundation
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// The slackindex tokenizer as search sees it: folding, CJK inside sentences, emoji shortcodes.
@Suite struct TokenizerTests {
    static func archive() throws -> Archive {
        let day = #"""
            [{"type":"message","user":"U1","text":"party time :tada: and :white_check_mark: done","ts":"1700000000.000100"},
             {"type":"message","user":"U1","text":"Straße in İSTANBUL, cafe\u0301 ouvert","ts":"1700000000.000200"},
             {"type":"message","user":"U1","text":"明日は東京オフィスで会議があります","ts":"1700000000.000300"},
             {"type":"message","user":"U1","text":"ภาษาไทยเป็นภาษาที่สวยงาม","ts":"1700000000.000400"},
             {"type":"message","user":"U1","text":"ΑΘΗΝΑ και Москва","ts":"1700000000.000500"},
             {"type":"message","user":"U1","text":"Zażółć gęślą jaźń w København","ts":"1700000000.000600"},
             {"type":"message","user":"U1","text":"the \uFB01nal \uFB01le is ready","ts":"1700000000.000700"},
             {"type":"message","user":"U1","text":"\uFF44\uFF45\uFF50\uFF4C\uFF4F\uFF59 today","ts":"1700000000.000800"}]
            """#
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.minimalExport(days: ["2023-11-14": day]).path)
        return archive
    }

    static let cases: [(String, String)] = [
        ("tada", "1700000000.000100"), (":tada:", "1700000000.000100"),
        ("white_check_mark", "1700000000.000100"), (":white_check_mark:", "1700000000.000100"),
        ("strasse", "1700000000.000200"), ("istanbul", "1700000000.000200"), ("café", "1700000000.000200"),
        ("cafe", "1700000000.000200"), ("東京", "1700000000.000300"), ("会議", "1700000000.000300"),
        ("ภาษา", "1700000000.000400"), ("αθηνα", "1700000000.000500"), ("москва", "1700000000.000500"),
        // Stroke letters fold as accented ones do (issue 55: ł did not).
        ("zazolc", "1700000000.000600"), ("Zażółć", "1700000000.000600"), ("gesla", "1700000000.000600"),
        ("kobenhavn", "1700000000.000600"), ("københavn", "1700000000.000600"),
        // NFKC: a ligature and fullwidth letters are the plain words.
        ("file", "1700000000.000700"), ("final", "1700000000.000700"), ("deploy", "1700000000.000800"),
    ]

    @Test(arguments: cases)
    func finds(query: String, ts: String) throws {
        let hits = try SearchEngine(archive: Self.archive()).search(query).hits
        #expect(hits.map(\.message.ts) == [ts])
    }

    /// The snippet highlights what the index matched: it is cut on the index's own tokens (issue 49). Its Swift
    /// approximation before highlighted nothing in "ﬁle" or "ｄｅｐｌｏｙ" (no NFKC).
    @Test(arguments: cases)
    func highlightsWhatMatched(query: String, ts: String) throws {
        let hit = try #require(try SearchEngine(archive: Self.archive()).search(query).hits.first)
        let marked = hit.snippet.split(separator: Highlight.start, omittingEmptySubsequences: false).dropFirst()
            .compactMap { $0.split(separator: Highlight.end, omittingEmptySubsequences: false).first.map(String.init) }
        // The highlighted pieces' tokens, in order, hold the query's (`white_check_mark` is three highlights).
        let highlighted = marked.flatMap { IndexTokenizer.tokens(in: $0, stems: false).map(\.text) }
        let wanted = IndexTokenizer.tokens(in: query, stems: false).map(\.text)
        #expect(
            !wanted.isEmpty && highlighted.count >= wanted.count
                && (0...(highlighted.count - wanted.count)).contains { Array(highlighted[$0..<($0 + wanted.count)]) == wanted },
            "\(query): \(hit.snippet) \(marked)")
    }
}
