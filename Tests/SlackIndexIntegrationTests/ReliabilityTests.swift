import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// Regression tests for the defects found by trying to break the release (issue 14): crafted zips, shared ts,
/// undecodable text, unreadable folders, read-only archives. Every input is generated in a temporary folder.
@Suite struct ReliabilityTests {
    // MARK: - Crafted zips (no trap on any number read from the file)

    /// A zip whose end record is patched by `patch` (offsets relative to the end-of-central-directory record).
    private static func craftedZip(zip64: Bool, _ patch: (inout [UInt8], _ eocd: Int) -> Void) -> [UInt8] {
        var writer = ZipWriter()
        writer.zip64 = zip64
        writer.add("users.json", #"[{"id": "U1", "name": "ann"}]"#)
        writer.add("general/2024-01-02.json", #"[{"ts": "1704200000.000100", "user": "U1", "text": "hi"}]"#)
        var bytes = [UInt8](writer.data())
        let eocd = bytes.count - 22
        patch(&bytes, eocd)
        return bytes
    }

    private static func put64(_ value: UInt64, into bytes: inout [UInt8], at offset: Int) {
        for k in 0..<8 { bytes[offset + k] = UInt8((value >> (8 * UInt64(k))) & 0xff) }
    }

    private static func put32(_ value: UInt32, into bytes: inout [UInt8], at offset: Int) {
        for k in 0..<4 { bytes[offset + k] = UInt8((value >> (8 * UInt32(k))) & 0xff) }
    }

    /// Every crafted zip is refused or read with a reason; none traps (a trap kills the test process).
    @Test func craftedZip64NumbersAreRefusedWithoutATrap() throws {
        var cases: [(String, [UInt8])] = []
        // The ZIP64 record: count at 24+8, size at 40, offset at 48; the locator (20 bytes before the end record)
        // holds the record's offset at 8.
        for (name, field, value) in [
            ("directory offset + size overflows", 48, UInt64.max - 10),
            ("directory size past Int.max", 40, UInt64(Int64.max) + 5),
            ("directory offset past Int64.max", 48, UInt64(Int64.max) + 1),
            ("entry count 2^64-1", 32, UInt64.max),
        ] {
            cases.append(
                (name,
                    Self.craftedZip(zip64: true) { bytes, eocd in
                        let locator = eocd - 20
                        let record = Int(bytes[locator + 8]) | Int(bytes[locator + 9]) << 8 | Int(bytes[locator + 10]) << 16
                        Self.put64(value, into: &bytes, at: record + field)
                    }))
        }
        cases.append(
            ("locator points past the end",
                Self.craftedZip(zip64: true) { bytes, eocd in Self.put64(UInt64.max - 20, into: &bytes, at: eocd - 20 + 8) }))
        cases.append(
            ("32-bit offset + size past the file",
                Self.craftedZip(zip64: false) { bytes, eocd in
                    Self.put32(0xffff_fff0, into: &bytes, at: eocd + 12)
                    Self.put32(0xffff_fff0, into: &bytes, at: eocd + 16)
                }))
        let folder = TestSupport.temporaryDirectory()
        for (name, bytes) in cases {
            let path = folder.appendingPathComponent("\(cases.firstIndex { $0.0 == name }!).zip").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(throws: (any Error).self, "\(name)") { _ = try ZipReader(path: path) }
        }
    }

    /// Entries whose local header offset or sizes lie (ZIP64 extra fields near 2^64) are reported per entry.
    @Test func lyingEntryOffsetsAndSizesAreReportedPerEntry() throws {
        var writer = ZipWriter()
        writer.zip64 = true
        writer.add("users.json", #"[{"id": "U1", "name": "ann"}]"#)
        var bytes = [UInt8](writer.data())
        // The entry's ZIP64 extra field: uncompressed, compressed, local header offset (after its 4-byte header).
        let central = bytes.count - 22 - 20 - 56 - (46 + "users.json".utf8.count + 28)
        let extra = central + 46 + "users.json".utf8.count + 4
        let path = TestSupport.temporaryDirectory().appendingPathComponent("lying.zip").path
        for (field, value) in [(16, UInt64.max - 10), (16, UInt64(Int64.max) + 1), (0, UInt64.max), (8, UInt64.max)] {
            var patched = bytes
            Self.put64(value, into: &patched, at: extra + field)
            try Data(patched).write(to: URL(fileURLWithPath: path))
            let zip = try ZipReader(path: path)
            let entry = try #require(zip.entries.first)
            #expect(throws: ZipReader.Failure.self) { _ = try zip.data(of: entry) }
        }
        bytes = [UInt8](writer.data())
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let zip = try ZipReader(path: path)
        #expect(try zip.data(of: zip.entries[0]).count > 0)
    }

    /// A zip bomb (a day file that would inflate far past its share) is skipped with a reason before anything is
    /// allocated for it; the rest of the export imports.
    @Test func zipBombDayFileIsSkippedAndReported() throws {
        let folder = TestSupport.temporaryDirectory()
        let bomb = folder.appendingPathComponent("bomb.json")
        // 40 MB of one repeated message: deflates ~1000×.
        let message = #"{"ts": "1704200000.000100", "user": "U1", "text": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},"#
        var text = "[" + String(repeating: message, count: 40_000_000 / message.utf8.count)
        text.removeLast()
        text += "]"
        try Data(text.utf8).write(to: bomb)
        let good = folder.appendingPathComponent("good.json")
        try Data(#"[{"ts": "1704200000.000200", "user": "U1", "text": "kept"}]"#.utf8).write(to: good)
        let zipPath = folder.appendingPathComponent("export.zip").path
        try Self.zipWithPython(
            zipPath,
            [("users.json", #"[{"id": "U1", "name": "ann"}]"#), ("general/2024-01-02.json", bomb.path),
                ("general/2024-01-03.json", good.path)])
        let archive = try TestSupport.makeArchive()
        let summary = try Importer(archive: archive).importExport(at: zipPath)
        #expect(summary.messagesAdded == 1)
        let skipped = try #require(summary.skippedFiles.first)
        #expect(skipped.path.hasSuffix("general/2024-01-02.json"))
        #expect(skipped.reason.contains("zip bomb"), "\(skipped.reason)")
        #expect(summary.hasSkips)
    }

    /// Writes a deflated zip with Python's zipfile: `(entry name, literal JSON or a path to a file)`.
    private static func zipWithPython(_ path: String, _ entries: [(String, String)]) throws {
        let script = """
            import sys, zipfile, json
            entries = json.loads(sys.argv[2])
            with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
                for name, value in entries:
                    if value.startswith("/"): z.write(value, name)
                    else: z.writestr(name, value)
            """
        let json = String(
            decoding: try JSONSerialization.data(withJSONObject: entries.map { [$0.0, $0.1] }), as: UTF8.self)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, path, json]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "python3 zipfile failed")
    }

    /// Zip entries named `/2024-01-04.json` or `../2024-01-02.json` are refused with a reason, not imported as
    /// channels named '' and '..'.
    @Test func zipEntriesOutsideAFolderAreRefused() throws {
        var writer = ZipWriter()
        writer.add("users.json", #"[{"id": "U1", "name": "ann"}]"#)
        writer.add("channels.json", #"[{"id": "C1", "name": "general"}]"#)
        writer.add("/2024-01-04.json", #"[{"ts": "1704300000.000100", "user": "U1", "text": "abs"}]"#)
        writer.add("../2024-01-02.json", #"[{"ts": "1704200000.000100", "user": "U1", "text": "up"}]"#)
        writer.add("general/2024-01-02.json", #"[{"ts": "1704200000.000200", "user": "U1", "text": "ok"}]"#)
        let path = TestSupport.temporaryDirectory().appendingPathComponent("names.zip").path
        try writer.data().write(to: URL(fileURLWithPath: path))
        let archive = try TestSupport.makeArchive()
        let summary = try Importer(archive: archive).importExport(at: path)
        #expect(summary.messagesAdded == 1)
        #expect(summary.skippedFiles.count == 2)
        #expect(summary.skippedFiles.allSatisfy { $0.path.hasSuffix("2024-01-04.json") || $0.path.hasSuffix("../2024-01-02.json") })
        #expect(try archive.conversations().map(\.name) == ["general"])
    }

    // MARK: - Row ids: shared ts, far-future ts

    /// 65 conversations with a message at the same ts, plus one distinct message each: all 130 import, every
    /// conversation's history holds its two, and importing again changes nothing.
    @Test func sixtyFiveConversationsSharingOneTsAllImport() throws {
        var files: [String: String] = ["users.json": #"[{"id": "U1", "name": "ann"}]"#]
        var channels: [String] = []
        for k in 0..<65 {
            channels.append(#"{"id": "C\#(k)", "name": "c\#(k)"}"#)
            files["c\(k)/2024-01-02.json"] = """
                [{"ts": "1704200000.000100", "user": "U1", "text": "shared \(k)"},
                 {"ts": "1704200001.\(String(format: "%06d", k))", "user": "U1", "text": "own \(k)"}]
                """
        }
        files["channels.json"] = "[" + channels.joined(separator: ",") + "]"
        let export = try TestSupport.writeExport(files)
        let archive = try TestSupport.makeArchive()
        let summary = try Importer(archive: archive).importExport(at: export.path)
        #expect(summary.messagesAdded == 130)
        #expect(!summary.hasSkips)
        let timeline = Timeline(archive: archive)
        for k in [0, 63, 64] {
            let page = try timeline.history(try archive.conversation(named: "c\(k)"), limit: 10)
            #expect(page.messages.map(\.text) == ["shared \(k)", "own \(k)"])
        }
        let again = try Importer(archive: archive).importExport(at: export.path)
        #expect(again.messagesUnchanged == 130 && again.messagesAdded == 0)
        let engine = SearchEngine(archive: archive)
        var options = SearchOptions()
        options.limit = 100
        #expect(try engine.search("shared", options: options).hits.count == 65)
        // Messages that found their preferred id taken are indexed under the id they got.
        try IndexOracle.expectExact(archive)
    }

    /// A ts past year 5138 (`999999999999.999999`) would overflow the row id: it is skipped with a reason.
    @Test func farFutureTsIsSkippedNotWrapped() throws {
        let export = try TestSupport.minimalExport(days: [
            "2024-01-02": #"""
            [{"ts": "999999999999.999999", "user": "U1", "text": "far"},
             {"ts": "99999999999.999999", "user": "U1", "text": "now latest possible"},
             {"ts": "1704200000.000100", "user": "U1", "text": "now"}]
            """#
        ])
        let archive = try TestSupport.makeArchive()
        let summary = try Importer(archive: archive).importExport(at: export.path)
        #expect(summary.messagesAdded == 2)
        #expect(summary.skipReasons["no valid ts"] == 1)
        var options = SearchOptions()
        options.sort = .newest
        let hits = try SearchEngine(archive: archive).search("now", options: options)
        #expect(hits.hits.map(\.message.text) == ["now latest possible", "now"])
    }

    // MARK: - Text that JSONDecoder refuses is kept, repaired

    @Test(arguments: [
        (#"a\u001b[31mred"#, "a\u{1b}[31mred", false),
        ("a\u{1b}[31mred", "a\u{1b}[31mred", true),
        ("one\u{01}two", "one\u{01}two", true),
        ("nul\u{00}byte", "nul\u{FFFD}byte", true),
        (#"nul\u0000escape"#, "nul\u{FFFD}escape", true),
        (#"lone \ud800 surrogate"#, "lone \u{FFFD} surrogate", true),
        ("bad \u{FF} byte", "bad \u{FFFD} byte", true),
        ("overlong \u{C0}\u{AF} slash", "overlong \u{FFFD}\u{FFFD} slash", true),
        ("valid é", "valid é", false),
    ])
    func undecodableTextIsKeptWithReplacementCharacters(raw: String, expected: String, repaired: Bool) throws {
        // Build the day file's bytes: scalars below U+0100 in `raw` stand for single bytes (to write invalid UTF-8).
        var bytes = Array(#"[{"ts": "1704200000.000100", "user": "U1", "text": ""#.utf8)
        for scalar in raw.unicodeScalars {
            if scalar.value >= 0x80 && scalar.value < 0x100 && scalar != "é" {
                bytes.append(UInt8(scalar.value))
            } else {
                bytes += Array(String(scalar).utf8)
            }
        }
        bytes += Array(#""}]"#.utf8)
        let export = try TestSupport.minimalExport(days: ["2024-01-01": "[]"])
        try Data(bytes).write(to: export.appendingPathComponent("general/2024-01-02.json"))
        let archive = try TestSupport.makeArchive()
        let summary = try Importer(archive: archive).importExport(at: export.path)
        #expect(summary.messagesAdded == 1)
        #expect(summary.messagesRepaired == (repaired ? 1 : 0))
        let page = try Timeline(archive: archive).history(try archive.conversation(named: "general"), limit: 1)
        #expect(page.messages.first.map { Array($0.text.unicodeScalars) } == Array(expected.unicodeScalars))
    }

    // MARK: - Folders and files that cannot be read

    @Test func specialFilesAndFoldersInAnExportAreReportedNotRead() throws {
        let export = try TestSupport.minimalExport(days: [
            "2024-01-02": #"[{"ts": "1704200000.000100", "user": "U1", "text": "kept"}]"#
        ])
        let general = export.appendingPathComponent("general")
        try FileManager.default.createDirectory(
            at: general.appendingPathComponent("2024-01-03.json"), withIntermediateDirectories: true)
        #expect(mkfifo(general.appendingPathComponent("2024-01-04.json").path, 0o644) == 0)
        try FileManager.default.createSymbolicLink(
            atPath: general.appendingPathComponent("2024-01-05.json").path, withDestinationPath: "/dev/zero")
        let outside = TestSupport.temporaryDirectory()
        try Data(#"[{"ts": "1704200000.000300", "user": "U1", "text": "outside"}]"#.utf8)
            .write(to: outside.appendingPathComponent("2024-01-02.json"))
        try FileManager.default.createSymbolicLink(
            atPath: export.appendingPathComponent("linked").path, withDestinationPath: outside.path)
        let archive = try TestSupport.makeArchive()
        let summary = try Importer(archive: archive).importExport(at: export.path)
        #expect(summary.messagesAdded == 1)
        let reasons = Dictionary(
            summary.skippedFiles.map { (URL(fileURLWithPath: $0.path).lastPathComponent, $0.reason) },
            uniquingKeysWith: { a, _ in a })
        #expect(reasons["2024-01-03.json"] == "it is a folder, not a day file")
        #expect(reasons["2024-01-04.json"] == "it is a named pipe (FIFO), not a day file")
        #expect(reasons["2024-01-05.json"]?.contains("outside the export") == true, "\(reasons)")
        #expect(reasons["linked"]?.contains("outside the export") == true, "\(reasons)")
        #expect(summary.skippedFiles.count == 4)
    }

    /// Runs the CLI as an unprivileged user (root bypasses file modes): through `setpriv` when the tests run as
    /// root, directly otherwise. Nil when running as root without `setpriv`.
    static func runUnprivileged(_ arguments: [String]) throws -> CLITests.Run? {
        let binary = try #require(CLITests.binary, "build the slackindex executable first")
        guard getuid() == 0 else { return try CLITests.run(executable: binary, arguments) }
        let setpriv = URL(fileURLWithPath: "/usr/bin/setpriv")
        guard FileManager.default.isExecutableFile(atPath: setpriv.path) else { return nil }
        return try CLITests.run(
            executable: setpriv,
            ["--reuid=65534", "--regid=65534", "--clear-groups", binary.path] + arguments,
            environment: ["HOME": "/nonexistent"])
    }

    /// A folder everyone may enter, for the unprivileged runs.
    private static func sharedFolder() throws -> URL {
        let folder = TestSupport.temporaryDirectory()
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: folder.path)
        return folder
    }

    @Test func unreadableChannelFolderIsReportedAndExitsTwo() throws {
        let export = try TestSupport.minimalExport(
            days: ["2024-01-02": #"[{"ts": "1704200000.000100", "user": "U1", "text": "kept"}]"#],
            extra: ["secret/2024-01-02.json": #"[{"ts": "1704200000.000200", "user": "U1", "text": "hidden"}]"#])
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: export.deletingLastPathComponent().path)
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: export.appendingPathComponent("secret").path)
        let db = try Self.sharedFolder().appendingPathComponent("a.sqlite").path
        guard let run = try Self.runUnprivileged(["--db", db, "import", export.path, "--quiet"]) else { return }
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains("secret"), "\(run.stderr)")
        #expect(run.stderr.contains("Permission denied"), "\(run.stderr)")
        #expect(run.stdout.contains("1 added"), "\(run.stdout)")
    }

    /// A read-only archive (0444 file in a 0555 folder, as on a read-only mount) answers search, history and
    /// stats as an unprivileged user, and leaves no `-wal`/`-shm` files behind.
    @Test func readOnlyArchiveIsReadableAndLeftUntouched() throws {
        let folder = try Self.sharedFolder()
        let db = folder.appendingPathComponent("archive.sqlite").path
        let imported = try CLITests.run(["--db", db, "import", TestSupport.sampleFolder, "--quiet"])
        #expect(imported.status == 0)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: db)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: folder.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path) }
        let before = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(before == ["archive.sqlite"])
        for arguments in [
            ["search", "\"data descriptor\"", "--limit", "2"], ["history", "#general", "--limit", "2"], ["stats"],
        ] {
            guard let run = try Self.runUnprivileged(["--db", db] + arguments) else { return }
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            #expect(!run.stdout.isEmpty, "\(arguments)")
        }
        // serve --read-only starts on it and answers.
        if getuid() == 0, let binary = CLITests.binary {
            let (process, out, _) = try CLITests.launch(
                executable: URL(fileURLWithPath: "/usr/bin/setpriv"),
                ["--reuid=65534", "--regid=65534", "--clear-groups", binary.path, "--db", db, "serve", "--read-only",
                    "--listen", "127.0.0.1:0"])
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                line += chunk
            }
            process.terminate()
            process.waitUntilExit()
            #expect(String(decoding: line, as: UTF8.self).hasPrefix("Serving \(db) at http://127.0.0.1:"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == before)
        // Writing is refused with the path, and still leaves nothing behind. The source is a copy the unprivileged
        // user can read: the checkout may lie in a folder only its owner may enter (`git clone . "$(mktemp -d)/x"`),
        // and an unreadable source is refused before the archive is opened.
        let readable = try Self.sharedFolder().appendingPathComponent("export.zip")
        try FileManager.default.copyItem(atPath: TestSupport.sampleZip, toPath: readable.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: readable.path)
        guard let write = try Self.runUnprivileged(["--db", db, "import", readable.path, "--quiet"])
        else { return }
        #expect(write.status == 1)
        #expect(write.stderr.contains(db), "\(write.stderr)")
    }

    @Test func readOnlyOpenRefusesAnArchiveThatNeedsAMigration() throws {
        let archive = try TestSupport.makeArchive()
        // An index built by another tokenizer version needs a rebuild (a write): python3's sqlite3 marks it so.
        let script = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
            + "c.execute(\"UPDATE meta SET value = 'older' WHERE key = 'tokenizer'\"); c.commit()"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, archive.path]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        #expect(throws: StoreError.self) { _ = try Archive(path: archive.path, access: .readOnly) }
        let upgraded = try Archive(path: archive.path)
        #expect(try Archive(path: upgraded.path, access: .readOnly).access == .readOnly)
    }
}

extension ReliabilityTests {
    /// One member nested 100,000 deep (past `JSONDecoder`'s depth limit) is skipped and reported; the other 45 of
    /// `users.json` import.
    @Test func oneDeeplyNestedUserRecordCostsOnlyItself() throws {
        var users = (1...45).map { #"{"id": "U\#($0)", "name": "user\#($0)"}"# }
        users.insert(
            #"{"id": "U99", "profile": "# + String(repeating: "[", count: 100_000)
                + String(repeating: "]", count: 100_000) + "}", at: 7)
        let export = try TestSupport.writeExport([
            "users.json": "[" + users.joined(separator: ",") + "]",
            "channels.json": #"[{"id": "C1", "name": "general"}]"#,
            "general/2024-01-02.json": #"[{"ts": "1704200000.000100", "user": "U3", "text": "hi"}]"#,
        ])
        let archive = try TestSupport.makeArchive()
        let summary = try Importer(archive: archive).importExport(at: export.path)
        #expect(summary.usersAdded == 45)
        #expect(summary.messagesAdded == 1)
        let skipped = try #require(summary.skippedFiles.first)
        #expect(summary.skippedFiles.count == 1)
        #expect(skipped.path.hasSuffix("users.json"))
        #expect(skipped.reason.hasPrefix("1 of 46 records could not be read"), "\(skipped.reason)")
        #expect(skipped.reason.contains("record 8"), "\(skipped.reason)")
    }
}

extension ReliabilityTests {
    /// On a terminal, ESC sequences from message text and channel names are shown (U+241B), not obeyed; piped
    /// output keeps the bytes for scripts. The terminal is a pseudo-terminal from util-linux `script`.
    @Test func terminalEscapesInDataAreShownNotObeyed() throws {
        let export = try TestSupport.writeExport([
            "users.json": #"[{"id": "U1", "name": "ann"}]"#,
            "channels.json": #"[{"id": "C1", "name": "general"}]"#,
            "general/2024-01-02.json": #"[{"ts": "1704200000.000100", "user": "U1", "text": "x \u001b]0;pwned\u0007 \u001b[2J red"}]"#,
        ])
        let db = TestSupport.temporaryDirectory().appendingPathComponent("tty.sqlite").path
        #expect(try CLITests.run(["--db", db, "import", export.path, "--quiet"]).status == 0)
        let piped = try CLITests.run(["--db", db, "history", "#general"])
        #expect(piped.stdout.contains("\u{1B}[2J"))
        let script = URL(fileURLWithPath: "/usr/bin/script")
        guard FileManager.default.isExecutableFile(atPath: script.path), let binary = CLITests.binary else { return }
        for command in ["history '#general'", "search red"] {
            let run = try CLITests.run(
                executable: script, ["-qec", "\(binary.path) --db \(db) \(command)", "/dev/null"])
            #expect(run.status == 0, "\(command): \(run.stdout)")
            #expect(run.stdout.contains("\u{241B}]0;pwned\u{2407} \u{241B}[2J"), "\(command): \(run.stdout)")
            #expect(!run.stdout.contains("\u{1B}[2J") && !run.stdout.contains("\u{1B}]0"), "\(command)")
        }
    }
}

extension ReliabilityTests {
    /// A 3 MB message: stored and served whole, indexed and snippeted only in its first 256 KiB.
    @Test func aHugeMessageIsStoredWholeButIndexedInPart() throws {
        let filler = String(repeating: "lorem ipsum dolor ", count: 3_000_000 / 18)
        let text = "needle " + filler + " haystackend"
        let day = try JSONSerialization.data(withJSONObject: [["ts": "1704200000.000100", "user": "U1", "text": text]])
        let export = try TestSupport.minimalExport(days: ["2024-01-01": "[]"])
        try day.write(to: export.appendingPathComponent("general/2024-01-02.json"))
        let archive = try TestSupport.makeArchive()
        #expect(try Importer(archive: archive).importExport(at: export.path).messagesAdded == 1)
        let hits = try SearchEngine(archive: archive).search("needle").hits
        #expect(hits.count == 1)
        #expect(hits.first.map { $0.snippet.utf8.count < 1_000 } == true)
        #expect(hits.first?.message.text.utf8.count == text.utf8.count)
        #expect(try SearchEngine(archive: archive).search("haystackend").hits.isEmpty)
        let page = try Timeline(archive: archive).history(try archive.conversation(named: "general"), limit: 1)
        #expect(page.messages.first?.text.utf8.count == text.utf8.count)
        try IndexOracle.expectExact(archive)
    }

    @Test func indexableTextIsCutAtACharacterBoundary() {
        let text = String(repeating: "é", count: 10)  // 2 bytes each
        #expect(MessagePreparer.indexable(text, limit: 5) == "éé")
        #expect(MessagePreparer.indexable(text, limit: 20) == text)
        #expect(MessagePreparer.indexable("👩‍💻abc", limit: 5).unicodeScalars.count == 1)
    }
}

extension ReliabilityTests {
    /// A full disk (SQLite's size cap, which fails writes as a full disk does) stops the import with the archive's
    /// path and what was committed; the counts are what is in the archive, and importing again adds the rest.
    @Test func aFullDiskStopsTheImportWithWhatWasCommitted() throws {
        let archive = try TestSupport.makeArchive()
        // The database's own pages (the file and its WAL hold more: every migration's frames, a count that grew
        // with each new migration until the cap no longer stopped this import).
        let sqlite = try #require(archive.store as? SQLiteArchive)
        let pagesBefore = try sqlite.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0 }
        try archive.store.limitSizeForTesting(pages: pagesBefore + 60)
        let importer = Importer(archive: archive, batchSize: 100, commitMessages: 200)
        let summary = try importer.importExport(at: TestSupport.sampleFolder)
        let stopped = try #require(summary.stopped)
        #expect(stopped.contains("the disk holding the archive \(archive.path) is full"), "\(stopped)")
        #expect(stopped.contains("stay in the archive"))
        let stored = try archive.stats().messages
        #expect(summary.messagesAdded == stored)
        #expect(stored > 0 && stored < 3_000)
        // The failed batch's rows went with its transaction: what stays is indexed exactly.
        try IndexOracle.expectExact(archive)
        try archive.store.limitSizeForTesting(pages: nil)
        let again = try importer.importExport(at: TestSupport.sampleFolder)
        #expect(again.stopped == nil)
        #expect(again.messagesAdded == 3_000 - stored)
        #expect(try archive.stats().messages == 3_000)
        try IndexOracle.expectExact(archive)
    }
}
