import Foundation

/// A conversation's pages: the files of a folder or file named by its id, of a manifest entry, or a folder's files
/// that name their conversation in their messages.
struct PageSet {
    var owner: Importer.PageOwner
    var files: [String]
    var unreadable: [ImportSummary.SkippedFile] = []
}

/// The conversations a dump's pages were written to, resolved once each.
struct PageTargets {
    /// `--conversation`: every message goes there, whatever its `channel` field says.
    var forced: Conversation?
    var byName: [String: Result<Conversation, StoreError>] = [:]
    /// Conversations that received messages, for the reply recount.
    var touched: Set<Int64> = []
    /// The import's pipeline: pages, listings and conversations met on the way go through its writer.
    let pipeline: ImportPipeline
    /// Pages waiting to be written together.
    let buffer: PageBuffer

    /// - Parameter commitMessages: the importer's (nil: the sink's); `messagesPerWrite`: pages' messages written
    ///   together.
    init(sink: any ImportSink, commitMessages: Int?, messagesPerWrite: Int, writers: Int = 1) {
        // One set of pages waits while the other is written: the reading side runs at most one write ahead.
        pipeline = ImportPipeline(
            sink: sink, plan: ImportPlan(commitMessages: commitMessages, writers: writers), capacity: 1)
        buffer = PageBuffer(pipeline: pipeline, messagesPerWrite: messagesPerWrite)
    }
}

/// Where a page goes once prepared: a dump's buffer (written with others, in time order), or the pipeline's writer
/// at once (a sync's page, durable with its progress before the next is asked for).
protocol PageDestination {
    /// Writes `page` or keeps it to write; adds what was written to `summary`.
    func add(_ page: PageWrite, summary: inout ImportSummary) throws
}

extension ImportPipeline: PageDestination {
    func add(_ page: PageWrite, summary: inout ImportSummary) throws {
        summary.add(try write(page: page))
    }
}

/// Dumped pages written about `messagesPerWrite` messages at a time (the store writes each run of pages in ts
/// order), by the import pipeline's writer thread while the importing thread reads and prepares the next pages, as
/// an export's import does. Other writes of the importing thread (a conversation created, a listing stored) go
/// through the same writer after the pages sent before them.
final class PageBuffer: PageDestination {
    /// The importer's `pageMessagesPerWrite` (the sink's `commitMessages.pages` by default).
    private let messagesPerWrite: Int
    private let pipeline: ImportPipeline
    private var pages: [PageWrite] = []
    private var messages = 0
    /// The latest oldest message of the pages added. Pages come in the order of their oldest ts (files in
    /// `Importer.timeOrder`, slackdump's rows in ts order), so later pages hardly hold older messages: the
    /// messages before it are written, the newer ones wait for the messages that will come between (a page of a
    /// quiet conversation spans months). Each write then covers a narrow stretch of history, as an export's
    /// day-by-day import does. Files in no such order (JSON lines) see the horizon jump ahead, and all is written
    /// as it comes.
    private var horizon = Int64.min
    private var addedSinceCheck = 0

    init(pipeline: ImportPipeline, messagesPerWrite: Int) {
        self.messagesPerWrite = max(1, messagesPerWrite)
        self.pipeline = pipeline
    }

    func add(_ page: PageWrite, summary: inout ImportSummary) throws {
        pages.append(page)
        if page.isOrdered {
            // Reaction events and sync progress: written after everything before them.
            try flush(summary: &summary)
            return
        }
        if let oldest = page.messages.lazy.map(\.tsKey).min() { horizon = max(horizon, oldest) }
        let added = page.messages.count + page.deletions.count + 1
        messages += added
        addedSinceCheck += added
        guard messages >= messagesPerWrite, addedSinceCheck >= messagesPerWrite / 10 else { return }
        addedSinceCheck = 0
        try flushOlder(summary: &summary)
    }

