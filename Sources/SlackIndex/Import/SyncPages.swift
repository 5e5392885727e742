import Foundation

/// Importing API sync pages: `conversations.history` / `conversations.replies` responses, event pages
/// (`message_changed`, `message_deleted`), bare JSON arrays of messages and `{"messages": [...]}` files.
///
/// Pages are recognised by their content. Applying a page twice changes nothing; an edit replaces the stored text
/// and index entry (the newest edit wins whatever the order); a deletion marks the message deleted and removes it
/// from the index, or waits for the message if it has not arrived; replies raise their parent's reply count.
extension Importer {
    /// The conversation a set of pages belongs to.
    enum PageOwner {
        /// Named on the command line or by the folder: must be in the archive already.
        case reference(String)
        /// Described by a generator manifest: created if missing.
        case described(id: String, name: String, kind: ConversationKind)
    }

    /// The files of `sets` (set, file index) in the order of the oldest ts each holds, files without one first
    /// (a listing, an empty page), ties in folder order.
    ///
    /// Time order across conversations keeps each transaction's inserts within weeks of history (with
    /// `PageBuffer`'s horizon): folder order (a conversation's whole history, then the next) made every
    /// transaction touch pages all over the message table and its indexes. Only speed depends on it: any order
    /// gives the same archive.
    /// - Complexity: O(f log f) for f files, plus a scan of each (of its first 4 KB past `wholeFileLimit`).
    static func timeOrder(_ sets: [PageSet]) -> [(set: Int, file: Int)] {
        var order: [(hint: Int64, set: Int, file: Int)] = []
        for (set, pages) in sets.enumerated() {
            for (index, file) in pages.files.enumerated() { order.append((timeHint(of: file) ?? 0, set, index)) }
        }
        order.sort { ($0.hint, $0.set, $0.file) < ($1.hint, $1.set, $1.file) }
        return order.map { ($0.set, $0.file) }
    }

