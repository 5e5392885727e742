import Foundation

/// Drives every source into the archive through one pipeline (`ImportPipeline`): the calling thread reads (inflate,
/// minify, decode, normalise) while a writer thread writes into the sink's import session, overlapped on two cores.
/// An export's listings go first, then its day files; a dump's pages and a slackdump database's rows go the same
/// way (`writingPages`).
///
/// Memory stays bounded: one day file is read at a time; a batch (whole dates) is handed over in parts of at most
/// `batchSize` messages, and at most `queueDepth` parts wait for the writer, weighing at most `batchSize × 2`
/// messages or the batch being handed over, when it is larger.
/// Idempotent: messages are upserted on (conversation, ts); re-importing reports them unchanged.
public final class Importer: Sendable {
    /// Called after every batch the writer writes (commits group several batches).
    public typealias ProgressHandler = @Sendable (ImportProgress) -> Void

    let archive: any ImportSink & Directory & Timelines & FileArchive & WorkspaceImages
    private let batchSize: Int
    private let queueDepth: Int
    /// Messages to a transaction, for exports and pages alike; nil: the sink's own (`ImportSink.commitMessages`).
    let commitMessages: Int?
    /// Connections writing messages at once (`import --jobs`; a backend with one writer uses one).
    let writers: Int
    /// Messages of pages (sync pages, API dumps, slackdump archives) buffered and written together: held in memory
    /// until written, so fewer than an export's transaction (the sink's measure, or `commitMessages`).
    let pageMessagesPerWrite: Int
    /// Set to stop after the batch or page being written (Ctrl-C): what was written is committed and the summary
    /// says `interrupted`; the same import run again adds the rest.
    let stop: StopSignal?

    /// - Parameter commitMessages: messages to a transaction, for exports and pages alike; nil: the sink's own
    ///   (`ImportSink.commitMessages`: SQLite's are measured there).
    ///   `writers`: connections writing messages at once, by conversation, where the archive takes several
    ///   (PostgreSQL); SQLite has one writer.
    public convenience init(
        archive: Archive, batchSize: Int = 2_000, queueDepth: Int = 4, commitMessages: Int? = nil,
        stop: StopSignal? = nil, writers: Int = 1
    ) {
        self.init(
            store: archive.store, batchSize: batchSize, queueDepth: queueDepth, commitMessages: commitMessages,
            stop: stop, writers: writers)
    }

    /// An importer into an archive's roles (the import sink, names for messages, message times).
    package init(
        store: any ImportSink & Directory & Timelines & FileArchive & WorkspaceImages, batchSize: Int = 2_000, queueDepth: Int = 4,
        commitMessages: Int? = nil, stop: StopSignal? = nil, writers: Int = 1
    ) {
        self.archive = store
        self.writers = max(1, writers)
        self.stop = stop
        self.commitMessages = commitMessages
        pageMessagesPerWrite = commitMessages ?? store.commitMessages.pages
        self.batchSize = batchSize
        self.queueDepth = queueDepth
    }

    /// Imports each path: an export (zip or folder) or sync pages (a page file, a folder of pages, or a folder
    /// with a manifest), told apart by content. A path that is neither is reported in the summary's `skippedFiles`
    /// and the others still import.
    public func importPaths(
        _ paths: [String], conversation: String? = nil, progress: ProgressHandler? = nil
    ) -> ImportSummary {
        importPaths(paths, conversation: conversation, opened: OpenedSources(), progress: progress)
    }