    /// Hands the writer the messages older than the horizon, with their pages' deletions and spans, once there are
    /// half a write of them; past two writes waiting, the oldest write's worth goes anyway.
    ///
    /// - Complexity: O(b) for b messages buffered (O(b log b) past the cap).
    private func flushOlder(summary: inout ImportSummary) throws {
        var cut = horizon
        let ready = pages.reduce(0) { count, page in count + page.messages.count { $0.tsKey < cut } }
        if ready < messagesPerWrite / 2 {
            guard messages >= 2 * messagesPerWrite else { return }
            let keys = pages.flatMap { $0.messages.map(\.tsKey) }.sorted()
            guard keys.count > messagesPerWrite else { return try flush(summary: &summary) }
            cut = keys[messagesPerWrite]
        }
        var now: [PageWrite] = []
        var waiting: [PageWrite] = []
        for page in pages {
            let (older, newer) = page.split(before: cut)
            now.append(older)
            if let newer { waiting.append(newer) }
        }
        summary.merge(try pipeline.takeWritten().summary)
        pipeline.send(pages: now)
        pages = waiting
        messages = waiting.reduce(0) { $0 + $1.messages.count + 1 }
    }

    /// Hands the buffered pages to the writer thread (waiting while it still writes the previous ones); adds what
    /// it has written since the last call to `summary`, or throws the error that stopped it.
    func flush(summary: inout ImportSummary) throws {
        summary.merge(try pipeline.takeWritten().summary)
        guard !pages.isEmpty else { return }
        defer {
            pages = []
            messages = 0
            addedSinceCheck = 0
        }
        pipeline.send(pages: pages)
    }
}

extension Importer {
    /// Messages of JSON lines gathered into one write.
    static let linesPerWrite = 1_000