    /// The lowest ts key among the `"ts"` members of `path` (of its first 4 KB when it is larger than
    /// `wholeFileLimit`), or nil. Nested ones (`edited`, attachments) count too: it is an estimate.
    static func timeHint(of path: String) -> Int64? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let size = (try? handle.seekToEnd()) ?? 0
        guard (try? handle.seek(toOffset: 0)) != nil,
            let head = try? handle.read(upToCount: size > UInt64(wholeFileLimit) ? 4_096 : Int(size))
        else { return nil }
        return head.withUnsafeBytes { timeHint(in: $0.bindMemory(to: UInt8.self)) }
    }

    /// The lowest ts key among the `"ts"` members in `bytes`, or nil (see `timeHint(of:)`).
    static func timeHint(in bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard let base = bytes.baseAddress else { return nil }
        var lowest: Int64?
        var at = 0
        // memchr to each quote; a key `"ts"`, white space and `:`, then a quoted value.
        while at < bytes.count, let found = memchr(base + at, Int32(UInt8(ascii: "\"")), bytes.count - at) {
            let quote = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            at = quote + 1
            guard quote + 4 <= bytes.count, bytes[quote + 1] == UInt8(ascii: "t"), bytes[quote + 2] == UInt8(ascii: "s"),
                bytes[quote + 3] == UInt8(ascii: "\"")
            else { continue }
            var i = quote + 4
            while i < bytes.count, [0x20, 0x0A, 0x0D, 0x09, UInt8(ascii: ":")].contains(bytes[i]) { i += 1 }
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { continue }
            var end = i + 1
            while end < bytes.count, end - i <= 24, bytes[end] != UInt8(ascii: "\"") { end += 1 }
            guard end < bytes.count, bytes[end] == UInt8(ascii: "\""),
                let key = SlackTimestamp.parseKey(String(decoding: bytes[(i + 1)..<end], as: UTF8.self))
            else { continue }
            lowest = min(lowest ?? key, key)
            at = end + 1
        }
        return lowest
    }

    /// Whether `path` holds sync pages rather than an export (by content).
    static func looksLikeSyncPages(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return false }
        if isDirectory.boolValue {
            let fm = FileManager.default
            if fm.fileExists(atPath: path + "/manifest.json") { return true }
            let listings = exportListingNames.map { path + "/" + $0 }.filter { fm.fileExists(atPath: $0) }
            // An export's listings are arrays of objects; an API dump's `channels.json` is a `conversations.list`
            // object, or (scripts that call the Web API) an array of conversation ids (issue 55).
            let exportListings = listings.contains(where: { isExportListing($0) })
            // A tree of responses, unless it holds day files: an export without its listings (DM folders are
            // named by id), or a folder holding an export and other things (`import sample-data/`, whose
            // `summary.json` made it pass for pages: its day files were imported as pages of no conversation,
            // 3,219 skipped), which the export reader reports.
            let tree = PageTree(root: path)
            let files = tree.conversations.flatMap(\.files) + tree.others
            let hasDays = files.contains { isDayFileName(URL(fileURLWithPath: $0).lastPathComponent) }
            if !exportListings, listings.isEmpty, !hasDays, !pageFiles(in: path).files.isEmpty { return true }
            // An export's listing beside folders of pages named by conversation id and no day file at all (a script
            // saved `conversations.list`'s channels as an array) is a dump: the listing does not decide alone
            // (issue 55); taken as an export, its pages were ignored and nothing imported.
            if exportListings { return !hasDays && !tree.conversations.isEmpty }
            return !files.isEmpty && !hasDays
        }
        return firstByte(of: path).map { $0 == 0x7B || $0 == 0x5B } ?? false
    }

    /// The first byte of the file that is not whitespace or a byte-order mark, within its first 64 bytes.
    static func firstByte(of path: String) -> UInt8? {
        firstBytes(of: path, count: 1).first
    }

    /// The first `count` bytes of the file that are not whitespace or a byte-order mark, within its first 64 bytes.
    static func firstBytes(of path: String, count: Int) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 64)) ?? Data()
        return Array(head.lazy.filter { ![0x20, 0x0A, 0x0D, 0x09, 0xEF, 0xBB, 0xBF].contains($0) }.prefix(count))
    }

    /// Whether a listing file (`channels.json`, `users.json`, …) reads as an export's: an array of objects (or an
    /// unreadable one, which the export reader reports), not an object or an array of ids.
    static func isExportListing(_ path: String) -> Bool {
        let head = firstBytes(of: path, count: 2)
        guard head.first == UInt8(ascii: "[") else { return head.first != UInt8(ascii: "{") }
        return head.count < 2 || head[1] != UInt8(ascii: "\"")
    }

    /// JSON files directly in `folder` or in its `history/` and `delta/` folders, history first, each sorted, and
    /// the folders that exist but cannot be read (a missing `history/` or `delta/` is normal).
    static func pageFiles(in folder: String) -> (files: [String], unreadable: [ImportSummary.SkippedFile]) {
        var files: [String] = []
        var unreadable: [ImportSummary.SkippedFile] = []
        for sub in ["", "/history", "/delta"] {
            let dir = folder + sub
            switch ExportFiles.names(in: dir) {
            case .success(let listing):
                files += listing.names.filter { $0.hasSuffix(".json") && $0 != "manifest.json" }.sorted()
                    .map { dir + "/" + $0 }
                unreadable += listing.skipped(in: dir)
            case .failure(let failure):
                if sub.isEmpty || FileManager.default.fileExists(atPath: dir) {
                    unreadable.append(.init(path: dir, reason: "the folder cannot be read: \(failure.reason)"))
                }
            }
        }
        return (files, unreadable)
    }

    /// The page sets under `path` (one per conversation a folder or file name or the manifest gives); for a folder
    /// without a manifest also its other JSON files (users, conversations, id maps, and pages that name their
    /// conversation in their messages) and what in it could not be read.
    static func pageSetsAndListings(at path: String, conversation: String?) throws -> (
        sets: [PageSet], others: [String], unreadable: [ImportSummary.SkippedFile], ignored: [String]
    ) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue,
            !FileManager.default.fileExists(atPath: path + "/manifest.json")
        {
            let tree = PageTree(root: path)
            let sets: [PageSet] =
                if let conversation {
                    [PageSet(owner: .reference(conversation), files: tree.conversations.flatMap(\.files))]
                } else {
                    tree.conversations.map { PageSet(owner: .reference($0.id), files: $0.files) }
                }
            return (sets, tree.others, tree.unreadable, tree.ignored)
        }
        return (try pageSets(at: path, conversation: conversation), [], [], [])
    }

    static func pageSets(at path: String, conversation: String?) throws -> [PageSet] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ImportError.missing(path: path)
        }
        let url = URL(fileURLWithPath: path)
        if !isDirectory.boolValue {
            var folder = url.deletingLastPathComponent()
            if ["history", "delta"].contains(folder.lastPathComponent) { folder = folder.deletingLastPathComponent() }
            return [PageSet(owner: .reference(conversation ?? folder.lastPathComponent), files: [path])]
        }
        let manifestPath = path + "/manifest.json"
        if let data = FileManager.default.contents(atPath: manifestPath) {
            guard let manifest = try? JSONDecoder().decode(PageManifest.self, from: data) else {
                throw ImportError.malformedJSON(path: manifestPath, reason: "expected {\"conversations\": [...]}")
            }
            return manifest.conversations.map { entry in
                let kind: ConversationKind =
                    switch entry.kind {
                    case "group", "private": .private
                    case "dm", "im": .dm
                    case "mpim": .mpim
                    default: .channel
                    }
                let owner: PageOwner =
                    conversation.map { .reference($0) }
                    ?? .described(id: entry.id, name: entry.name ?? entry.id, kind: kind)
                let listed = pageFiles(in: path + "/" + (entry.folder ?? entry.name ?? entry.id))
                return PageSet(owner: owner, files: listed.files, unreadable: listed.unreadable)
            }
        }
        let listed = pageFiles(in: path)
        return [
            PageSet(
                owner: .reference(conversation ?? url.lastPathComponent), files: listed.files,
                unreadable: listed.unreadable)
        ]
    }

    /// Imports sync pages (see the type's overview) and the users, conversations and id maps dumped beside them.
    ///
    /// A page's conversation is, in order: `conversation` (every message goes there), the messages' own `channel`
    /// field, the folder or file name that is a conversation id (or the folder's name), the manifest.
    ///
    /// - Throws: `ImportError` when the path is unusable; `StoreError.conversationNotFound` when `conversation`
    ///   names by name a conversation the archive does not have (a conversation id the archive lacks is created).
    public func importPages(at path: String, conversation: String? = nil) throws -> ImportSummary {
        let started = Date()
        var summary = ImportSummary()
        summary.sources = [path]
        try recordingWriteFailure(in: &summary) { summary in
            try writePages(at: path, conversation: conversation, summary: &summary)
        }
        summary.seconds = Date().timeIntervalSince(started)
        return summary
    }

    private func writePages(at path: String, conversation: String?, summary: inout ImportSummary) throws {
        let (sets, others, unreadable, ignored) = try Importer.pageSetsAndListings(at: path, conversation: conversation)
        summary.skippedFiles += unreadable
        summary.ignoredFiles += ignored
        try writingPages(summary: &summary) { targets, summary in
            try writePageFiles(
                sets, others: others, at: path, conversation: conversation, targets: &targets, summary: &summary)
        }
    }

    /// The listings and page files of a dump, through `targets`' writer.
    private func writePageFiles(
        _ sets: [PageSet], others: [String], at path: String, conversation: String?, targets: inout PageTargets,
        summary: inout ImportSummary
    ) throws {
        if let conversation {
            targets.forced = try conversationOrNew(named: conversation, via: targets.pipeline, summary: &summary)
        }
        let unowned = try importListings(others, into: targets.pipeline, summary: &summary)
        var preparer = MessagePreparer(names: try archive.nameDirectory())
        let fallback = URL(fileURLWithPath: path).lastPathComponent
        let all = sets + (unowned.isEmpty ? [] : [PageSet(owner: .reference(conversation ?? fallback), files: unowned)])
        var owners: [String] = []
        for set in all {
            summary.skippedFiles += set.unreadable
            switch set.owner {
            case .reference(let name): owners.append(name)
            case .described(let id, let name, let kind):
                let workspace = Importer.workspace(ofPages: set.files)
                if try targets.pipeline.addConversationIfMissing(
                    ConversationInput(slackID: id, kind: kind, name: name), workspace: workspace)
                {
                    summary.conversationsAdded += 1
                }
                owners.append(id)
            }
        }
        for (set, index) in Importer.timeOrder(all) {
            if stop?.isRequested == true {
                summary.interrupted = true
                break
            }
            let file = all[set].files[index]
            do {
                try importDumpFile(
                    file, named: file == path, owner: owners[set], targets: &targets, preparer: &preparer,
                    summary: &summary)
            } catch let error as ImportError {
                summary.skippedFiles.append(.init(path: file, reason: error.description))
            }
        }
    }

    /// The workspace of a conversation described only by a manifest: its first page's messages' most common
    /// `team` (the team of who posted; a Slack Connect guest's differs). A manifest names no team; without this,
    /// two workspaces' pages imported from files were not told apart (issue 55). Nil when no message says.
    ///
    /// - Complexity: reads the first 1 MiB of the first file.
    static func workspace(ofPages files: [String]) -> WorkspaceInput? {
        guard let first = files.first, let handle = FileHandle(forReadingAtPath: first) else { return nil }
        defer { try? handle.close() }
        let head = String(decoding: (try? handle.read(upToCount: 1 << 20)) ?? Data(), as: UTF8.self)
        guard let pattern = try? Regex(#""team"\s*:\s*"(T[A-Z0-9]{2,20})""#) else { return nil }
        let teams = head.matches(of: pattern).compactMap { $0.output[1].substring.map(String.init) }
        return Importer.mostCommon(teams).map { WorkspaceInput(teamID: $0, domain: nil) }
    }

    /// The conversation `name` names. A conversation id the archive does not know yet (pages dumped from the API
    /// into an empty archive) is created: its kind from the id's prefix (C channel, G private, D DM), named by
    /// its id until an export, a listing or a sync names it (they update it in place, by id).
    func conversationOrNew(
        named name: String, via writer: ImportPipeline, summary: inout ImportSummary
    ) throws -> Conversation {
        do {
            return try archive.conversation(named: name)
        } catch StoreError.conversationNotFound(let missing, let closest) {
            guard let kind = Importer.kind(ofConversationID: name) else {
                throw StoreError.conversationNotFound(missing, closest: closest)
            }
            if try writer.addConversationIfMissing(
                ConversationInput(slackID: name, kind: kind, name: name), workspace: nil)
            {
                summary.conversationsAdded += 1
                summary.notes.append(
                    "\(name) was not in the archive: added as a \(kind.rawValue) named by its id until an export, "
                        + "a listing or a sync names it.")
            }
            return try archive.conversation(named: name)
        }
    }

    /// The kind a Slack conversation id implies (`C…` channel, `G…` private channel or old group DM, `D…` DM);
    /// nil when `id` does not look like one (9 to 20 capital letters and digits).
    static func kind(ofConversationID id: String) -> ConversationKind? {
        guard (9...20).contains(id.count), id.allSatisfy({ $0.isASCII && ($0.isUppercase || $0.isNumber) }) else {
            return nil
        }
        switch id.first {
        case "C": return .channel
        case "G": return .private
        case "D": return .dm
        default: return nil
        }
    }

    /// Whether `data` may be an API page: a page by its keys (`JSONLines.shape`), or a truncated or broken file,
    /// so that importing it reports the damage.
    static func isPage(_ data: Data) -> Bool {
        isPage(data.withUnsafeBytes { JSONSlicer($0) })
    }

    /// Whether the sliced `page` may be an API page (see above).
    static func isPage(_ page: JSONSlicer) -> Bool {
        !page.isComplete || JSONLines.shape(of: page) == .page
    }

    /// What a page held besides messages: where it continues, and the threads it names.
    struct PageOutcome {
        /// `response_metadata.next_cursor`, nil when empty or absent.
        var cursor: String?
        /// The newest and oldest ts of the page's messages (top-level and replies alike).
        var newestTS: String?
        var oldestTS: String?
        /// Messages on the page (including edits and deletions).
        var messages = 0
        /// Thread parents with replies: their ts and `latest_reply` when given.
        var threads: [SyncThreadMark] = []
    }

    /// Applies one page (a `conversations.history` / `.replies` answer, an event page, or a bare array) through
    /// `destination`, with the sync progress `sync` derives from the page written with it (in the same transaction).
    ///
    /// - Parameter recordSpan: record the page's span for gap reports (history pages; not replies).
    /// - Throws: `ImportError.malformedJSON` naming `source` when the bytes are not a page.
    func applyPage(
        _ bytes: [UInt8], source: String, into conversation: Conversation, preparer: inout MessagePreparer,
        summary: inout ImportSummary, recordSpan: Bool = true, extraFlags: MessageFlags = [],
        writingTo destination: any PageDestination, sync: ((PageOutcome) -> SyncProgress)? = nil
    ) throws -> PageOutcome {
        let (page, elements, cursor) = try Importer.envelope(of: bytes, source: source)
        return try applyRecords(
            Importer.records(of: page, at: elements), at: elements, of: page, cursor: cursor, into: conversation,
            preparer: &preparer, summary: &summary, recordSpan: recordSpan, extraFlags: extraFlags, sync: sync,
            writingTo: destination)
    }

    /// The messages at `elements` of `page`, decoded (nil for what is not a message).
    static func records(of page: JSONSlicer, at elements: [Range<Int>]) -> [MessageRecord?] {
        page.bytes.withUnsafeBufferPointer { buffer in
            elements.map { try? MessageRecord(json: UnsafeBufferPointer(rebasing: buffer[$0])) }
        }
    }

    /// Applies a page's decoded `records` (at `elements` of `page`) to `conversation` (see `applyPage`).
    ///
    /// One pass over the records sorts each into messages, deletions, reactions and thread marks (over 60 lines:
    /// splitting the loop would hand five accumulators around).
    func applyRecords(
        _ records: [MessageRecord?], at elements: [Range<Int>], of page: JSONSlicer, cursor: String?,
        into conversation: Conversation, preparer: inout MessagePreparer, summary: inout ImportSummary,
        recordSpan: Bool, extraFlags: MessageFlags = [], sync: ((PageOutcome) -> SyncProgress)? = nil,
        writingTo destination: any PageDestination
    ) throws -> PageOutcome {
        var outcome = PageOutcome()
        outcome.cursor = cursor
        var write = PageWrite(conversationRowID: conversation.rowID)
        outcome.messages = records.count
        for (index, element) in records.enumerated() {
            guard let record = element else {
                summary.skipMessage(MessagePreparer.Rejection.notAMessage.rawValue)
                continue
            }
            if record.isTextRepaired { summary.messagesRepaired += 1 }
            if record.type == "reaction_added" || record.type == "reaction_removed" {
                if let event = ReactionEvent(json: page.bytes[elements[index]]) {
                    write.reactions.append(event)
                } else {
                    summary.skipMessage("reaction event without reaction, user or item ts")
                }
                continue
            }
            if record.subtype == "message_deleted" {
                if let key = record.deletedTS.flatMap(SlackTimestamp.parseKey) { write.deletions.append(key) }
                continue
            }
            let range = JSONSlicer.storedObject(of: record, at: elements[index])
            if let ts = record.ts, record.threadTS == ts, (record.replyCount ?? 0) > 0 {
                let latest = JSONSlicer.valueRange(ofKey: "latest_reply", in: page.bytes, object: range).map {
                    String(decoding: page.bytes[$0], as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                }
                outcome.threads.append(SyncThreadMark(ts: ts, latestReply: latest))
            }
            let raw = JSONSlicer.storedText(of: record, at: elements[index], in: page.bytes)
            switch preparer.prepare(record, raw: raw, conversationRowID: conversation.rowID) {
            case .success(var message):
                message.flags |= extraFlags.rawValue
                write.messages.append(message)
            case .failure(let rejection): summary.skipMessage(rejection.rawValue)
            }
        }
        write.placeholders = preparer.takePlaceholders()
        archive.prepareForWrite(&write)
        // The page's span, for gap reports.
        let newestMessage = write.messages.max { $0.tsKey < $1.tsKey }
        let oldestMessage = write.messages.min { $0.tsKey < $1.tsKey }
        outcome.newestTS = newestMessage?.ts
        outcome.oldestTS = oldestMessage?.ts
        if recordSpan, !page.isArray, let newest = newestMessage.flatMap({ SlackTimestamp($0.ts) }),
            let oldest = oldestMessage?.tsKey
        {
            write.span = PageWrite.Span(
                newest: newest, oldestKey: oldest, nextKey: cursor.flatMap(Importer.cursorKey), cursor: cursor)
        }
        write.sync = sync?(outcome)
        try destination.add(write, summary: &summary)
        return outcome
    }

    /// A page's messages (their byte ranges) and `response_metadata.next_cursor`, out of an API response (or a bare
    /// array of messages).
    ///
    /// - Throws: `ImportError.malformedJSON` naming `source` for broken JSON, an API error page, or an object
    ///   without `messages`.
    static func envelope(
        of bytes: [UInt8], source: String
    ) throws -> (page: JSONSlicer, elements: [Range<Int>], cursor: String?) {
        let found = try envelope(of: bytes.withUnsafeBytes { JSONSlicer($0) }, source: source)
        return (found.page, found.elements, found.cursor)
    }

    /// A sliced page's messages, `next_cursor` and `channel_id` (slackdump's dump format), its members found in
    /// one pass.
    static func envelope(of page: JSONSlicer, source: String) throws -> Envelope {
        guard page.isComplete else {
            throw ImportError.malformedJSON(path: source, reason: "the file is truncated or not JSON")
        }
        guard !page.isArray else { return Envelope(page: page, elements: page.elements) }
        let members = JSONSlicer.members(of: 0..<page.bytes.count, in: page.bytes)
        if JSONSlicer.value("ok", in: members).map({ page.bytes[$0] }) == Array("false".utf8)[...] {
            let error = JSONSlicer.value("error", in: members)
                .map { String(decoding: page.bytes[$0], as: UTF8.self) } ?? "unknown"
            throw ImportError.malformedJSON(path: source, reason: "the API answered an error page (\(error))")
        }
        guard let list = JSONSlicer.value("messages", in: members) else {
            throw ImportError.malformedJSON(
                path: source, reason: "not a sync page: expected a JSON array of messages or {\"messages\": [...]}")
        }
        var envelope = Envelope(page: page, elements: JSONSlicer.elements(ofArray: list, in: page.bytes) ?? [])
        if let metadata = JSONSlicer.value("response_metadata", in: members),
            let cursorRange = JSONSlicer.valueRange(ofKey: "next_cursor", in: page.bytes, object: metadata)
        {
            let quoted = String(decoding: page.bytes[cursorRange], as: UTF8.self)
            let text = quoted.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            envelope.cursor = text.isEmpty || text == "null" ? nil : text
        }
        if let range = JSONSlicer.value("channel_id", in: members),
            let id = try? JSONDecoder().decode(String.self, from: Data(page.bytes[range])), !id.isEmpty
        {
            envelope.channelID = id
        }
        return envelope
    }

    /// What `envelope(of:source:)` found in a page.
    struct Envelope {
        var page: JSONSlicer
        /// The messages' ranges in `page.bytes`.
        var elements: [Range<Int>]
        /// `response_metadata.next_cursor`, nil when empty or absent.
        var cursor: String?
        /// slackdump's dump format names the conversation of its messages.
        var channelID: String?
    }
}

extension Importer {
    /// The ts key a Slack history cursor points to (`base64("next_ts:1712345678000100")`), when it has that form.
    static func cursorKey(_ cursor: String) -> Int64? {
        var base64 = cursor
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        guard text.hasPrefix("next_ts:") else { return nil }
        let digits = text.dropFirst("next_ts:".count)
        guard digits.count > 6, digits.allSatisfy(\.isNumber) else { return nil }
        return SlackTimestamp.parseKey(String(digits.dropLast(6)) + "." + String(digits.suffix(6)))
    }
}

extension ReactionEvent {
    /// A `reaction_added` / `reaction_removed` event: `{"type", "user", "reaction", "item": {"ts"}}`.
    init?(json bytes: ArraySlice<UInt8>) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
            let type = object["type"] as? String, let user = object["user"] as? String,
            let name = object["reaction"] as? String, let item = object["item"] as? [String: Any],
            let ts = item["ts"] as? String, let key = SlackTimestamp.parseKey(ts)
        else { return nil }
        self.init(added: type == "reaction_added", userID: user, name: name, tsKey: key)
    }
}

