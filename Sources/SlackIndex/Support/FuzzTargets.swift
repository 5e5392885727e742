import Foundation

/// The parsers that read untrusted bytes, as fuzzing targets: the zip reader, the JSON cursor and message decoding,
/// sync-page recognition, and the query parser with the search it drives.
///
/// `run` must never trap or crash on any input: a trap kills the fuzzing process (the driver saves the input that
/// did it). Errors thrown for bad input are expected; what `run` returns is a finding of another kind (a query
/// that made invalid FTS5 syntax, say).
package enum FuzzTarget: String, CaseIterable, Sendable {
    case zip
    case json
    case syncPage = "sync-page"
    case query

    /// Runs one input; returns a description of a finding that is not a crash, or nil.
    package func run(_ input: [UInt8]) -> String? {
        switch self {
        case .zip: return FuzzTarget.zip(input)
        case .json: return FuzzTarget.json(input)
        case .syncPage: return FuzzTarget.syncPage(input)
        case .query: return FuzzTarget.query(input)
        }
    }

    // MARK: - Targets

    /// The bytes as a zip file: its directory, then every entry inflated (under a small size cap).
    private static func zip(_ input: [UInt8]) -> String? {
        guard let path = scratchFile.write(input) else { return nil }
        guard let zip = try? ZipReader(path: path) else { return nil }
        for entry in zip.entries.prefix(64) where entry.location.uncompressedSize <= 1 << 20 {
            _ = try? zip.data(of: entry)
        }
        // The directory again in chunks of 1 to 97 bytes (records straddle them), records read again by offset.
        if let file = try? ZipFile(path: path), let directory = try? ZipReader.findDirectory(in: file) {
            var visited = 0
            let chunk = 1 + Int(input.first ?? 0) % 97
            try? ZipReader.scanDirectory(directory, of: file, chunkSize: chunk) { offset, _, _ in
                visited += 1
                if visited <= 64 { _ = try? ZipReader.record(at: offset, of: directory, in: file) }
            }
        }
        // As an export: listed (wrapping folder, day files, top-level files), then each day file read from its
        // directory record again.
        guard let source = try? ZipExportSource(path: path) else { return nil }
        if source.hasListing("users.json") { _ = try? source.listing("users.json") }
        // (A folder's listed bytes bound each of its files.)
        for file in source.dayFiles.prefix(64) where source.dayFiles.bytesByPlace[Int(file.folderIndex)] <= 1 << 20 {
            _ = try? source.read(file)
            _ = source.displayPath(of: file)
        }
        return nil
    }

    /// The bytes as a day file (sliced, each element decoded as the importer does) and as one message.
    private static func json(_ input: [UInt8]) -> String? {
        let sliced = input.withUnsafeBytes { JSONSlicer($0) }
        sliced.bytes.withUnsafeBufferPointer { buffer in
            for range in sliced.elements.prefix(256) {
                if let record = try? MessageRecord(json: UnsafeBufferPointer(rebasing: buffer[range])) {
                    // What the importer keeps (the member's place from the decoder), and the scan it replaced.
                    _ = JSONSlicer.storedText(of: record, at: range, in: sliced.bytes)
                    _ = JSONSlicer.text(of: range, in: sliced.bytes, removing: "user_profile")
                    _ = record.isTextRepaired
                }
            }
        }
        _ = input.withUnsafeBufferPointer { try? MessageRecord(json: $0) }
        var summary = ImportSummary()
        _ = ExportListings.records(of: UserRecord.self, in: Data(input), file: "users.json", summary: &summary)
        return nil
    }

    /// The bytes as a sync page: recognition, the envelope (messages and cursor), the cursor's ts.
    private static func syncPage(_ input: [UInt8]) -> String? {
        _ = Importer.isPage(Data(input))
        if let (page, elements, cursor) = try? Importer.envelope(of: input, source: "fuzz") {
            page.bytes.withUnsafeBufferPointer { buffer in
                for range in elements.prefix(256) {
                    _ = try? MessageRecord(json: UnsafeBufferPointer(rebasing: buffer[range]))
                    _ = ReactionEvent(json: page.bytes[range])
                }
            }
            _ = cursor.flatMap(Importer.cursorKey)
        }
        _ = Importer.cursorKey(String(decoding: input.prefix(512), as: UTF8.self))
        return nil
    }

    /// The bytes as a search query: parsed, then run against a small archive (every sort). Slack's syntax never
    /// fails; only names that match no one (`SearchError`) may. Any other error (an FTS5 syntax error from user
    /// text) is a finding.
    private static func query(_ input: [UInt8]) -> String? {
        let text = String(decoding: input.prefix(4_096), as: UTF8.self)
        _ = QueryParser.parse(text, today: Day.today(in: TimeZone(identifier: "UTC") ?? .current))
        guard let engine = queryEngine else { return nil }
        for sort in [SearchSort.relevance, .newest] {
            var options = SearchOptions()
            options.sort = sort
            options.limit = 5
            options.timeZone = TimeZone(identifier: "UTC") ?? .current
            do {
                _ = try engine.search(text, options: options)
                _ = try engine.count(text, options: options)
            } catch is SearchError {
                continue
            } catch {
                return "search \(String(reflecting: text)) failed: \(error)"
            }
        }
        return nil
    }

    // MARK: - Fixtures

    /// A file the zip target rewrites for each input (the zip reader reads files by path).
    private static let scratchFile = ScratchFile()

    /// A small archive for the query target, made once per process.
    private static let queryEngine: SearchEngine? = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "slackindex-fuzz-\(ProcessInfo.processInfo.processIdentifier)")
        ExitCleanup.remove(folder)
        let export = folder.appendingPathComponent("export")
        let day = #"""
            [{"ts": "1704200000.000100", "user": "U1", "text": "deploy the release to production"},
             {"ts": "1704200100.000100", "user": "U2", "text": "日本語のテキスト and café déjà vu"},
             {"ts": "1704200200.000100", "user": "U1", "text": "a \"quoted\" phrase with NOT and OR inside",
              "reactions": [{"name": "tada", "count": 1, "users": ["U2"]}]}]
            """#
        do {
            try FileManager.default.createDirectory(
                at: export.appendingPathComponent("general"), withIntermediateDirectories: true)
            try Data(#"[{"id": "U1", "name": "ann"}, {"id": "U2", "name": "bob"}]"#.utf8)
                .write(to: export.appendingPathComponent("users.json"))
            try Data(#"[{"id": "C1", "name": "general", "members": ["U1", "U2"]}]"#.utf8)
                .write(to: export.appendingPathComponent("channels.json"))
            try Data(day.utf8).write(to: export.appendingPathComponent("general/2024-01-02.json"))
            let archive = try Archive(path: folder.appendingPathComponent("archive.sqlite").path)
            _ = try Importer(archive: archive).importExport(at: export.path)
            return SearchEngine(archive: archive)
        } catch {
            return nil
        }
    }()
}

/// One temporary file, rewritten in place for each input.
///
/// `@unchecked Sendable`: one fuzzing loop per process writes it, from one thread.
private final class ScratchFile: @unchecked Sendable {
    let path: String = {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("slackindex-fuzz-\(ProcessInfo.processInfo.processIdentifier).zip")
        ExitCleanup.remove(url)
        return url.path
    }()

    /// Writes `bytes` as the file's whole contents; returns its path, or nil when it cannot be written.
    func write(_ bytes: [UInt8]) -> String? {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
        return written == bytes.count ? path : nil
    }
}