    /// Imports one file of a dump: a page (history, replies, events, a bare array) or JSON lines.
    ///
    /// - Parameters:
    ///   - named: the file was named on the command line (not found in a folder): it must be a page.
    ///   - owner: the conversation for messages without a `channel` field (a folder or file name, or the folder's
    ///     own name).
    func importDumpFile(
        _ file: String, named: Bool, owner: String, targets: inout PageTargets, preparer: inout MessagePreparer,
        summary: inout ImportSummary
    ) throws {
        // Read once: lines-or-page, page-or-listing and the page itself come from the same bytes. A large file
        // that may be JSON lines is streamed instead.
        let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
        let streamed = file.hasSuffix(".jsonl") || file.hasSuffix(".ndjson") || size > Importer.wholeFileLimit
        if streamed, try JSONLines.isLines(file) {
            summary.recognise("JSON lines files")
            try importLines(file, owner: owner, targets: &targets, preparer: &preparer, summary: &summary)
            return
        }
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ImportError.unreadable(path: file, reason: "permission denied or not a file")
        }
        if !streamed, JSONLines.isLines(data) {
            summary.recognise("JSON lines files")
            try importLines(file, owner: owner, targets: &targets, preparer: &preparer, summary: &summary)
            return
        }
        let page = data.withUnsafeBytes { JSONSlicer($0) }
        // A folder may hold other JSON beside its pages: a conversation's `conversations.info` named by its id is
        // stored; anything else (a generator's summary, a tool's notes) is noted and left alone. A file named on
        // its own must be a page.
        if !named, !Importer.isPage(page) {
            if let listing = ListingFile.recognise(data) {
                summary.recognise(listing.kindName)
                var found = DumpListings()
                found.add(listing)
                try store(found, into: targets.pipeline, summary: &summary)
                preparer = MessagePreparer(names: try archive.nameDirectory())
            } else {
                summary.notes.append("'\(file)' is not an API page (no \"messages\"); it was not imported.")
            }
            return
        }
        summary.dayFiles += 1
        summary.bytes += Int64(data.count)
        summary.recognise("API pages")
        try importDumpedPage(
            page, source: file, owner: owner, recordSpan: true, targets: &targets, preparer: &preparer,
            summary: &summary)
    }

    /// Files up to this size are read whole to tell JSON lines from a page (larger ones are streamed).
    static let wholeFileLimit = 64 << 20

    /// Applies one dumped page, its messages split by their `channel` field (messages without one go to `owner`;
    /// with `--conversation` all go there).
    func importDumpedPage(
        _ bytes: [UInt8], source: String, owner: String, recordSpan: Bool, targets: inout PageTargets,
        preparer: inout MessagePreparer, summary: inout ImportSummary
    ) throws {
        try importDumpedPage(
            bytes.withUnsafeBytes { JSONSlicer($0) }, source: source, owner: owner, recordSpan: recordSpan,
            targets: &targets, preparer: &preparer, summary: &summary)
    }

    /// Applies one sliced page (see above).
    func importDumpedPage(
        _ sliced: JSONSlicer, source: String, owner: String, recordSpan: Bool, targets: inout PageTargets,
        preparer: inout MessagePreparer, summary: inout ImportSummary
    ) throws {
        let envelope = try Importer.envelope(of: sliced, source: source)
        var (page, elements, cursor) = (envelope.page, envelope.elements, envelope.cursor)
        // slackdump's dump format: `{"channel_id": "C…", "messages": [...]}`, replies inside their parents.
        let owner = envelope.channelID ?? owner
        if let flat = Importer.flatteningNestedReplies(page, elements) {
            (page, elements, _) = try Importer.envelope(of: flat, source: source)
        }
        let records = Importer.records(of: page, at: elements)
        var order: [String] = []
        var groups: [String: [Int]] = [:]
        for (index, record) in records.enumerated() {
            let channel = targets.forced == nil ? record?.channel.flatMap { $0.isEmpty ? nil : $0 } : nil
            let name = channel ?? owner
            if groups[name] == nil { order.append(name) }
            groups[name, default: []].append(index)
        }
        if order.isEmpty { order = [owner] }  // an empty page still records its span
        for name in order {
            let conversation: Conversation
            switch try target(name, targets: &targets, summary: &summary) {
            case .success(let found): conversation = found
            case .failure(let error):
                summary.skipMessage("\(error) (name it with --conversation ID)", count: groups[name]?.count ?? 0)
                continue
            }
            targets.touched.insert(conversation.rowID)
            let indices = groups[name] ?? []
            let whole = order.count == 1
            _ = try applyRecords(
                whole ? records : indices.map { records[$0] }, at: whole ? elements : indices.map { elements[$0] },
                of: page, cursor: cursor, into: conversation, preparer: &preparer, summary: &summary,
                recordSpan: recordSpan && whole, writingTo: targets.buffer)
        }
    }

    static let nestedRepliesKey = "slackdump_thread_replies"

    /// The messages at `elements` as one array with slackdump's nested thread replies (`slackdump_thread_replies`
    /// inside a parent) taken out and put after their parent; nil when there are none.
    static func flatteningNestedReplies(_ page: JSONSlicer, _ elements: [Range<Int>]) -> [UInt8]? {
        let marker = Array(nestedRepliesKey.utf8)
        // memchr to each candidate first byte (memmem is not in Glibc's Swift module).
        let found = page.bytes.withUnsafeBufferPointer { all -> Bool in
            guard let base = all.baseAddress else { return false }
            var at = 0
            while at + marker.count <= all.count,
                let hit = memchr(base + at, Int32(marker[0]), all.count - at - marker.count + 1)
            {
                let index = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                if memcmp(base + index, marker, marker.count) == 0 { return true }
                at = index + 1
            }
            return false
        }
        guard found else { return nil }
        var flat: [UInt8] = [UInt8(ascii: "[")]
        func add(_ bytes: some Collection<UInt8>) {
            if flat.count > 1 { flat.append(UInt8(ascii: ",")) }
            flat += bytes
        }
        for element in elements {
            guard let nested = JSONSlicer.valueRange(ofKey: nestedRepliesKey, in: page.bytes, object: element) else {
                add(page.bytes[element])
                continue
            }
            add(JSONSlicer.text(of: element, in: page.bytes, removing: nestedRepliesKey).utf8)
            let replies = page.bytes[nested].withUnsafeBytes { JSONSlicer($0) }
            for reply in replies.elements where replies.isArray { add(replies.bytes[reply]) }
        }
        flat.append(UInt8(ascii: "]"))
        return flat
    }

    /// The conversation `name` names (created when it is an unknown id), resolved once per import.
    ///
    /// - Throws: a failed write creating it (a full disk): that stops the import, it does not skip the messages.
    private func target(
        _ name: String, targets: inout PageTargets, summary: inout ImportSummary
    ) throws -> Result<Conversation, StoreError> {
        if let forced = targets.forced { return .success(forced) }
        if let known = targets.byName[name] { return known }
        let found: Result<Conversation, StoreError>
        do {
            found = .success(try conversationOrNew(named: name, via: targets.pipeline, summary: &summary))
        } catch let error as StoreError {
            found = .failure(error)
        } catch {
            if archive.writeFailure(from: error) != nil { throw error }
            found = .failure(.conversationNotFound(name, closest: []))
        }
        targets.byName[name] = found
        return found
    }

    /// Imports a file of JSON lines: each line a page, a single message, or a users or conversations listing.
    /// Consecutive message lines are written `linesPerWrite` at a time; a line that cannot be read is reported
    /// as `FILE:LINE` and the others still import.
    func importLines(
        _ file: String, owner: String, targets: inout PageTargets, preparer: inout MessagePreparer,
        summary: inout ImportSummary
    ) throws {
        var reader = try OrderedLines(path: file)
        summary.dayFiles += 1
        var pending = PendingLines()
        while let line = try reader.next() {
            summary.bytes += Int64(line.count + 1)
            let slicer = line.withUnsafeBytes { JSONSlicer($0) }
            if slicer.bytes.isEmpty { continue }
            let place = "\(file):\(reader.number)"
            guard slicer.isComplete else {
                summary.skippedFiles.append(.init(path: place, reason: "the line is truncated or not JSON"))
                continue
            }
            switch JSONLines.shape(of: slicer) {
            case .message:
                pending.add(slicer.bytes, line: reader.number)
                if pending.count >= Importer.linesPerWrite {
                    try flush(&pending, file: file, owner: owner, targets: &targets, preparer: &preparer,
                        summary: &summary)
                }
                continue
            case .page:
                try flush(&pending, file: file, owner: owner, targets: &targets, preparer: &preparer, summary: &summary)
                summary.recognise("API pages")
                do {
                    try importDumpedPage(
                        slicer, source: place, owner: owner, recordSpan: true, targets: &targets,
                        preparer: &preparer, summary: &summary)
                } catch let error as ImportError {
                    summary.skippedFiles.append(.init(path: place, reason: error.description))
                }
            case .other:
                try flush(&pending, file: file, owner: owner, targets: &targets, preparer: &preparer, summary: &summary)
                guard let listing = ListingFile.recognise(Data(slicer.bytes)) else {
                    summary.skippedFiles.append(
                        .init(path: place, reason: "not an API page, message, user, conversation or id map"))
                    continue
                }
                summary.recognise(listing.kindName)
                var found = DumpListings()
                found.add(listing)
                try store(found, into: targets.pipeline, summary: &summary)
                preparer = MessagePreparer(names: try archive.nameDirectory())
            }
        }
        try flush(&pending, file: file, owner: owner, targets: &targets, preparer: &preparer, summary: &summary)
    }

    private func flush(
        _ pending: inout PendingLines, file: String, owner: String, targets: inout PageTargets,
        preparer: inout MessagePreparer, summary: inout ImportSummary
    ) throws {
        guard pending.count > 0 else { return }
        let source = "\(file):\(pending.firstLine)-\(pending.lastLine)"
        let bytes = pending.take()
        try importDumpedPage(
            bytes, source: source, owner: owner, recordSpan: false, targets: &targets, preparer: &preparer,
            summary: &summary)
    }
}