    /// `importPaths`, with the exports `refusedSources` opened to check them (not opened again).
    package func importPaths(
        _ paths: [String], conversation: String? = nil, opened: OpenedSources, progress: ProgressHandler? = nil
    ) -> ImportSummary {
        var total = ImportSummary()
        for path in paths {
            if stop?.isRequested == true {
                total.interrupted = true
                break
            }
            do {
                if let database = Importer.slackdumpDatabase(at: path) {
                    total.merge(try importSlackdump(at: path, database: database))
                } else if Importer.looksLikeSyncPages(path) {
                    total.merge(try importPages(at: path, conversation: conversation))
                } else {
                    total.merge(try importExport(at: path, source: opened.byPath[path], progress: progress))
                }
            } catch {
                // A failed write (a full disk) outside the message writes (listings, a new conversation): the
                // import stops with the documented message, not a raw SQLite error on a "skipped" file.
                guard var failure = archive.writeFailure(from: error) else {
                    total.skippedFiles.append(.init(path: path, reason: "\(error)"))
                    continue
                }
                failure.committed.add(total.writeCounts)
                total.sources.append(path)
                Importer.record(failure, in: &total, bytesDone: 0, bytesTotal: 0, growth: 0)
            }
            // Past a failed write, the next sources would fail the same way.
            if total.stopped != nil { break }
        }
        return total
    }

    /// A summary of paths none of which can be imported (missing, not an export, a damaged zip), or nil when one
    /// can: for a command to report them without opening the archive for writing, which changes its file even
    /// when nothing is written (GRDB makes sure a write-ahead log exists; issue 47's D9).
    ///
    /// - Complexity: what telling each path's kind apart costs (a zip's directory, a folder's listing).
    /// - Parameter opened: the export opened to check it, for the import to use (`importPaths(_:opened:)`): a zip's
    ///   directory read again was 1.2% of a 50,000-message import's instructions (101.8 M of callgrind's 8.35 G:
    ///   the generated export's 13,058 entries).
    package static func refusedSources(_ paths: [String], opened: inout OpenedSources) -> ImportSummary? {
        var summary = ImportSummary()
        for path in paths {
            if slackdumpDatabase(at: path) != nil || looksLikeSyncPages(path) { return nil }
            do {
                opened.byPath[path] = try openSource(path)
                return nil
            } catch {
                summary.skippedFiles.append(.init(path: path, reason: "\(error)"))
            }
        }
        return summary
    }

