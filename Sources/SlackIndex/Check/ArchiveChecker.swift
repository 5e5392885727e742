import Foundation
import Synchronization

/// What `slackindex check` found: each kind of damage with how many, a few examples and how to repair it.
public struct CheckReport: Sendable, Encodable {
    /// How a kind of damage is repaired.
    public enum Repair: String, Sendable, Encodable {
        /// The archive holds what to rebuild it from: `slackindex check --repair`.
        case checkRepair = "check --repair"
        /// Only the source holds it: `check --repair` marks the messages, then the same import (or sync) again
        /// rewrites them.
        case reimport = "check --repair, then the same import again"
        /// The file itself is damaged: a backup, or SQLite's `.recover` into a new file.
        case restore = "restore from a backup"
    }

    /// One kind of damage.
    public struct Finding: Sendable, Encodable, Equatable {
        /// What part of the archive: `sqlite`, `blocks`, `messages`, `index`, `counts`, `replies`, `attachments`.
        public var area: String
        /// What is wrong, as a sentence.
        public var problem: String
        public var count: Int
        /// A few of the damaged items (message handles `conversation/ts`, block ids, conversation ids).
        public var examples: [String]
        public var repair: Repair
        /// False for what only costs space (blocks no message points into): reported, repaired, not damage.
        public var isDamage = true
    }

    /// No finding is damage.
    public var healthy: Bool { !findings.contains(where: \.isDamage) }
    /// Messages whose stored JSON was read back.
    public var messages = 0
    /// Packed blocks in the archive.
    public var blocks = 0
    /// Wall-clock time of the whole check.
    public var seconds = 0.0
    /// What was found, damage and notes, damage from SQLite's check and the index first.
    public var findings: [Finding] = []
    /// Messages whose stored JSON is damaged (`--repair` marks them for the next import).
    var damagedMessageIDs: [Int64] = []
    var unreferencedBlocks: [Int64] = []

    enum CodingKeys: String, CodingKey {
        case healthy, messages, blocks, seconds, findings
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(healthy, forKey: .healthy)
        try container.encode(messages, forKey: .messages)
        try container.encode(blocks, forKey: .blocks)
        try container.encode((seconds * 1000).rounded() / 1000, forKey: .seconds)
        try container.encode(findings, forKey: .findings)
    }
}

/// What `--repair` did.
public struct RepairOutcome: Sendable, Encodable {
    /// The search index was rebuilt from the messages.
    public var rebuiltIndex = false
    /// The messages of each word of the index were counted anew.
    public var recountedWords = false
    /// Conversations whose kept counts were recounted.
    public var recountedConversations = 0
    /// Thread parents' reply counts were raised to the replies held.
    public var refreshedReplyCounts = false
    /// Reactions and files without their message were deleted, and flags set where they were missing.
    public var repairedAttachments = false
    /// Packed blocks no message pointed into, deleted.
    public var deletedBlocks = 0
    /// Messages marked so that the same import rewrites their JSON.
    public var markedForReimport = 0
}

/// Verifies an archive end to end, read-only: SQLite's own check, every packed block, every message's stored JSON
/// against its row, the search index against the text, the kept counts against recounts, reply counts and
/// attachments. `repair` rebuilds what the archive itself holds.
public struct ArchiveChecker: Sendable {
    package let archive: any ArchiveStore
    /// Examples kept per kind of damage.
    public var examples = 5

    public init(archive: Archive) {
        self.archive = archive.store
    }

    /// Runs every check; `progress` hears each step's name as it starts.
    ///
    /// - Complexity: O(n) in the messages and index entries (15–18 s for the generated 1M archive on this 2-core
    ///   machine, release build).
    /// - Throws: what the store throws when the archive cannot be read at all.
    public func run(progress: (String) -> Void = { _ in }) throws -> CheckReport {
        let start = ContinuousClock.now
        var report = CheckReport()
        // SQLite's own check and the index's on a second thread, the stored messages and counts on this one: each
        // half is a pass over the file (on the 1M archive here, 8 s for integrity_check alone), and readers of a
        // WAL archive run side by side.
        let background = Mutex<Result<[CheckReport.Finding], any Error>?>(nil)
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { [self] in
            let result = Result { try sqliteAndIndexFindings() }
            background.withLock { $0 = result }
        }
        // Also when this thread's half throws: the other half reads the archive until it is done.
        defer { group.wait() }
        progress("stored messages")
        try checkMessages(into: &report)
        progress("counts")
        try checkCounts(into: &report)
        progress("SQLite integrity and search index")
        group.wait()
        let findings = try background.withLock { try $0?.get() } ?? []
        report.findings.insert(contentsOf: findings, at: 0)
        report.seconds = start.duration(to: .now).seconds
        return report
    }

