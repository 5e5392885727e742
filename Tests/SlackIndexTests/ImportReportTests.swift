import Foundation
import Testing

/// What `slackindex import` reports and leaves when it cannot import (issue 47's D8 and D9).
@Suite struct ImportReportTests {
    static func digest(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
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