/// Message lines waiting to be written together, as one JSON array.
private struct PendingLines {
    private var bytes: [UInt8] = []
    private(set) var count = 0
    private(set) var firstLine = 0
    private(set) var lastLine = 0

    mutating func add(_ message: [UInt8], line: Int) {
        bytes.append(count == 0 ? UInt8(ascii: "[") : UInt8(ascii: ","))
        bytes += message
        if count == 0 { firstLine = line }
        lastLine = line
        count += 1
    }

    /// The array of the messages added since the last take.
    mutating func take() -> [UInt8] {
        bytes.append(UInt8(ascii: "]"))
        defer {
            bytes = []
            count = 0
        }
        return bytes
    }
}

/// A file of JSON lines (`.jsonl`, `.ndjson`, or `.json` whose first line is a whole JSON value followed by
/// another), read a line at a time: memory stays at the longest line, which may be up to `maxLine` bytes.
struct JSONLines {
    static let maxLine = 128 << 20
    private static let chunk = 1 << 20
    private let handle: FileHandle
    private let path: String
    private var buffer: [UInt8] = []
    private var start = 0
    /// Bytes of the file before `buffer`.
    private var consumed: Int64 = 0
    private var atEnd = false
    /// Where the line `next()` returned last starts in the file.
    private(set) var offset: Int64 = 0
    /// The number of the line `next()` returned last (1-based).
    private(set) var number = 0