    /// Opens the right source for `path`.
    ///
    /// - Throws: `ImportError.missing`, `.notAnExport`, `.unreadable`.
    static func openSource(_ path: String) throws -> any ExportSource {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ImportError.missing(path: path)
        }
        let source: any ExportSource
        if isDirectory.boolValue {
            source = try FolderExportSource(path: path)
        } else {
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw ImportError.unreadable(path: path, reason: "permission denied")
            }
            defer { try? handle.close() }
            let magic: Data
            do {
                magic = try handle.read(upToCount: 4) ?? Data()
            } catch {
                throw ImportError.unreadable(path: path, reason: ExportFiles.reason(for: error))
            }
            guard magic.starts(with: [0x50, 0x4B, 0x03, 0x04]) || magic.starts(with: [0x50, 0x4B, 0x05, 0x06]) else {
                throw ImportError.notAnExport(path: path)
            }
            source = try ZipExportSource(path: path)
        }
        // Present is enough here: a listing that cannot be read is reported by the import (skipped, exit status 2)
        // while the day files still import, and reading one only to check it would inflate it (15 MB of
        // `users.json` for the 10M export) to drop it.
        let hasListing = exportListingNames.contains { source.hasListing($0) }
        guard hasListing || !source.dayFiles.isEmpty else {
            // Nothing usable, but something could not be read (names that are not UTF-8, a folder without
            // permission): that is the reason to give, not "not a Slack export".
            if let first = source.unreadable.first {
                let more = source.unreadable.count > 1 ? " (and \(source.unreadable.count - 1) more like it)" : ""
                throw ImportError.unreadable(path: first.path, reason: first.reason + more)
            }
            throw ImportError.notAnExport(path: path)
        }
        return source
    }

    /// Imports one export: its listings (workspace, users, conversations), then its day files, date by date.
    ///
    /// - Throws: `ImportError` when the path cannot be used at all; problems inside the export are reported in the
    ///   summary instead.
    public func importExport(at path: String, progress: ProgressHandler? = nil) throws -> ImportSummary {
        try importExport(at: path, source: nil, progress: progress)
    }

    /// `importExport`, with the source when it is already open.
    func importExport(
        at path: String, source opened: (any ExportSource)?, progress: ProgressHandler?
    ) throws -> ImportSummary {
        let started = Date()
        let source = try opened ?? Importer.openSource(path)
        var summary = ImportSummary()
        summary.sources = [path]
        summary.ignoredFiles = source.ignoredFiles
        summary.skippedFiles += source.unreadable
        let stored = try storeListings(of: source, path: path, summary: &summary)
        summary.usersAdded = stored.usersAdded
        summary.usersUpdated = stored.usersUpdated
        summary.conversationsAdded = stored.conversationsAdded
        summary.conversationsUpdated = stored.conversationsUpdated
        summary.conversationsUnchanged = stored.conversationsUnchanged
        try importDayFiles(
            of: source, listings: stored, started: started, summary: &summary, progress: progress)
        if summary.stopped == nil, !summary.interrupted { try storeAttachedFiles(of: source, summary: &summary) }
        summary.seconds = Date().timeIntervalSince(started)
        return summary
    }

    /// Reads and stores the export's listings (workspace, users, conversations). A function of its own so that the
    /// records are freed before the day files are read: with 10,000 users and 300 channels listing them as members,
    /// the decoded records are ~20 MB that the import does not need once they are stored.
    private func storeListings(
        of source: any ExportSource, path: String, summary: inout ImportSummary
    ) throws -> ExportListingsResult {
        let listings = ExportListings(source: source, path: path, summary: &summary)
        var folderHasDays = [Bool](repeating: false, count: source.places.count)
        for folder in source.dayFiles.folderIndices { folderHasDays[Int(folder)] = true }
        let dayFolders = Set(source.places.indices.lazy.filter { folderHasDays[$0] }.map { source.places[$0].folder })
        let inputs = listings.conversationInputs(dayFolders: dayFolders, summary: &summary)
        return try archive.storeExportListings(
            teamID: listings.teamID, users: listings.users.map(\.input), conversations: inputs)
    }

    /// Streams the day files, date by date, through the import pipeline: this thread reads and prepares them
    /// while the pipeline's writer thread writes the batches into the sink's import session.
    private func importDayFiles(
        of source: any ExportSource, listings: ExportListingsResult, started: Date, summary: inout ImportSummary,
        progress: ProgressHandler?
    ) throws {
        let files = source.dayFiles
        let rowIDByPlace = source.places.map { listings.rowIDsByFolder[$0.folder] }
        // Progress counts the bytes read (`ReaderJob.run`): the files of conversations that are not imported are
        // left out of the total.
        var totalBytes: Int64 = 0
        for (bytes, rowID) in zip(files.bytesByPlace, rowIDByPlace) where rowID != nil { totalBytes += bytes }
        // A batch is whole dates of every conversation (written in time order): 1,370 messages a date on average in
        // the 1M export, 5,480 in the 10M one, more on its busy days; it is handed over in parts of at most
        // `batchSize` messages (`ReaderJob.push`), and all of a batch's parts may wait (more than `batchSize * 2`
        // when the batch is larger), so the reader reads ahead a batch as before. Bounded by batches alone, the
        // messages waiting grew with the export (heaptrack at 10M: 63 MB of prepared messages and their strings at
        // the peak). Two batches' worth waiting keeps both threads as busy as eight did (`queueDepth * batchSize *
        // 2`), interleaved:
        // 3M 61.6 and 62.0 s (119.0 and 119.8 MB peak RSS) against 61.7 and 64.2 s (138.4 and 139.4 MB); 1M 17.97 s
        // median (97.8 MB) against 18.17 s (111.9 MB), three against six batches' worth the same within noise.
        let names = try archive.nameDirectory()
        let sizeBefore = archive.fileSize
        let pipeline = ImportPipeline(
            sink: archive, plan: ImportPlan(export: listings, commitMessages: commitMessages, writers: writers),
            capacity: queueDepth, maxWeight: batchSize * 2,
            export: .init(
                bytesTotal: totalBytes, filesTotal: files.count, started: started, handler: progress, stop: stop))
        var reader = ReaderJob(
            source: source, files: files, rowIDByPlace: rowIDByPlace, names: names, batchSize: batchSize,
            sink: archive, pipeline: pipeline)
        reader.run()
        // On a write error the writer drained the queue (the reader stopped at its next push); the store rolled
        // back the open transaction and reports what the committed ones wrote.
        let error = pipeline.finish(into: &summary)
        pipeline.spent.releaseAll()
        summary.dayFiles = files.count
        summary.bytes = files.bytes
        guard let error else { return }
        guard var failure = error as? BulkImportFailure else { throw error }
        // The summary's counts are what was committed (`finish(into:)`); `record` tells them as the failure's.
        failure.committed = summary.writeCounts
        Importer.record(
            failure, in: &summary, bytesDone: pipeline.bytesWritten, bytesTotal: totalBytes,
            growth: archive.fileSize - sizeBefore)
    }

    /// `21,314`: a count with thousands separators, as the CLI prints counts.
    static func grouped(_ count: Int) -> String {
        let digits = String(count.magnitude)
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return count < 0 ? "-" + out : out
    }

    /// Records in `summary` that a failed write stopped the import: counts become what was committed (and stays
    /// in the archive), and `stopped` says why, with the archive's path, the space free and about how much more
    /// the rest needs (the archive's growth per export byte so far, times the bytes not yet imported).
    static func record(
        _ failure: BulkImportFailure, in summary: inout ImportSummary, bytesDone: Int64, bytesTotal: Int64,
        growth: Int64
    ) {
        summary.messagesAdded = failure.committed.added
        summary.messagesUpdated = failure.committed.updated
        summary.messagesUnchanged = failure.committed.unchanged
        summary.placeholderUsers = failure.committed.placeholders
        let committed = Importer.grouped(failure.committed.added + failure.committed.updated)
        func megabytes(_ bytes: Int64) -> String { "\((bytes + 999_999) / 1_000_000) MB" }
        let free = failure.freeBytes.map { " (\(megabytes($0)) free)" } ?? ""
        if failure.inWAL {
            summary.stopped =
                (failure.isDiskFull
                    ? "the disk holding the archive \(failure.path) is full\(free)"
                    : "copying the write-ahead log into the archive \(failure.path) failed (\(failure.reason))")
                + ": all \(committed) messages were committed and are safe in its write-ahead log "
                + "(\(failure.path)-wal), but could not be copied into the archive. Free some space, then run the "
                + "same import again: it adds nothing and finishes the copy."
            return
        }
        var text =
            failure.isDiskFull
            ? "the disk holding the archive \(failure.path) is full\(free)"
            : "writing to the archive \(failure.path) failed (\(failure.reason))"
        text += ". \(committed) messages were committed before that and stay in the archive"
        if failure.isDiskFull, bytesDone > 0, growth > 0, bytesTotal > bytesDone {
            let perByte = Double(growth) / Double(bytesDone)
            let needed = Int64(perByte * Double(bytesTotal - bytesDone) * 1.2)
            text += "; the rest needs about \(megabytes(needed)) more"
        }
        // A database server's failure that is not a full disk (a lost connection, a restart): nothing to free.
        let server = Archive.isDatabaseServer(failure.path) && !failure.isDiskFull
        text += server
            ? ". Once the server answers again, run the same import again: it adds only what is missing."
            : ". Free some space (or use --db on another disk), then run the same import again: it adds only "
                + "what is missing."
        summary.stopped = text
    }

    static func mostCommon(_ values: [String]) -> String? {
        var counts: [String: Int] = [:]
        for value in values { counts[value, default: 0] += 1 }
        return counts.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
    }

    /// A short reason for a decoding error, without message text.
    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context):
            let underlying = (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
            return underlying ?? context.debugDescription
        case DecodingError.typeMismatch(_, let context): return context.debugDescription
        case DecodingError.keyNotFound(let key, _): return "missing \(key.stringValue)"
        case DecodingError.valueNotFound(_, let context): return context.debugDescription
        default: return "\(error)"
        }
    }
}

