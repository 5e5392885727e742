import Foundation
import GRDB

/// Drives export sources into the archive: listings first, then day files streamed through a reader thread
/// (inflate, minify, decode, normalise) and the calling thread (SQLite writes), overlapped on two cores.
///
/// Memory stays bounded: one day file is read at a time and at most `queueDepth` batches wait for the writer.
/// Idempotent: messages are upserted on (conversation, ts); re-importing reports them unchanged.
public final class Importer: Sendable {
    /// Called after every batch the writer writes (commits group several batches).
    public typealias ProgressHandler = @Sendable (ImportProgress) -> Void

    let archive: Archive
    private let batchSize: Int
    private let queueDepth: Int
    private let commitMessages: Int

    public init(archive: Archive, batchSize: Int = 2_000, queueDepth: Int = 4, commitMessages: Int = 20_000) {
        self.archive = archive
        self.commitMessages = commitMessages
        self.batchSize = batchSize
        self.queueDepth = queueDepth
    }

    /// Imports each path: an export (zip or folder) or sync pages (a page file, a folder of pages, or a folder
    /// with a manifest), told apart by content. A path that is neither is reported in the summary's `skippedFiles`
    /// and the others still import.
    public func importPaths(
        _ paths: [String], conversation: String? = nil, progress: ProgressHandler? = nil
    ) -> ImportSummary {
        var total = ImportSummary()
        for path in paths {
            do {
                if Importer.looksLikeSyncPages(path) {
                    total.merge(try importPages(at: path, conversation: conversation))
                } else {
                    total.merge(try importExport(at: path, progress: progress))
                }
            } catch {
                total.skippedFiles.append(.init(path: path, reason: "\(error)"))
            }
        }
        return total
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
            let magic = (try? handle.read(upToCount: 4)) ?? Data()
            try? handle.close()
            guard magic.starts(with: [0x50, 0x4B, 0x03, 0x04]) || magic.starts(with: [0x50, 0x4B, 0x05, 0x06]) else {
                throw ImportError.notAnExport(path: path)
            }
            source = try ZipExportSource(path: path)
        }
        let hasListing = try exportListingNames.contains { try source.listing($0) != nil }
        guard hasListing || !source.dayFiles.isEmpty else { throw ImportError.notAnExport(path: path) }
        return source
    }

    /// Imports one export.
    ///
    /// - Throws: `ImportError` when the path cannot be used at all; problems inside the export are reported in the
    ///   summary instead.
    public func importExport(at path: String, progress: ProgressHandler? = nil) throws -> ImportSummary {
        let started = Date()
        let source = try Importer.openSource(path)
        var summary = ImportSummary()
        summary.sources = [path]
        summary.ignoredFiles = source.ignoredFiles

        // 1. Listings.
        func readList<T: Decodable>(_ name: String, as type: T.Type) -> [T] {
            do {
                guard let data = try source.listing(name) else { return [] }
                let items = try JSONDecoder().decode([Lossy<T>].self, from: data)
                return items.compactMap(\.value)
            } catch let error as ImportError {
                summary.skippedFiles.append(.init(path: "\(path)/\(name)", reason: error.description))
            } catch {
                summary.skippedFiles.append(
                    .init(path: "\(path)/\(name)", reason: "it is not a JSON array (\(Importer.describe(error)))"))
            }
            return []
        }
        var users = readList("users.json", as: UserRecord.self)
        users += readList("org_users.json", as: UserRecord.self)
        let listings: [(String, ConversationKind)] = [
            ("channels.json", .channel), ("groups.json", .private), ("dms.json", .dm), ("mpims.json", .mpim),
        ]
        var records: [(ConversationRecord, ConversationKind)] = []
        for (file, kind) in listings {
            records += readList(file, as: ConversationRecord.self).map { ($0, kind) }
        }

        // 2. Workspace, users, conversations.
        let handles = Dictionary(users.map { ($0.id, $0.name ?? $0.id) }, uniquingKeysWith: { first, _ in first })
        let teamID = Importer.mostCommon(users.compactMap(\.teamID)) ?? "local"
        var folderToRowID: [String: Int64] = [:]
        var seenFolders = Set<String>()
        var inputs: [Archive.ConversationInput] = []
        for (record, kind) in records {
            let folder: String
            let name: String
            switch kind {
            case .dm:
                folder = record.id
                name = record.members.map { "@" + (handles[$0] ?? $0) }.joined(separator: ", ")
            default:
                name = record.name ?? record.id
                folder = name
            }
            seenFolders.insert(folder)
            inputs.append(
                .init(
                    slackID: record.id, kind: kind, name: name.isEmpty ? record.id : name, folder: folder,
                    created: record.created, topic: record.topic, purpose: record.purpose,
                    isArchived: record.isArchived, members: record.members))
        }
        let dayFolders = Set(source.dayFiles.map(\.folder))
        for folder in dayFolders.subtracting(seenFolders).sorted() {
            summary.notes.append(
                "Folder '\(folder)' is not in any listing file; its messages were imported as channel '\(folder)'.")
            inputs.append(
                .init(
                    slackID: folder, kind: .channel, name: folder, folder: folder, created: nil, topic: nil,
                    purpose: nil, isArchived: false, members: []))
        }
        var names = NameDirectory()
        var preexisting = Set<Int64>()
        try archive.write { db in
            let workspaceID = try Archive.upsertWorkspace(teamID: teamID, domain: nil, in: db)
            let (added, updated) = try Archive.upsertUsers(users, in: db)
            summary.usersAdded = added
            summary.usersUpdated = updated
            for input in inputs {
                let (rowID, outcome) = try Archive.upsertConversation(input, workspaceID: workspaceID, in: db)
                if let folder = input.folder { folderToRowID[folder] = rowID }
                switch outcome {
                case .added: summary.conversationsAdded += 1
                case .updated: summary.conversationsUpdated += 1
                case .unchanged: summary.conversationsUnchanged += 1
                }
            }
            preexisting = try Archive.conversationsWithMessages(Set(folderToRowID.values), in: db)
            for user in try Archive.knownUsers(in: db) { names.addUser(user) }
            for (id, name) in try Archive.knownConversationNames(in: db) { names.addChannel(id: id, name: name) }
        }

        // 3. Day files, date by date: reader thread → bounded queue → this thread writes.
        let files = source.dayFiles.sorted { ($0.name, $0.folder) < ($1.name, $1.folder) }
        let totalBytes = files.reduce(Int64(0)) { $0 + $1.size }
        let queue = BoundedQueue<ReaderBatch>(capacity: queueDepth)
        let reader = ReaderJob(
            source: source, files: files, folderToRowID: folderToRowID, names: names, batchSize: batchSize,
            queue: queue)
        let thread = Thread { reader.run() }
        thread.stackSize = 8 << 20
        thread.start()

        // Transactions of `commitMessages` messages (several reader batches): FTS5 flushes its pending terms and
        // SQLite writes the touched pages at every commit, so bigger transactions write less (1M messages:
        // 30.8 s with 2,000 per commit, 27.3 s with 20,000; RSS unchanged at ~192 MB).
        //
        // Checkpoints happen on their own thread (`Checkpointer`) instead of inside the writer's commits, which
        // had cost the writer 5.4 s of the 27.3 s; the WAL starts over every `checkpointPages` pages (256 MB)
        // and is truncated at the end.
        let wal = WALLength()
        archive.pool.writeWithoutTransaction { db in wal.install(on: db) }
        defer {
            try? archive.pool.writeWithoutTransaction { db in
                try wal.uninstall(from: db)
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
        }
        // Declared after the deferred TRUNCATE, so stopped before it on every path.
        let checkpointer = try? Checkpointer(path: archive.path)
        defer { _ = checkpointer?.stop() }
        var bytesDone: Int64 = 0
        var filesDone = 0
        var domain: String?
        var writeError: (any Error)?
        let checkpointPages: Int32 = 16_000
        var replyCounts = ReplyCountCheck()
        archive.pool.writeWithoutTransaction { db in
            var inTransaction = false
            var pending = 0
            while let batch = queue.pop() {
                if writeError != nil { continue }  // drain so the reader can finish
                do {
                    let writeStart = ContinuousClock.now
                    defer { summary.phases.write += writeStart.duration(to: .now).seconds }
                    summary.phases.add(batch.phases)
                    if !inTransaction {
                        try db.beginTransaction()
                        inTransaction = true
                    }
                    summary.placeholderUsers += try Archive.insertPlaceholders(batch.placeholders, in: db)
                    var writer = try MessageWriter(db)
                    // Through a buffer pointer: the messages are borrowed, not copied (a copy retains a dozen
                    // strings; copies were ~1% of the import's samples).
                    try batch.messages.withUnsafeBufferPointer { messages in
                        for index in messages.indices {
                            let outcome = try writer.upsert(messages[index])
                            replyCounts.note(messages[index], outcome)
                            switch outcome {
                            case .added: summary.messagesAdded += 1
                            case .updated: summary.messagesUpdated += 1
                            case .unchanged: summary.messagesUnchanged += 1
                            }
                        }
                    }
                    summary.phases.index += writer.indexSeconds
                    summary.phases.write -= writer.indexSeconds
                    for deletion in batch.deletions {
                        try Archive.delete(conversationRowID: deletion.conversationRowID, tsKey: deletion.tsKey, in: db)
                    }
                    pending += batch.messages.count + batch.deletions.count
                    if pending >= commitMessages {
                        try db.commit()
                        inTransaction = false
                        pending = 0
                        // The WAL starts over at the next transaction when every frame has been copied: wait
                        // for that once it is long; otherwise let the checkpoint thread copy in the background.
                        // Without a checkpoint thread (its connection could not open), the writer copies.
                        let ticket = checkpointer?.request()
                        if wal.current >= checkpointPages {
                            let clock = ContinuousClock.now
                            if let checkpointer, let ticket {
                                try checkpointer.wait(for: ticket)
                            } else {
                                try WALLength.checkpoint(db)
                            }
                            let waited = clock.duration(to: .now).seconds
                            summary.phases.write -= waited
                            summary.phases.checkpoint += waited
                        }
                    }
                } catch {
                    writeError = error
                    queue.close()
                    continue
                }
                for (reason, count) in batch.skipReasons { summary.skipMessage(reason, count: count) }
                summary.skippedFiles += batch.skippedFiles
                bytesDone += batch.bytes
                filesDone += batch.files
                if domain == nil { domain = batch.domain }
                progress?(
                    ImportProgress(
                        bytesDone: bytesDone, bytesTotal: totalBytes,
                        messagesDone: summary.messagesRead, filesDone: filesDone, filesTotal: files.count,
                        elapsed: Date().timeIntervalSince(started)))
            }
            if inTransaction {
                do {
                    if writeError == nil { try db.commit() } else { try db.rollback() }
                } catch {
                    if writeError == nil { writeError = error }
                }
            }
        }
        if let writeError { throw writeError }
        try archive.write { db in
            if let domain { _ = try Archive.upsertWorkspace(teamID: teamID, domain: domain, in: db) }
            _ = try Archive.applyPendingEvents(in: db)
            // Replies that arrived earlier through sync pages count for the parents this export brought; in
            // conversations new to the archive, only threads whose replies outnumber their declared count.
            for rowID in preexisting { try Archive.refreshReplyCounts(conversationRowID: rowID, in: db) }
            for (rowID, keys) in replyCounts.threadsToRecount() where !preexisting.contains(rowID) {
                try Archive.refreshReplyCounts(conversationRowID: rowID, threadKeys: keys, in: db)
            }
        }
        summary.dayFiles = files.count
        summary.bytes = totalBytes
        summary.seconds = Date().timeIntervalSince(started)
        return summary
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

/// A batch of prepared messages and the bookkeeping that goes with it.
struct ReaderBatch: Sendable {
    struct Deletion: Sendable {
        var conversationRowID: Int64
        var tsKey: Int64
    }
    var messages: [PreparedMessage] = []
    var deletions: [Deletion] = []
    var placeholders: [User] = []
    var skipReasons: [String: Int] = [:]
    var skippedFiles: [ImportSummary.SkippedFile] = []
    var bytes: Int64 = 0
    var files = 0
    var domain: String?
    var phases = ImportPhases()
}

/// The reader side of the pipeline: reads, minifies, decodes and prepares day files in order.
///
/// `@unchecked Sendable`: it is created on the importing thread and then used only by the reader thread.
final class ReaderJob: @unchecked Sendable {
    let source: any ExportSource
    let files: [DayFileEntry]
    let folderToRowID: [String: Int64]
    var preparer: MessagePreparer
    let batchSize: Int
    let queue: BoundedQueue<ReaderBatch>

    init(
        source: any ExportSource, files: [DayFileEntry], folderToRowID: [String: Int64], names: NameDirectory,
        batchSize: Int, queue: BoundedQueue<ReaderBatch>
    ) {
        self.source = source
        self.files = files
        self.folderToRowID = folderToRowID
        self.preparer = MessagePreparer(names: names)
        self.batchSize = batchSize
        self.queue = queue
    }

    /// Reads the export one date at a time across every conversation and hands the writer each day's messages in
    /// ts order.
    ///
    /// Writing in global time order keeps every index append-only: the FTS index's rowid (the time-ordered sort
    /// key), `message_sort` and `message_user`. Folder-by-folder order made FTS5 flush and merge overlapping
    /// segments and cost ~45% more write time on the 1M-message benchmark.
    func run() {
        defer { queue.close() }
        var batch = ReaderBatch()
        var index = 0
        while index < files.count {
            // All files of one date (files are sorted by date, then folder).
            var end = index + 1
            while end < files.count && files[end].name == files[index].name { end += 1 }
            let dayStart = batch.messages.count
            for file in files[index..<end] {
                batch.files += 1
                batch.bytes += file.size
                guard let rowID = folderToRowID[file.folder] else { continue }
                do {
                    let clock = ContinuousClock.now
                    let data = try source.read(file)
                    batch.phases.read += clock.duration(to: .now).seconds
                    try prepare(data, file: file, conversationRowID: rowID, into: &batch)
                } catch let error as ImportError {
                    batch.skippedFiles.append(.init(path: file.displayPath, reason: error.description))
                } catch {
                    batch.skippedFiles.append(.init(path: file.displayPath, reason: "\(error)"))
                }
            }
            index = end
            // Stable sort of the day's messages by ts (file order breaks ties: a revision follows its original).
            ReaderJob.sortStable(&batch.messages, from: dayStart)
            if batch.messages.count >= batchSize {
                batch.placeholders = preparer.takePlaceholders()
                batch.domain = preparer.domain
                guard queue.push(batch) else { return }
                batch = ReaderBatch()
            }
        }
        batch.placeholders = preparer.takePlaceholders()
        batch.domain = preparer.domain
        queue.push(batch)
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

    private func prepare(
        _ data: Data, file: DayFileEntry, conversationRowID: Int64, into batch: inout ReaderBatch
    ) throws {
        let decodeStart = ContinuousClock.now
        let sliced = data.withUnsafeBytes { JSONSlicer($0) }
        guard sliced.isArray else {
            throw ImportError.malformedJSON(path: file.displayPath, reason: "a day file must be a JSON array")
        }
        guard sliced.isComplete else {
            throw ImportError.malformedJSON(path: file.displayPath, reason: "the file is truncated or not JSON")
        }
        // FastJSON (JSONCursor) instead of JSONDecoder: measured 7.7–9× faster on day files (≈ 490 MB/s vs
        // 55–63 MB/s of minified JSON), the difference between ~20 s and ~2.5 s of CPU per million messages.
        let records: [MessageRecord?] = sliced.bytes.withUnsafeBufferPointer { buffer in
            sliced.elements.map { range in try? MessageRecord(json: UnsafeBufferPointer(rebasing: buffer[range])) }
        }
        let normaliseStart = ContinuousClock.now
        batch.phases.decode += decodeStart.duration(to: normaliseStart).seconds
        defer { batch.phases.normalise += normaliseStart.duration(to: .now).seconds }
        for (index, element) in records.enumerated() {
            guard let record = element else {
                batch.skipReasons[MessagePreparer.Rejection.notAMessage.rawValue, default: 0] += 1
                continue
            }
            if record.subtype == "message_deleted" {
                if let key = record.deletedTS.flatMap(SlackTimestamp.parseKey) {
                    batch.deletions.append(.init(conversationRowID: conversationRowID, tsKey: key))
                }
                continue
            }
            var range = sliced.elements[index]
            if record.subtype == "message_changed",
                let inner = JSONSlicer.valueRange(ofKey: "message", in: sliced.bytes, object: range)
            {
                range = inner
            }
            // `user_profile` repeats the author's profile in every message (a third of the bytes); the user
            // table keeps the names, so the archive keeps the rest of the message as Slack wrote it.
            let raw = JSONSlicer.text(of: range, in: sliced.bytes, removing: "user_profile")
            switch preparer.prepare(record, raw: raw, conversationRowID: conversationRowID) {
            case .success(let message): batch.messages.append(message)
            case .failure(let rejection): batch.skipReasons[rejection.rawValue, default: 0] += 1
            }
        }
    }
}