    /// SQLite's integrity check, then the search index against the text.
    private func sqliteAndIndexFindings() throws -> [CheckReport.Finding] {
        var findings: [CheckReport.Finding] = []
        let sqlite = try archive.storageProblems(limit: examples)
        if !sqlite.isEmpty {
            findings.append(
                .init(
                    area: "sqlite", problem: "SQLite's integrity check reports damage in the file.",
                    count: sqlite.count, examples: sqlite, repair: .restore))
        }
        return findings + (try indexFindings()) + (try wordFindings())
    }

    /// The kept word counts (`message_word`) against the index's vocabulary.
    private func wordFindings() throws -> [CheckReport.Finding] {
        let words = try archive.wordCountMismatches(limit: examples)
        guard words.count > 0 else { return [] }
        return [
            .init(
                area: "words",
                problem: "Kept counts of the messages holding a word differ from the search index's: prefix searches "
                    + "(`deploy*`) choose and rank their words by them.",
                count: words.count, examples: words.examples, repair: .checkRepair)
        ]
    }

    /// Every message's JSON as `serve` gives it back: it must be one JSON object whose `ts`, author and text are
    /// the row's.
    private func checkMessages(into report: inout CheckReport) throws {
        var unreadable = Damage()
        var disagreeing = Damage()
        let blocks = try archive.walkStoredMessages { message in
            report.messages += 1
            let handle = "\(message.conversation)/\(message.ts)"
            switch message.json {
            case .failure(let damage):
                unreadable.add(message.id, "\(handle): \(damage.description)", keep: examples)
            case .success(let json):
                if let problem = Self.disagreement(json, with: message) {
                    disagreeing.add(message.id, "\(handle): \(problem)", keep: examples)
                }
            }
        }
        report.blocks = blocks.blocks
        if !blocks.damaged.isEmpty {
            report.findings.append(
                .init(
                    area: "blocks", problem: "Packed blocks of message JSON do not inflate.",
                    count: blocks.damaged.count, examples: blocks.damaged.prefix(examples).map { "block \($0)" },
                    repair: .reimport))
        }
        if unreadable.count > 0 {
            report.findings.append(
                .init(
                    area: "messages", problem: "Messages' stored JSON cannot be read back.",
                    count: unreadable.count, examples: unreadable.examples, repair: .reimport))
        }
        if disagreeing.count > 0 {
            report.findings.append(
                .init(
                    area: "messages",
                    problem: "Messages' stored JSON is not one JSON object with their own ts, author and text.",
                    count: disagreeing.count, examples: disagreeing.examples, repair: .reimport))
        }
        report.damagedMessageIDs = unreadable.ids + disagreeing.ids
        // Unreferenced blocks are only space, unless they do not inflate (counted above).
        report.unreferencedBlocks = blocks.unreferenced
        if !blocks.unreferenced.isEmpty {
            report.findings.append(
                .init(
                    area: "blocks", problem: "Packed blocks no message points into (space only).",
                    count: blocks.unreferenced.count,
                    examples: blocks.unreferenced.prefix(examples).map { "block \($0)" }, repair: .checkRepair,
                    isDamage: false))
        }
    }

    /// Why `json` is not the stored form of `message`, or nil when it is.
    ///
    /// A packed message's ts, author, text and thread come back from its row (`RawElision`), so a location that
    /// frames another message's JSON would agree on those: the subtype, the edit and the files' ids are compared
    /// too, as they are kept only in the JSON and beside the row.
    static func disagreement(_ json: String, with message: StoredMessage) -> String? {
        var json = json
        let parsed = json.withUTF8 { bytes in try? MessageRecord(json: bytes) }
        guard let outer = parsed else { return "it is not one JSON object" }
        // A `message_changed` record is stored as its new version; an outer one would be the whole event.
        let record = outer.subtype == "message_changed" ? (outer.changedMessage.first ?? outer) : outer
        if record.ts != message.ts { return "its JSON has ts \(record.ts ?? "none")" }
        if record.authorID != message.userID { return "its JSON names another author" }
        if record.text != message.text { return "its JSON has another text" }
        if record.subtype != message.subtype { return "its JSON has another subtype" }
        if record.editedTS != message.editedTS { return "its JSON has another edit" }
        let files = record.files.map { $0.id ?? "" }
        if files != (message.fileIDs ?? []) { return "its JSON has other files" }
        return nil
    }