    init(path: String) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ImportError.unreadable(path: path, reason: "permission denied or not a file")
        }
        self.handle = handle
        self.path = path
    }

    /// The next line without its line break, or nil at the end.
    ///
    /// - Throws: `ImportError.malformedJSON` for a line longer than `maxLine`, `.unreadable` for a read error.
    mutating func next() throws -> [UInt8]? {
        while true {
            let newline = buffer.withUnsafeBufferPointer { all -> Int? in
                guard start < all.count, let base = all.baseAddress,
                    let found = memchr(base + start, 0x0A, all.count - start)
                else { return nil }
                return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            }
            if let newline {
                defer { start = newline + 1 }
                number += 1
                offset = consumed + Int64(start)
                return Array(buffer[start..<newline])
            }
            if atEnd {
                guard start < buffer.count else { return nil }
                defer { start = buffer.count }
                number += 1
                offset = consumed + Int64(start)
                return Array(buffer[start...])
            }
            guard buffer.count - start <= Self.maxLine else {
                throw ImportError.malformedJSON(
                    path: path, reason: "line \(number + 1) is longer than \(Self.maxLine >> 20) MiB")
            }
            buffer.removeFirst(start)
            consumed += Int64(start)
            start = 0
            let data: Data
            do {
                data = try handle.read(upToCount: Self.chunk) ?? Data()
            } catch {
                throw ImportError.unreadable(path: path, reason: "\(error.localizedDescription)")
            }
            if data.isEmpty { atEnd = true } else { buffer += data }
        }
    }

    /// Whether `path` holds JSON lines: by its extension, or a first non-blank line that is a whole JSON object or
    /// array followed by another non-blank line.
    static func isLines(_ path: String) throws -> Bool {
        if path.hasSuffix(".jsonl") || path.hasSuffix(".ndjson") { return true }
        guard Importer.firstByte(of: path).map({ $0 == 0x7B || $0 == 0x5B }) == true else { return false }
        var reader = try JSONLines(path: path)
        var first: JSONSlicer?
        while let line = try reader.next() {
            let slicer = line.withUnsafeBytes { JSONSlicer($0) }
            if slicer.bytes.isEmpty { continue }
            if first != nil { return true }
            guard slicer.isComplete else { return false }
            first = slicer
        }
        return false
    }

    /// Whether `data`, a whole file, holds JSON lines: its first line that is not blank is a whole JSON value and
    /// another line that is not blank follows (as `isLines(_:)` decides for a file it streams).
    static func isLines(_ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            func isBlank(_ byte: UInt8) -> Bool {
                byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 || byte == 0xEF || byte == 0xBB || byte == 0xBF
            }
            var start = 0
            while start < bytes.count, isBlank(bytes[start]) { start += 1 }
            guard start < bytes.count, bytes[start] == UInt8(ascii: "{") || bytes[start] == UInt8(ascii: "["),
                let base = bytes.baseAddress, let found = memchr(base + start, 0x0A, bytes.count - start)
            else { return false }
            let newline = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            // Nothing but white space after the first line: one document (the usual page), not lines.
            guard bytes[(newline + 1)...].contains(where: { !isBlank($0) }) else { return false }
            return JSONSlicer(UnsafeRawBufferPointer(rebasing: raw[start..<newline])).isComplete
        }
    }

    enum Shape { case message, page, other }

    /// What one line holds: a single message (an object with `ts` and no `messages`), a page (an object with
    /// `messages`, an `ok` without a listing's keys, or an array whose first element has a `ts` or `type`), or
    /// something else (a listing, perhaps).
    static func shape(of line: JSONSlicer) -> Shape {
        let whole = 0..<line.bytes.count
        if line.isArray {
            guard let first = line.elements.first else { return .page }
            let isMessage = ["ts", "type"].contains {
                JSONSlicer.valueRange(ofKey: $0, in: line.bytes, object: first) != nil
            }
            return isMessage ? .page : .other
        }
        let members = JSONSlicer.members(of: whole, in: line.bytes)
        func has(_ key: String) -> Bool { JSONSlicer.value(key, in: members) != nil }
        if has("messages") { return .page }
        if has("ts") { return .message }
        if has("ok"), !has("members"), !has("channels"), !has("user"), !has("channel") {
            return .page  // an error page, reported as one
        }
        return .other
    }
}

