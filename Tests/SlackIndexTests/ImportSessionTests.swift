import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// One import session for every source (issue 49): an export's batches, pages and the listings met on the way go
/// into one session type, and the pipeline in front of it counts what stays after a failed write.
@Suite struct ImportSessionTests {
    static func conversationRowID(_ slackID: String, in archive: Archive) throws -> Int64? {
        try archive.pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT id FROM conversation WHERE slack_id = ?", arguments: [slackID])
        }
    }

    /// A batch, then a conversation first met mid-import, then pages into it, in one session: the conversation is
    /// readable (committed) before the session ends, as a reader resolving names needs, and the pages' reply counts
    /// are raised when it ends.
    @Test func batchesListingsAndPagesShareOneSession() throws {
        let (archive, first) = try SplitBatchTests.archiveWithConversation()
        var seenMidSession: Int64?
        var counts: [WriteCounts] = []
        try archive.store.importSession(
            ImportPlan(export: ExportListingsResult(teamID: "T1"), commitMessages: 1_000)
        ) { session in
            counts.append(try session.write(SplitBatchTests.date(conversation: first)).counts)
            let input = ConversationInput(slackID: "C2", kind: .channel, name: "two")
            #expect(try session.addConversationIfMissing(input, workspace: nil))
            #expect(try !session.addConversationIfMissing(input, workspace: nil))
            seenMidSession = try Self.conversationRowID("C2", in: archive)
            let second = try #require(seenMidSession)
            let parentTS = "1900000100.000100"
            var parent = SplitBatchTests.message(100, key: 100, conversation: second)
            parent.threadTS = parentTS
            parent.threadKey = parent.tsKey
            var page = PageWrite(conversationRowID: second)
            page.messages = [parent] + (1...3).map { index in
                var reply = SplitBatchTests.message(100 + index, key: 100 + Int64(index), conversation: second)
                reply.threadTS = parentTS
                reply.threadKey = parent.tsKey
                reply.flags = 0
                return reply
            }
            counts.append(try session.write(pages: [page]))
            session.recountReplies(conversations: [second])
        }
        #expect(seenMidSession != nil, "the conversation was committed before the session ended")
        #expect(counts.map(\.added) == [27, 4])
        let replies = try archive.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT reply_count FROM message WHERE ts = '1900000100.000100'")
        }
        #expect(replies == 3, "the session raised the parent's reply count when it ended")
        try IndexOracle.expectExact(archive)
    }

    /// A full disk in the middle of a dump's pages: what the pipeline hands out plus what its failure counts is what
    /// the archive holds, whatever was handed out from the open transaction that rolled back.
    @Test func aFailedWriteCountsWhatStays() throws {
        let (archive, conversation) = try SplitBatchTests.archiveWithConversation()
        try archive.store.limitSizeForTesting(pages: try archive.store.pageCount() + 40)
        let pipeline = ImportPipeline(sink: archive.store, plan: ImportPlan(commitMessages: 600), capacity: 1)
        var summary = ImportSummary()
        var failure: (any Error)?
        for start in stride(from: 0, to: 20_000, by: 200) {
            var page = PageWrite(conversationRowID: conversation)
            page.messages = (start..<start + 200).map { SplitBatchTests.message($0, key: Int64($0), conversation: conversation) }
            archive.store.prepareForWrite(&page)
            do {
                summary.merge(try pipeline.takeWritten().summary)
            } catch {
                failure = error
                break
            }
            pipeline.send(pages: [page])
        }
        let written = pipeline.finish()
        summary.merge(written.summary)
        let stopped = try #require((failure ?? written.failure) as? BulkImportFailure)
        #expect(stopped.isDiskFull)
        // Reported once: when `takeWritten` threw it, `finish` counts nothing more.
        summary.add(stopped.committed)
        if failure != nil, let again = written.failure as? BulkImportFailure { summary.add(again.committed) }
        try archive.store.limitSizeForTesting(pages: nil)
        let stored = try archive.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM message") }
        #expect(stored ?? -1 > 0, "some writes were committed before the disk filled")
        #expect(summary.messagesAdded == stored, "counted \(summary.messagesAdded), stored \(stored ?? -1)")
    }
}