/// The generator's (and our) page folder manifest.
private struct PageManifest: Decodable {
    struct Entry: Decodable {
        var id: String
        var name: String?
        var kind: String?
        var folder: String?
    }
    var conversations: [Entry]
}

/// A tree of API responses as dumping tools and scripts write them: any folder named by a conversation id
/// (`C0VFAZVVNIR/`, `messages/C0VFAZVVNIR/`, `threads/C0VFAZVVNIR/`), at any depth up to `maxDepth`, holds that
/// conversation's pages (history pages and reply files alike, in its subfolders too), and so does a file whose
/// name starts with one (`C0VFAZVVNIR.json`, `C0VFAZVVNIR-2.json`, `C0VFAZVVNIR_1700000300.000100.json`). The same
/// id under several parents is one conversation; its files are taken in path order.
struct PageTree {
    struct Pages {
        var id: String
        var files: [String]
    }

    /// Conversations in order of their first folder's path.
    private(set) var conversations: [Pages] = []
    /// Folders that could not be listed, links out of the tree, FIFOs and devices.
    private(set) var unreadable: [ImportSummary.SkippedFile] = []
    /// JSON files outside the conversations' folders (users, conversation listings, anything else).
    private(set) var others: [String] = []
    /// Files that are not JSON (a `readme.txt`): not read, reported (issue 55).
    private(set) var ignored: [String] = []
    static let maxDepth = 6

