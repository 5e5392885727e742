import Foundation
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore

/// The slackindex tokenizer as search sees it: folding, CJK inside sentences, emoji shortcodes.
@Suite struct TokenizerTests {
    static func archive() throws -> Archive {
        let day = #"""
            [{"type":"message","user":"U1","text":"party time :tada: and :white_check_mark: done","ts":"1700000000.000100"},
             {"type":"message","user":"U1","text":"Straße in İSTANBUL, cafe\u0301 ouvert","ts":"1700000000.000200"},
             {"type":"message","user":"U1","text":"明日は東京オフィスで会議があります","ts":"1700000000.000300"},
             {"type":"message","user":"U1","text":"ภาษาไทยเป็นภาษาที่สวยงาม","ts":"1700000000.000400"},
             {"type":"message","user":"U1","text":"ΑΘΗΝΑ και Москва","ts":"1700000000.000500"},
             {"type":"message","user":"U1","text":"Zażółć gęślą jaźń w København","ts":"1700000000.000600"}]
            """#
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.minimalExport(days: ["2023-11-14": day]).path)
        return archive
    }

    @Test(arguments: [
        ("tada", "1700000000.000100"), (":tada:", "1700000000.000100"),
        ("white_check_mark", "1700000000.000100"), (":white_check_mark:", "1700000000.000100"),
        ("strasse", "1700000000.000200"), ("istanbul", "1700000000.000200"), ("café", "1700000000.000200"),
        ("cafe", "1700000000.000200"), ("東京", "1700000000.000300"), ("会議", "1700000000.000300"),
        ("ภาษา", "1700000000.000400"), ("αθηνα", "1700000000.000500"), ("москва", "1700000000.000500"),
        // Stroke letters fold as accented ones do (issue 55: ł did not).
        ("zazolc", "1700000000.000600"), ("Zażółć", "1700000000.000600"), ("gesla", "1700000000.000600"),
        ("kobenhavn", "1700000000.000600"), ("københavn", "1700000000.000600"),
    ])
    func finds(query: String, ts: String) throws {
        let hits = try SearchEngine(archive: Self.archive()).search(query).hits
        #expect(hits.map(\.message.ts) == [ts])
    }
}
