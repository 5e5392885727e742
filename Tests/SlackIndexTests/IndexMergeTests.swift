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
    static func imported(
        mergeIndexAfter: Int, path: String = TestSupport.temporaryDirectory().appendingPathComponent("archive.sqlite").path
    ) throws -> Archive {
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

    /// Each query's first 50 hits: id, score and snippet.
    static func answers(_ archive: Archive, _ queries: [String]) throws -> [[String]] {
        var options = SearchOptions()
        options.limit = 50
        return try queries.map { query in
            try SearchEngine(archive: archive).search(query, options: options).hits.map {
                "\($0.message.rowID) \(String(format: "%.9g", $0.score)) \($0.snippet)"
            }
        }
    }

    /// The average size of the index's leaves (FTS5's `%_data` blocks of segment pages: ids from 2^37, not a
    /// doclist index's page).
    static func averageLeaf(_ archive: Archive) throws -> Double {
        try archive.pool.read { db in
            try Double.fetchOne(
                db, sql: "SELECT avg(length(block)) FROM message_fts_data WHERE id >= (1 << 37) AND (id >> 36) % 2 = 0")
                ?? 0
        }
    }

    static func leafSetting(_ archive: Archive) throws -> Int? {
        try archive.pool.read { db in try Int.fetchOne(db, sql: "SELECT v FROM message_fts_config WHERE k = 'pgsz'") }
    }

    /// The merged index is written in leaves of 1,000 bytes (`SQLiteArchive.optimizeIndex`), later writes in
    /// 16,000-byte ones; an archive merged before that (migration v19) is rewritten so on upgrade, answering alike.
    @Test func theMergedIndexHasSmallLeavesAndAnUpgradeRewritesOldOnes() throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("archive.sqlite").path
        let merged = try Self.imported(mergeIndexAfter: 1_000, path: path)
        #expect(try Self.leafSetting(merged) == SQLiteArchive.writeLeafSize)
        #expect(try Self.averageLeaf(merged) <= Double(SQLiteArchive.mergedLeafSize) * 1.2)
        let queries = ["deploy", "the -and", "valu*", "\"to staging\"", "api the", "in:#general the -deploy"]
        func answers(_ archive: Archive) throws -> [[String]] { try Self.answers(archive, queries) }
        let expected = try answers(merged)
        #expect(expected.allSatisfy { !$0.isEmpty })

        // As an archive merged before v19: one segment of 16,000-byte leaves.
        try merged.pool.write { db in
            try Migrations.rebuildIndex(db)
            try db.execute(sql: "INSERT INTO message_fts (message_fts) VALUES ('optimize')")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = ?", arguments: [Migrations.smallIndexLeaves])
        }
        #expect(try Self.segments(merged) == 1)
        #expect(try Self.averageLeaf(merged) > Double(SQLiteArchive.mergedLeafSize) * 4)
        // Read-only, it is read as it is (v19 only makes it faster), with the same answers.
        #expect(try answers(Archive(path: path, access: .readOnly)) == expected)
        let upgraded = try Archive(path: path)
        #expect(upgraded.store.upgradedOnOpen)
        #expect(try Self.segments(upgraded) == 1)
        #expect(try Self.averageLeaf(upgraded) <= Double(SQLiteArchive.mergedLeafSize) * 1.2)
        #expect(try Self.leafSetting(upgraded) == SQLiteArchive.writeLeafSize)
        #expect(try answers(upgraded) == expected)
        try IndexOracle.expectExact(upgraded)
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