extension Importer {
    /// The `slackdump.sqlite` that `path` is or holds, when it does.
    static func slackdumpDatabase(at path: String) -> String? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return nil }
        let file = isDirectory.boolValue ? path + "/slackdump.sqlite" : path
        return SlackdumpDatabase.isSQLite(file) ? file : nil
    }

    /// Messages of a slackdump database read at a time (one page per conversation among them).
    static let slackdumpBatch = 10_000

    /// Imports a slackdump archive (see `SlackdumpDatabase`): its users and conversations, then the latest version
    /// of every message of its history and thread chunks, in ts order across conversations.
    ///
    /// - Throws: `SlackdumpError` when the file is not a slackdump database.
    public func importSlackdump(at path: String, database file: String) throws -> ImportSummary {
        let started = Date()
        var summary = ImportSummary()
        summary.sources = [path]
        summary.recognise("slackdump archives")
        try recordingWriteFailure(in: &summary) { summary in try writeSlackdump(file: file, summary: &summary) }
        // slackdump's archive folder keeps the files and avatars it downloaded beside its database.
        if summary.stopped == nil, !summary.interrupted {
            do {
                try storeSlackdumpFolderFiles(
                    in: URL(fileURLWithPath: file).deletingLastPathComponent().path, summary: &summary)
            } catch let error as StoreError {
                // A backend without a file store (PostgreSQL so far): the messages are in; the files wait.
                guard case .notOnPostgreSQL = error else { throw error }
                summary.notes.append("The slackdump folder's files and avatars were not stored: \(error)")
            }
        }
        summary.seconds = Date().timeIntervalSince(started)
        return summary
    }

    private func writeSlackdump(file: String, summary: inout ImportSummary) throws {
        let database = try SlackdumpDatabase(path: file)
        var found = DumpListings()
        let decoder = JSONDecoder()
        var unreadable = 0
        for data in try database.users() {
            if let data, let user = try? decoder.decode(UserRecord.self, from: data) {
                found.users.append(user)
            } else {
                unreadable += 1
            }
        }
        for data in try database.conversations() {
            if let data, let record = try? decoder.decode(ConversationRecord.self, from: data) {
                found.conversations.append(record)
            } else {
                unreadable += 1
            }
        }
        if unreadable > 0 {
            summary.skippedFiles.append(
                .init(path: file, reason: "\(unreadable) user or conversation rows hold no readable JSON object"))
        }
        // Rows the message query below cannot read are counted, never dropped unseen (issue 47's D10).
        let notRead = try database.messagesNotRead()
        if notRead.missingChunk > 0 {
            summary.skipMessage("message rows whose slackdump chunk is missing", count: notRead.missingChunk)
        }
        if notRead.otherChunkType > 0 {
            summary.skipMessage(
                "message rows only in slackdump chunks that are not history or thread answers",
                count: notRead.otherChunkType)
        }
        summary.bytes = Int64((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0)
        try writingPages(summary: &summary) { targets, summary in
            try store(found, into: targets.pipeline, summary: &summary)
            try writeSlackdumpMessages(file: file, targets: &targets, summary: &summary, from: database)
        }
    }

    /// The messages of a slackdump database, a batch of rows at a time, one page per conversation of a batch.
    private func writeSlackdumpMessages(
        file: String, targets: inout PageTargets, summary: inout ImportSummary,
        from database: SlackdumpDatabase
    ) throws {
        var preparer = MessagePreparer(names: try archive.nameDirectory())
        try database.forEachMessage(batch: Importer.slackdumpBatch) { rows in
            guard stop?.isRequested != true else {
                summary.interrupted = true
                return
            }
            // One page per conversation of the batch (rows come in ts order across conversations: grouping only
            // consecutive rows made pages of one or two messages, each paying a page's overhead). The store
            // writes each transaction in ts order whatever the pages' order.
            var order: [String] = []
            var pages: [String: [UInt8]] = [:]
            for row in rows {
                if pages[row.conversation] == nil {
                    order.append(row.conversation)
                    pages[row.conversation] = [UInt8(ascii: "[")]
                } else {
                    pages[row.conversation]!.append(UInt8(ascii: ","))
                }
                pages[row.conversation]! += row.json
            }
            for conversation in order {
                guard var bytes = pages.removeValue(forKey: conversation) else { continue }
                bytes.append(UInt8(ascii: "]"))
                do {
                    try importDumpedPage(
                        bytes, source: "\(file) (\(conversation))", owner: conversation, recordSpan: false,
                        targets: &targets, preparer: &preparer, summary: &summary)
                } catch let error as ImportError {
                    summary.skippedFiles.append(.init(path: "\(file) (\(conversation))", reason: error.description))
                }
            }
        }
    }

    /// Runs a dump import's writes; a failed write (a full disk) ends it with what was committed counted and the
    /// documented message in `summary.stopped` (`record`), rather than an error that loses the counts: the
    /// command then reports true counts and exits 1, and never takes a new archive with committed data away.
    func recordingWriteFailure(
        in summary: inout ImportSummary, _ body: (inout ImportSummary) throws -> Void
    ) throws {
        do {
            try body(&summary)
        } catch {
            guard var failure = archive.writeFailure(from: error) else { throw error }
            failure.committed.add(summary.writeCounts)
            Importer.record(failure, in: &summary, bytesDone: 0, bytesTotal: 0, growth: 0)
        }
    }

    /// Runs `write` through a dump's import pipeline (`PageTargets`), then waits for its writer, which raises the
    /// reply counts of the conversations written to as the session ends. When `write` throws, the writer is waited
    /// for all the same and what it committed is added to `summary` (a write error there is the one that stopped
    /// the import, or follows from it, and is not thrown again); then the error is rethrown.
    func writingPages(
        summary: inout ImportSummary, _ write: (inout PageTargets, inout ImportSummary) throws -> Void
    ) throws {
        var targets = PageTargets(
            sink: archive, commitMessages: commitMessages, messagesPerWrite: pageMessagesPerWrite, writers: writers)
        do {
            try write(&targets, &summary)
            try targets.buffer.flush(summary: &summary)
            let touched = targets.touched.sorted()
            _ = try targets.pipeline.perform { session in session.recountReplies(conversations: touched) }
        } catch {
            _ = targets.pipeline.finish(into: &summary)
            throw error
        }
        if let failure = targets.pipeline.finish(into: &summary) { throw failure }
    }
}