/// Exports opened to check them before an import (`Importer.refusedSources`), handed on so that the import does not
/// open them again.
package struct OpenedSources: Sendable {
    var byPath: [String: any ExportSource] = [:]

    package init() {}
}

/// A batch of prepared messages for the store and the bookkeeping that goes with it.
struct ReaderBatch: Sendable {
    /// What the store writes.
    var store = ImportBatch()
    var skipReasons: [String: Int] = [:]
    var skippedFiles: [ImportSummary.SkippedFile] = []
    /// Messages whose text was repaired (`MessageRecord.textRepaired`).
    var textRepaired = 0
    var bytes: Int64 = 0
    var files = 0
    var domain: String?
    var phases = ImportPhases()
}

/// The reader side of an export's import pipeline: reads, minifies, decodes and prepares day files in order, on the
/// importing thread, and sends them to the pipeline's writer.
struct ReaderJob {
    let source: any ExportSource
    let files: DayFileList
    /// The conversation's row id by the source's folder index (`DayFileEntry.folderIndex`); nil: not imported.
    let rowIDByPlace: [Int64?]
    var preparer: MessagePreparer
    let batchSize: Int
    /// Where the batches go: it prepares each file's messages for its writes (`ImportSink.prepareForWrite`).
    let sink: any ImportSink
    let pipeline: ImportPipeline

