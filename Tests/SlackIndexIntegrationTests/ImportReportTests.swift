import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import Testing

@testable import SlackIndex
@testable import SlackIndexTestSupport

/// What `slackindex import` reports and leaves when it cannot import (issue 47's D8 and D9).
@Suite struct ImportReportTests {
    static func digest(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// Two processes importing the same export into new archives write the same bytes (each process seeds Swift's
    /// hashing anew: the message counts, flushed in a dictionary's order, laid out message_count's page differently).
    @Test func twoImportsOfOneExportWriteTheSameBytes() throws {
        let folder = TestSupport.temporaryDirectory()
        var archives: [Data] = []
        for name in ["one.sqlite", "two.sqlite"] {
            let path = folder.appendingPathComponent(name).path
            let run = try CLITests.run(["--db", path, "import", TestSupport.sampleZip, "--quiet"])
            #expect(run.status == 0, "\(run.stderr)")
            archives.append(try Self.digest(path))
        }
        #expect(archives[0].count > 100_000)
        #expect(archives[0] == archives[1])
    }

    /// A refused import (a missing path, a file that is not an export) leaves the archive's file as it was, and
    /// creates none where there was none.
    @Test func aRefusedImportLeavesTheArchiveUntouched() throws {
        let folder = TestSupport.temporaryDirectory()
        let db = folder.appendingPathComponent("archive.sqlite").path
        #expect(try CLITests.run(["--db", db, "import", TestSupport.sampleZip, "--quiet"]).status == 0)
        #expect(try CLITests.run(["--db", db, "check"]).status == 0)  // checkpointed and closed
        let before = try Self.digest(db)
        let notes = folder.appendingPathComponent("notes.txt")
        try Data("not an export".utf8).write(to: notes)
        for path in [folder.appendingPathComponent("missing.zip").path, notes.path] {
            let run = try CLITests.run(["--db", db, "import", path])
            #expect(run.status == 1)
            #expect(run.stderr.hasPrefix("Error: '\(path)'"), "\(run.stderr)")
            #expect(try Self.digest(db) == before, "\(path) changed the archive")
        }
        let fresh = folder.appendingPathComponent("new/archive.sqlite").path
        #expect(try CLITests.run(["--db", fresh, "import", notes.path]).status == 1)
        #expect(!FileManager.default.fileExists(atPath: fresh))
    }

    /// An import whose every message is skipped says why on stderr, not only in `--json` (it printed nothing and
    /// exited 1).
    @Test func anImportThatSkipsEveryMessageSaysWhy() throws {
        let folder = TestSupport.temporaryDirectory().appendingPathComponent("dump")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let page = folder.appendingPathComponent("C0ABCDEFGH1.json")
        try Data(#"[{"type": "message", "text": "a", "ts": "bad"}]"#.utf8).write(to: page)
        let db = TestSupport.temporaryDirectory().appendingPathComponent("archive.sqlite").path
        let run = try CLITests.run(["--db", db, "import", page.path])
        #expect(run.status == 1)
        #expect(run.stderr.contains("Error: nothing was imported: all 1 messages were skipped: "), "\(run.stderr)")
    }
}

/// Names that are not UTF-8 are reported as such, with what to do (issue 47's D11: "No such file or directory",
/// and a folder of only such names was "not a Slack export").
@Suite struct UndecodableNameTests {
    /// Creates `folder/name` with `contents`, the name given as raw bytes.
    static func create(in folder: URL, name: [UInt8], contents: String) throws {
        let path = Array(folder.path.utf8) + [UInt8(ascii: "/")] + name + [0]
        let fd = path.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { open($0, O_CREAT | O_WRONLY, 0o644) }
        }
        try #require(fd >= 0)
        defer { close(fd) }
        let bytes = Array(contents.utf8)
        #expect(write(fd, bytes, bytes.count) == bytes.count)
    }

    @Test func aDayFileWithALatin1NameIsReportedNotLost() throws {
        let export = try TestSupport.minimalExport(days: [
            "2024-01-02": #"[{"type": "message", "user": "U1", "text": "kept", "ts": "1704200000.000100"}]"#
        ])
        // "notes-café.json" in Latin-1 beside the day file: reported by its name, the rest imports.
        try Self.create(
            in: export.appendingPathComponent("general"), name: Array("notes-caf".utf8) + [0xE9] + Array(".json".utf8),
            contents: "[]")
        let archive = try TestSupport.makeArchive()
        let summary = try Importer(archive: archive).importExport(at: export.path)
        #expect(summary.messagesAdded == 1)
        let skipped = try #require(summary.skippedFiles.first, "\(summary)")
        #expect(skipped.path.hasSuffix("general/notes-caf\\xE9.json"), "\(skipped.path)")
        #expect(skipped.reason.hasPrefix("its name is not valid UTF-8"), "\(skipped.reason)")
    }

    @Test func aFolderOfOnlySuchNamesSaysSo() throws {
        let folder = TestSupport.temporaryDirectory().appendingPathComponent("latin1")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Self.create(in: folder, name: Array("canal-".utf8) + [0xE9, 0xE8] + Array(".json".utf8), contents: "[]")
        let run = try CLITests.run(
            ["--db", TestSupport.temporaryDirectory().appendingPathComponent("a.sqlite").path, "import", folder.path])
        #expect(run.status == 1)
        #expect(run.stderr.contains("canal-\\xE9\\xE8.json") && run.stderr.contains("not valid UTF-8"), "\(run.stderr)")
        #expect(!run.stderr.contains("not a Slack export"))
    }
}
