import Foundation
import Testing

@testable import SlackIndex
@testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// `has:image` and `type:KIND`: messages carrying a file of that kind, by Slack's metadata or the stored bytes.
@Suite struct FileKindSearchTests {
    /// The texts of the messages `query` finds in FileFetchTests' archive ("file N" carries its Nth file).
    static func found(_ query: String, in archive: Archive) throws -> [String] {
        try SearchEngine(archive: archive).search(query).hits.map(\.message.text).sorted()
    }

    @Test func kindsOfFileFilterTheHits() throws {
        let archive = try FileFetchTests.archive()
        // cat.png and ../../etc/cat-again.png (image/png).
        #expect(try Self.found("has:image", in: archive) == ["file 0", "file 2"])
        #expect(try Self.found("type:images", in: archive) == ["file 0", "file 2"])
        // report.pdf and login.pdf; deploy.py is a snippet; dropped.zip; csv-like extensions by name.
        #expect(try Self.found("type:pdf", in: archive) == ["file 3", "file 8"])
        #expect(try Self.found("type:snippets", in: archive) == ["file 1"])
        #expect(try Self.found("type:zip", in: archive) == ["file 11"])
        #expect(try Self.found("type:mov", in: archive) == ["file 10"])
        #expect(try Self.found("type:png has:image file", in: archive) == ["file 0", "file 2"])
        #expect(try Self.found("type:docx", in: archive) == [])
        // has:file still finds every message with a file (13).
        #expect(try Self.found("has:file", in: archive).count == 13)
    }

    /// A file Slack did not call an image whose stored bytes are one is an image too.
    @Test func storedBytesThatAreAnImageCount() throws {
        let archive = try FileFetchTests.archive()
        #expect(try Self.found("has:image", in: archive).contains("file 9") == false)
        try archive.store.recordFileBlob(id: "FBIG", blob: FileBlob(sha256: String(repeating: "a", count: 64), size: 1, contentType: "image/gif"))
        #expect(try Self.found("has:image", in: archive) == ["file 0", "file 2", "file 9"])
    }

    @Test func aBadTypeIsSaidAndSearchedAsWords() throws {
        let parsed = QueryParser.parse("type:é.png report", today: queryTestToday)
        #expect(parsed.notes.first?.hasPrefix("type: needs a kind of file") == true, "\(parsed.notes)")
        let run = try CLITests.run(["--db", try FileFetchTests.archive().path, "search", "has:image", "--count"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "2", "\(run.stdout)")
    }
}
