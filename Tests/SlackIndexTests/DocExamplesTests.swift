import Foundation
import Testing

// Plain `import SlackIndex` (no @testable): the GettingStarted article's examples must work with the public API.
import SlackIndex
@testable import SlackIndexTestSupport

/// The examples of `SlackIndex.docc/GettingStarted.md`, run on the sample export, so that the article cannot rot.
@Suite struct DocExamplesTests {
    @Test func importSearchAndReadAsTheArticleShows() throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("archive.sqlite").path
        let archive = try Archive(path: path)

        let summary = try Importer(archive: archive).importExport(at: TestSupport.sampleZip)
        #expect(summary.messagesAdded == 3_000)
        #expect(summary.skippedFiles.isEmpty)

        var options = SearchOptions()
        options.limit = 5
        options.sort = .relevance
        let results = try SearchEngine(archive: archive).search("\"data descriptor\" in:#dev", options: options)
        #expect(!results.hits.isEmpty)
        for hit in results.hits {
            #expect(hit.message.conversation == "#dev")
            #expect(hit.snippet.lowercased().contains("data"))
        }

        let timeline = Timeline(archive: archive)
        let general = try archive.conversation(named: "#general")
        let newest = try timeline.history(general, limit: 20)
        #expect(newest.messages.count == 20)
        let previous = try #require(newest.previous)
        let older = try timeline.page(previous, limit: 20)
        #expect(!older.messages.isEmpty)
        #expect(older.messages.last.map { $0.tsKey < newest.messages[0].tsKey } == true)
        let parent = try #require(newest.messages.first(where: { $0.replyCount > 0 })
            ?? older.messages.first(where: { $0.replyCount > 0 }))
        let thread = try timeline.thread(general, threadTS: parent.ts)
        #expect(thread.messages.first?.ts == parent.ts)
        #expect(thread.messages.count > 1)
    }
}
