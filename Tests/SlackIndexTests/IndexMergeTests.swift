import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// A large export import merges the full-text index into one segment after its last commit
/// (`SQLiteArchive.mergeSearchIndex`); what searches give back is the same either way.
@Suite struct IndexMergeTests {
    static func segments(_ archive: Archive) throws -> Int {
        try archive.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(DISTINCT segid) FROM message_fts_idx") ?? 0 }
    }

    /// sample-data imported in 100-message transactions, each flushing FTS5 segments, with the merge threshold
    /// under and over its 3,000 messages.
    static func imported(mergeIndexAfter: Int) throws -> Archive {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("archive.sqlite").path
        let archive = Archive(store: try SQLiteArchive(path: path, mergeIndexAfter: mergeIndexAfter))
        let summary = try Importer(archive: archive, commitMessages: 100).importExport(at: TestSupport.sampleFolder)
        #expect(summary.messagesAdded == 3_000)
        return archive
    }

    @Test func aLargeImportLeavesOneSegmentAndTheSameAnswers() throws {
        let merged = try Self.imported(mergeIndexAfter: 1_000)
        let unmerged = try Self.imported(mergeIndexAfter: 3_001)
        #expect(try Self.segments(merged) == 1)
        #expect(try Self.segments(unmerged) > 1)
        #expect(try ImportTests.dump(merged) == ImportTests.dump(unmerged))
        try IndexOracle.expectExact(merged)
        var options = SearchOptions()
        options.limit = 50
        for query in ["deploy", "data descriptor", "the -and", "valu*", "from:@ryan.novak the", "\"to staging\"", "is:thread api"] {
            let a = try SearchEngine(archive: merged).search(query, options: options).hits
            let b = try SearchEngine(archive: unmerged).search(query, options: options).hits
            #expect(a.map(\.message.rowID) == b.map(\.message.rowID), "\(query)")
            #expect(zip(a, b).allSatisfy { abs($0.score - $1.score) < 1e-9 * max(1, abs($0.score)) }, "\(query)")
        }
        // A second import of the same export adds nothing, so it does not merge again.
        let again = try Importer(archive: merged, commitMessages: 100).importExport(at: TestSupport.sampleFolder)
        #expect(again.messagesAdded == 0)
    }

    /// A stopped import (Ctrl-C) keeps what it committed and does not merge, so that the stop is prompt.
    @Test func aStoppedImportDoesNotMerge() throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("archive.sqlite").path
        let archive = Archive(store: try SQLiteArchive(path: path, mergeIndexAfter: 1))
        let stop = StopSignal()
        // Stopped once a few transactions have committed (each leaves a segment of the index).
        let summary = try Importer(archive: archive, batchSize: 200, commitMessages: 100, stop: stop)
            .importExport(at: TestSupport.sampleFolder) { progress in
                if progress.messagesDone >= 1_000 { stop.request() }
            }
        #expect(summary.interrupted)
        #expect(summary.messagesAdded >= 1_000 && summary.messagesAdded < 3_000)
        #expect(try Self.segments(archive) > 1)
    }
}
