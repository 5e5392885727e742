import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// A batch split into parts (`ImportBatch.split`), so that the messages waiting in an import are bounded by
/// messages rather than by a date's size: the parts must write exactly what the whole batch writes.
@Suite struct SplitBatchTests {
    static func message(_ index: Int, key: Int64, conversation: Int64 = 1) -> PreparedMessage {
        let ts = "\(1_900_000_000 + key).000100"
        let text = "part message \(index) word\(index % 7) héllo"
        let raw = #"{"type":"message","text":"\#(text)","user":"U\#(index % 3)","ts":"\#(ts)","n":\#(index)}"#
        return PreparedMessage(
            conversationRowID: conversation, ts: ts, tsKey: SlackTimestamp.parseKey(ts) ?? key,
            userID: "U\(index % 3)", username: nil, subtype: nil, threadTS: nil, threadKey: nil, replyCount: 0,
            editedTS: nil, editedKey: 0, flags: MessageFlags.topLevel.rawValue, text: text, searchText: text,
            searchExtra: "", raw: raw, hash: Int64(index) &* 7_919, reactions: [], files: [])
    }

    @Test(arguments: [
        (0, 3), (1, 1), (2, 1), (5, 2), (7, 3), (10, 3), (13, 4), (40, 40), (41, 40), (4_001, 2_000), (5_480, 2_000),
    ])
    func partsKeepTheOrderAndShareTheBlocks(count: Int, maxMessages: Int) {
        var batch = ImportBatch(
            messages: (0..<count).map { Self.message($0, key: Int64($0)) },
            deletions: [MessageDeletion(conversationRowID: 1, tsKey: 5)], placeholders: [User(id: "U9", handle: "U9")])
        batch.rawBlocks = [[1, 2, 3], [4]]
        let parts = batch.split(maxMessages: maxMessages)
        #expect(parts.count == max(1, (count + maxMessages - 1) / maxMessages))
        #expect(parts.flatMap { $0.messages.map(\.ts) } == (0..<count).map { Self.message($0, key: Int64($0)).ts })
        let sizes = parts.map(\.messages.count)
        #expect(sizes.allSatisfy { $0 <= maxMessages })
        if count > 0 {
            #expect(sizes.allSatisfy { $0 > 0 } && (sizes.max() ?? 0) - (sizes.min() ?? 0) <= 1, "\(sizes)")
        }
        #expect(parts.map(\.continues) == Array(repeating: true, count: parts.count - 1) + [false])
        #expect(parts.map(\.placeholders.count) == [1] + Array(repeating: 0, count: parts.count - 1))
        #expect(parts.map(\.deletions.count) == Array(repeating: 0, count: parts.count - 1) + [1])
        let shared = PackedBlocks(blocks: parts[0].rawBlocks)
        #expect(parts.allSatisfy { shared.holds($0.rawBlocks) && $0.rawBlocks == [[1, 2, 3], [4]] })
        #expect(!shared.holds([[1, 2, 3], [4]]), "another array with the same bytes is not the same blocks")
    }

    /// Three day files of one date whose messages interleave in time, each file packed into its own blocks, then
    /// sorted: after the split, a block's messages lie in several parts.
    static func date(conversation: Int64, files: Int = 3, perFile: Int = 9) -> ImportBatch {
        var batch = ImportBatch()
        for file in 0..<files {
            let start = batch.messages.count
            for index in 0..<perFile {
                let number = index * files + file
                batch.messages.append(message(number, key: Int64(number), conversation: conversation))
            }
            batch.packRaws(from: start)
        }
        ReaderJob.sortStable(&batch.messages, from: 0)
        return batch
    }