    init(root: String) {
        let resolvedRoot = ExportFiles.resolved(root) ?? root
        var byID: [String: Int] = [:]
        // The root may itself be a conversation's folder (`import dump/C0VFAZVVNIR`).
        let name = URL(fileURLWithPath: root).lastPathComponent
        let owner = Importer.kind(ofConversationID: name) != nil ? name : nil
        walk(root, depth: 0, owner: owner, root: resolvedRoot, byID: &byID)
    }

    /// The conversation id a file's name starts with, followed by `.`, `-` or `_`.
    static func conversationID(startingFileName name: String) -> String? {
        let id = name.prefix { $0.isASCII && ($0.isUppercase || $0.isNumber) }
        guard let next = name.dropFirst(id.count).first, ".-_".contains(next) else { return nil }
        return Importer.kind(ofConversationID: String(id)) != nil ? String(id) : nil
    }

    private mutating func walk(_ folder: String, depth: Int, owner: String?, root: String, byID: inout [String: Int]) {
        let names: [String]
        switch ExportFiles.names(in: folder) {
        case .success(let found):
            names = found.names.sorted()
            unreadable += found.skipped(in: folder)
        case .failure(let failure):
            unreadable.append(.init(path: folder, reason: "the folder cannot be read: \(failure.reason)"))
            return
        }
        for name in names where !name.hasPrefix(".") {
            let path = folder + "/" + name
            switch ExportFiles.kind(of: path, inside: root) {
            case .success(.folder):
                guard depth < Self.maxDepth else { continue }
                let id = owner ?? (Importer.kind(ofConversationID: name) != nil ? name : nil)
                walk(path, depth: depth + 1, owner: id, root: root, byID: &byID)
            case .success(.file):
                guard [".json", ".jsonl", ".ndjson"].contains(where: name.hasSuffix), name != "manifest.json" else {
                    if name != "manifest.json" { ignored.append(path) }
                    continue
                }
                guard let owner = owner ?? PageTree.conversationID(startingFileName: name) else {
                    others.append(path)  // users and conversations, read by `importListings`
                    continue
                }
                if let index = byID[owner] {
                    conversations[index].files.append(path)
                } else {
                    byID[owner] = conversations.count
                    conversations.append(Pages(id: owner, files: [path]))
                }
            case .success(.other(let what)):
                if owner != nil { unreadable.append(.init(path: path, reason: "it is \(what), not a file")) }
            case .failure(let failure):
                unreadable.append(.init(path: failure.path, reason: failure.reason))
            }
        }
    }
}