    /// The index's entries against the text (a checksum over all of them, then document by document when it
    /// differs), and its documents' sizes, which ranking reads, against the messages: one finding naming both.
    private func indexFindings() throws -> [CheckReport.Finding] {
        let agreement = try archive.indexAgreement()
        var ids = Set(try archive.indexDocumentMismatches(limit: Self.namedAtMost))
        if !agreement.agrees { ids.formUnion(try archive.indexDisagreements(limit: Self.namedAtMost)) }
        guard !agreement.agrees || !ids.isEmpty else { return [] }
        let named = ids.sorted()
        return [
            .init(
                area: "index",
                problem: "The search index does not hold what the messages' text gives: searches miss or find the "
                    + "wrong messages" + (named.count >= Self.namedAtMost ? " (counted up to 1,000)." : "."),
                count: max(named.count, 1), examples: try archive.messageHandles(ids: Array(named.prefix(examples))),
                repair: .checkRepair)
        ]
    }

    /// Most damaged index documents found one by one (the rest are counted in the global checksum only).
    static let namedAtMost = 1_000

    private func checkCounts(into report: inout CheckReport) throws {
        let counts = try archive.countMismatches()
        if !counts.isEmpty {
            report.findings.append(
                .init(
                    area: "counts",
                    problem: "Kept counts (messages, deleted, threads, replies) differ from a recount: `stats` and "
                        + "`conversations` report them.",
                    count: counts.count,
                    examples: counts.prefix(examples).map {
                        "\($0.conversation): kept \($0.kept.map(String.init).joined(separator: "/")), recounted "
                            + $0.recounted.map(String.init).joined(separator: "/")
                    }, repair: .checkRepair))
        }
        let replies = try archive.replyCountShortfalls(limit: examples)
        if replies.count > 0 {
            report.findings.append(
                .init(
                    area: "replies", problem: "Thread parents count fewer replies than the archive holds.",
                    count: replies.count, examples: replies.examples, repair: .checkRepair))
        }
        for (problem, count) in try archive.attachmentProblems().sorted(by: { $0.key < $1.key }) {
            report.findings.append(
                .init(area: "attachments", problem: problem.prefix(1).uppercased() + problem.dropFirst() + ".",
                    count: count, examples: [], repair: .checkRepair))
        }
    }

    /// Rebuilds what the report found and the archive holds the data for; marks messages whose JSON only the
    /// source holds, so that the same import rewrites them. The archive must be open for writing.
    public func repair(_ report: CheckReport) throws -> RepairOutcome {
        var outcome = RepairOutcome()
        let areas = Set(report.findings.map(\.area))
        if areas.contains("index") {
            try archive.rebuildSearchIndex()
            outcome.rebuiltIndex = true
        }
        if areas.contains("words") && !areas.contains("index") {
            // A rebuilt index counts its words anew.
            try archive.recountWords()
            outcome.recountedWords = true
        }
        if let counts = report.findings.first(where: { $0.area == "counts" }) {
            try archive.recountMessageCounts()
            outcome.recountedConversations = counts.count
        }
        if areas.contains("replies") {
            try archive.refreshAllReplyCounts()
            outcome.refreshedReplyCounts = true
        }
        if areas.contains("attachments") || !report.unreferencedBlocks.isEmpty {
            try archive.repairAttachmentsAndBlocks(unreferencedBlocks: report.unreferencedBlocks)
            outcome.repairedAttachments = areas.contains("attachments")
            outcome.deletedBlocks = report.unreferencedBlocks.count
        }
        if !report.damagedMessageIDs.isEmpty {
            try archive.markForReimport(messageIDs: report.damagedMessageIDs)
            outcome.markedForReimport = report.damagedMessageIDs.count
        }
        return outcome
    }
}

/// Damaged items of one kind: all their ids, a few described.
private struct Damage {
    var ids: [Int64] = []
    var examples: [String] = []
    var count: Int { ids.count }

    mutating func add(_ id: Int64, _ description: String, keep: Int) {
        ids.append(id)
        if examples.count < keep { examples.append(description) }
    }
}