    static func archiveWithConversation() throws -> (Archive, Int64) {
        let archive = try TestSupport.makeArchive()
        let listings = try archive.store.storeExportListings(
            teamID: "T1", users: [],
            conversations: [ConversationInput(slackID: "C1", kind: .channel, name: "one", folder: "one")])
        return (archive, try #require(listings.rowIDsByFolder["one"]))
    }

    static func write(
        _ batches: [ImportBatch], into archive: Archive, commitMessages: Int = 3
    ) throws -> [WriteCounts] {
        var counts: [WriteCounts] = []
        try archive.store.importSession(
            ImportPlan(export: ExportListingsResult(teamID: "T1"), commitMessages: commitMessages)
        ) { session in
            for batch in batches { counts.append(try session.write(batch).counts) }
        }
        return counts
    }

    /// `message_count` as stored, and as counted from the messages.
    static func counts(_ archive: Archive) throws -> (stored: [Row], counted: [Row]) {
        try archive.pool.read { db in
            (
                try Row.fetchAll(
                    db, sql: "SELECT conversation_id, messages FROM message_count WHERE messages != 0 ORDER BY 1"),
                try Row.fetchAll(
                    db,
                    sql: """
                        SELECT conversation_id, count(*) AS messages FROM message WHERE is_deleted = 0
                        GROUP BY 1 ORDER BY 1
                        """)
            )
        }
    }

    static func blocks(_ archive: Archive) throws -> [Row] {
        try archive.pool.read { db in try Row.fetchAll(db, sql: "SELECT id, data FROM raw_block ORDER BY id") }
    }

    @Test func partsWriteWhatTheWholeBatchWritesInOneTransaction() throws {
        let (whole, wholeConversation) = try Self.archiveWithConversation()
        let wholeCommits = CommitCounter()
        whole.pool.writeWithoutTransaction { db in db.add(transactionObserver: wholeCommits) }
        _ = try Self.write([Self.date(conversation: wholeConversation)], into: whole)

        let (split, conversation) = try Self.archiveWithConversation()
        let commits = CommitCounter()
        split.pool.writeWithoutTransaction { db in db.add(transactionObserver: commits) }
        let parts = Self.date(conversation: conversation).split(maxMessages: 4)
        #expect(parts.count == 7)
        // Each block's messages are spread over several parts.
        let partsOfBlock = Dictionary(grouping: parts.indices.flatMap { part in
            parts[part].messages.compactMap { $0.rawLocation.map { ($0.block, part) } }
        }, by: \.0).mapValues { Set($0.map(\.1)).count }
        #expect(partsOfBlock.count == 3 && partsOfBlock.values.allSatisfy { $0 > 1 })
        let counts = try Self.write(parts, into: split)
        #expect(counts.map(\.added).reduce(0, +) == 27)
        // Committed once, after the last part, though every part holds more than `commitMessages`.
        #expect(commits.count == wholeCommits.count)
        // Each block stored once, the same rows as the whole batch's, and every message's JSON reads back.
        #expect(try Self.blocks(split).count == 3)
        #expect(try Self.blocks(split) == Self.blocks(whole))
        #expect(try ImportTests.dump(split) == ImportTests.dump(whole))
        try IndexOracle.expectExact(split)
        let tallies = try Self.counts(split)
        #expect(tallies.stored == tallies.counted && tallies.stored.count == 1)
        #expect(try Self.counts(whole).stored == tallies.stored)

        // Written again: nothing changes and no block is added.
        let again = try Self.write(Self.date(conversation: conversation).split(maxMessages: 4), into: split)
        #expect(again.map(\.unchanged).reduce(0, +) == 27 && again.map(\.added).reduce(0, +) == 0)
        #expect(try Self.blocks(split) == Self.blocks(whole))
    }

    /// An import that ends after a part with more to come (the importer never does) commits what it wrote, its
    /// conversation counts included.
    @Test func partsWithoutTheirLastPartAreCommittedWithTheirCounts() throws {
        let (archive, conversation) = try Self.archiveWithConversation()
        let parts = Self.date(conversation: conversation).split(maxMessages: 4)
        let sent = parts[0].messages.count + parts[1].messages.count + parts[2].messages.count
        let written = try Self.write(Array(parts.prefix(3)), into: archive)
        let added = written.map(\.added).reduce(0, +)
        #expect(added == sent)
        let counts = try Self.counts(archive)
        #expect(counts.stored == counts.counted && counts.stored.count == 1)
        // The blocks its messages point into are stored: every message reads back.
        let ids = try archive.pool.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM message") }
        let raws = try archive.store.rawMessages(ids: ids)
        #expect(ids.count == sent && sent > 4)
        #expect(ids.allSatisfy { raws[$0]?.json.contains("part message") == true })
        try IndexOracle.expectExact(archive)
    }

    /// A part whose blocks are not its earlier part's would point its messages at other JSON: refused, and the
    /// open transaction rolls back.
    @Test func aPartAfterAnotherBatchsPartIsRefused() throws {
        let (archive, conversation) = try Self.archiveWithConversation()
        let before = try ImportTests.dump(archive)
        let first = Self.date(conversation: conversation).split(maxMessages: 4)
        // As many blocks as the first batch: only the storage tells them apart.
        let other = Self.date(conversation: conversation).split(maxMessages: 4)
        #expect(throws: BulkImportFailure.self) {
            _ = try Self.write([first[0], other[1]], into: archive, commitMessages: 1)
        }
        #expect(try ImportTests.dump(archive) == before)
        #expect(try Self.blocks(archive).isEmpty)
    }
}