/// The lines of a JSON lines file in the order of the oldest ts each holds (as `Importer.timeOrder` orders a
/// folder's files, for the same reason), ties in file order; a file of more than `maxOrdered` lines is read in
/// file order (the index holds 32 bytes a line).
///
/// The first pass reads every line once for its time hint and place; `next()` then reads each line again where
/// it is.
struct OrderedLines {
    static let maxOrdered = 1_000_000
    private var entries: [(hint: Int64, number: Int, offset: Int64, length: Int)] = []
    private var position = 0
    private let handle: FileHandle
    private let path: String
    /// Reads the file in order when it has too many lines to index.
    private var streaming: JSONLines?
    /// The number of the line `next()` returned last (1-based).
    private(set) var number = 0

    init(path: String) throws {
        var scan = try JSONLines(path: path)
        while let line = try scan.next() {
            guard entries.count < Self.maxOrdered else {
                entries = []
                streaming = try JSONLines(path: path)
                break
            }
            let hint = line.withUnsafeBufferPointer { Importer.timeHint(in: $0) } ?? 0
            entries.append((hint, scan.number, scan.offset, line.count))
        }
        entries.sort { ($0.hint, $0.number) < ($1.hint, $1.number) }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ImportError.unreadable(path: path, reason: "permission denied or not a file")
        }
        self.handle = handle
        self.path = path
    }

    /// The next line without its line break, or nil at the end.
    ///
    /// - Throws: `ImportError.unreadable` when a line cannot be read again, what `JSONLines.next()` throws.
    mutating func next() throws -> [UInt8]? {
        if streaming != nil {
            let line = try streaming?.next()
            number = streaming?.number ?? number
            return line
        }
        guard position < entries.count else { return nil }
        let entry = entries[position]
        position += 1
        number = entry.number
        do {
            try handle.seek(toOffset: UInt64(entry.offset))
            let data = try handle.read(upToCount: entry.length) ?? Data()
            guard data.count == entry.length else {
                throw ImportError.unreadable(path: path, reason: "line \(entry.number) changed while it was read")
            }
            return [UInt8](data)
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError.unreadable(path: path, reason: "\(error.localizedDescription)")
        }
    }
}