    init(
        source: any ExportSource, files: DayFileList, rowIDByPlace: [Int64?], names: NameDirectory,
        batchSize: Int, sink: any ImportSink, pipeline: ImportPipeline
    ) {
        self.sink = sink
        self.source = source
        self.files = files
        self.rowIDByPlace = rowIDByPlace
        self.preparer = MessagePreparer(names: names)
        self.batchSize = batchSize
        self.pipeline = pipeline
    }

    /// Reads the export one date at a time across every conversation and hands the writer each day's messages in
    /// ts order.
    ///
    /// Writing in global time order keeps every index append-only: the FTS index's rowid (the time-ordered sort
    /// key), `message_sort` and `message_user`. Folder-by-folder order made FTS5 flush and merge overlapping
    /// segments and cost ~45% more write time on the 1M-message benchmark.
    mutating func run() {
        var batch = ReaderBatch()
        for day in files.days {
            let dayStart = batch.store.messages.count
            for position in day.files {
                let file = files.file(at: position, of: day)
                batch.files += 1
                guard let rowID = rowIDByPlace[Int(file.folderIndex)] else { continue }
                do {
                    let clock = ContinuousClock.now
                    let data = try source.read(file)
                    batch.phases.read += clock.duration(to: .now).seconds
                    batch.bytes += Int64(data.count)
                    try prepare(data, file: file, conversationRowID: rowID, into: &batch)
                } catch let error as ImportError {
                    batch.skippedFiles.append(.init(path: source.displayPath(of: file), reason: error.description))
                } catch {
                    batch.skippedFiles.append(.init(path: source.displayPath(of: file), reason: "\(error)"))
                }
                // The parts the writer finished while this date is read (a lock and a swap when there are none).
                pipeline.spent.releaseAll()
            }
            // Stable sort of the day's messages by ts (file order breaks ties: a revision follows its original).
            ReaderJob.sortStable(&batch.store.messages, from: dayStart)
            if batch.store.messages.count >= batchSize {
                guard push(consume batch) else { return }
                batch = ReaderBatch()
            }
        }
        push(consume batch)
    }

    /// Hands the writer the batch, in parts of at most `batchSize` messages (`ImportBatch.split`): a batch is
    /// whole dates (5,480 messages a date on average in the 10M export against 1,370 in the 1M one), and whole, the
    /// writer held one while the next waited and the one written waited to be freed. The part that ends the batch
    /// carries its counts and skips. Releases the parts the writer is done with after each push. False when the
    /// queue is closed.
    @discardableResult
    private mutating func push(_ batch: consuming ReaderBatch) -> Bool {
        batch.store.placeholders = preparer.takePlaceholders()
        batch.domain = preparer.domain
        var store = ImportBatch()
        swap(&store, &batch.store)  // moved out, so that its messages are moved into the parts, not copied
        // Each part taken out of the list as it is pushed: the list keeps no reference to the parts written.
        let total = store.messages.count
        var parts = Array((consume store).split(maxMessages: batchSize).reversed())
        while let part = parts.popLast() {
            var item = parts.isEmpty ? batch : ReaderBatch()
            item.store = part
            // The whole batch may wait (`limit`): the reader then starts its next date while the writer writes
            // this one, as when the batch was handed over whole.
            guard pipeline.send(item, limit: total) else { return false }
            pipeline.spent.releaseAll()
        }
        return true
    }

    /// Sorts `messages[start...]` by ts, keeping the order of equal keys.
    ///
    /// Sorts positions, then moves the messages into place along the permutation's cycles with swaps: copying
    /// them (what `sorted().map` did) retains and releases a dozen strings per message.
    /// - Complexity: O(n log n) comparisons of integers, O(n) swaps.
    static func sortStable(_ messages: inout [PreparedMessage], from start: Int) {
        let count = messages.count - start
        guard count > 1 else { return }
        let keys = messages[start...].map(\.tsKey)
        // order[k]: the position (relative to start) of the message that belongs at k.
        let order = (0..<count).sorted { (keys[$0], $0) < (keys[$1], $1) }
        var visited = [Bool](repeating: false, count: count)
        // Swaps through the buffer move the values (Array.swapAt copied them).
        messages.withUnsafeMutableBufferPointer { buffer in
            for first in 0..<count where !visited[first] {
                var current = first
                while true {
                    visited[current] = true
                    let next = order[current]
                    if next == first { break }
                    buffer.swapAt(start + current, start + next)
                    current = next
                }
            }
        }
    }

    private mutating func prepare(
        _ data: Data, file: DayFileEntry, conversationRowID: Int64, into batch: inout ReaderBatch
    ) throws {
        let decodeStart = ContinuousClock.now
        let sliced = data.withUnsafeBytes { JSONSlicer($0) }
        guard sliced.isArray else {
            throw ImportError.malformedJSON(
                path: source.displayPath(of: file), reason: "a day file must be a JSON array")
        }
        guard sliced.isComplete else {
            throw ImportError.malformedJSON(
                path: source.displayPath(of: file), reason: "the file is truncated or not JSON")
        }
        // FastJSON (JSONCursor) instead of JSONDecoder: measured 7.7–9× faster on day files (≈ 490 MB/s vs
        // 55–63 MB/s of minified JSON), the difference between ~20 s and ~2.5 s of CPU per million messages.
        var records: [MessageRecord?] = sliced.bytes.withUnsafeBufferPointer { buffer in
            sliced.elements.map { range in try? MessageRecord(json: UnsafeBufferPointer(rebasing: buffer[range])) }
        }
        let normaliseStart = ContinuousClock.now
        batch.phases.decode += decodeStart.duration(to: normaliseStart).seconds
        defer { batch.phases.normalise += normaliseStart.duration(to: .now).seconds }
        let fileStart = batch.store.messages.count
        defer { sink.prepareForWrite(&batch.store, from: fileStart) }
        for index in records.indices {
            // Moved out, not copied (a copy retains a record's dozen strings and arrays).
            guard let record = records[index].take() else {
                batch.skipReasons[MessagePreparer.Rejection.notAMessage.rawValue, default: 0] += 1
                continue
            }
            if record.isTextRepaired { batch.textRepaired += 1 }
            if record.subtype == "message_deleted" {
                if let key = record.deletedTS.flatMap(SlackTimestamp.parseKey) {
                    batch.store.deletions.append(.init(conversationRowID: conversationRowID, tsKey: key))
                }
                continue
            }
            let element = sliced.elements[index]
            // `user_profile` repeats the author's profile in every message (a third of the bytes); the user
            // table keeps the names, so the archive keeps the rest of the message as Slack wrote it.
            let raw = JSONSlicer.storedText(of: record, at: element, in: sliced.bytes)
            switch preparer.prepare(record, raw: raw, conversationRowID: conversationRowID) {
            case .success(let message): batch.store.messages.append(message)
            case .failure(let rejection): batch.skipReasons[rejection.rawValue, default: 0] += 1
            }
        }
    }
}
