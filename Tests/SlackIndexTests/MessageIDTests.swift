import CSlackTokenizer
import Foundation
import GRDB
import Testing

@testable import SlackIndex
@testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// Message ids (`MessageID`): a ts's second × 1,024 plus its millisecond, time-ordered and unique whatever collides,
/// and the migration that renumbers archives written with microsecond ids (v13).
@Suite struct MessageIDTests {
    static var newestFirst: SearchOptions {
        var options = SearchOptions()
        options.sort = .newest
        return options
    }

    @Test func preferredIDsKeepTimeOrderAndWholeSecondBounds() throws {
        var rng = SeededGenerator(seed: 13)
        // Up to 11 integer digits of seconds (`SlackTimestamp.parseKey`), and the edges.
        var keys = (0..<5_000).map { _ in Int64.random(in: 0..<100_000_000_000_000_000, using: &rng) }
        keys += [0, 999, 1_000, 999_999, 1_000_000, 1_433_500_000_999_999, 99_999_999_999_999_999]
        keys.sort()
        for (earlier, later) in zip(keys, keys.dropFirst()) {
            #expect(MessageID(preferredFor: earlier) <= MessageID(preferredFor: later))
        }
        for key in keys {
            let id = MessageID(preferredFor: key)
            let second = MessageID.second(of: key)
            #expect(second.contains(id.rawValue) && second.count == 1_024)
            #expect(id.tsKey <= key && key - id.tsKey < 1_000, "the id's time is its slot's start, under a ms away")
            #expect(id.rawValue < 1 << 47)
            let whole = key / 1_000_000 * 1_000_000
            #expect(MessageID.lowerBound(atOrAfter: whole) == second.lowerBound)
            #expect(MessageID.upperBound(before: whole + 1_000_000) == second.upperBound + 1)
        }
        #expect(MessageID.lowerBound(atOrAfter: nil) == .min && MessageID.upperBound(before: nil) == .max)
        // The migration's SQL computes the same ids.
        try DatabaseQueue().read { db in
            for key in keys {
                let sql = try Int64.fetchOne(db, sql: "SELECT \(MessageID.preferredSQL("?1"))", arguments: [key])
                #expect(sql == MessageID(preferredFor: key).rawValue)
            }
        }
    }

    /// One day file: `count` messages of `general` a microsecond apart from `second`, and the first `shared` of them
    /// again in `random` at the same ts.
    static func crowdedExport(second: Int64, count: Int, shared: Int) throws -> URL {
        func day(_ range: Range<Int>, word: String) -> String {
            let messages = range.map { index in
                let ts = "\(second)." + String(format: "%06d", index)
                return #"{"type": "message", "user": "U1", "text": "\#(word) \#(index)", "ts": "\#(ts)"}"#
            }
            return "[" + messages.joined(separator: ",\n") + "]"
        }
        return try TestSupport.minimalExport(
            days: ["2015-06-05": day(0..<count, word: "tick")],
            extra: [
                "channels.json": #"""
                    [{"id": "C1", "name": "general", "created": "1433558319", "members": ["U1"]},
                     {"id": "C2", "name": "random", "created": "1433558319", "members": ["U1"]}]
                    """#,
                "random/2015-06-05.json": day(0..<shared, word: "tock"),
            ])
    }

    /// 1,100 messages in one second, most in its first millisecond, 40 of them at the same ts in two conversations:
    /// every one is stored under its own id, the second's 1,024 ids first in time order, the rest right after it;
    /// importing again finds each one (its preferred id being another's) and adds nothing.
    @Test func messagesCrowdingOneSecondEachGetAnIDInTimeOrder() throws {
        let second: Int64 = 1_433_500_000
        let export = try Self.crowdedExport(second: second, count: 1_100, shared: 40)
        let archive = try TestSupport.makeArchive()
        let summary = try Importer(archive: archive).importExport(at: export.path)
        #expect(summary.messagesAdded == 1_140 && summary.messagesSkipped == 0)
        let rows = try archive.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, ts_key, conversation_id FROM message ORDER BY id")
        }
        let ids: [Int64] = rows.map { $0["id"] }
        #expect(Set(ids).count == 1_140)
        let range = MessageID.second(of: second * 1_000_000)
        #expect(ids.filter { range.contains($0) }.count == 1_024, "the second's ids are all used")
        #expect(ids.allSatisfy { $0 >= range.lowerBound }, "no message takes an earlier second's id")
        let keys: [Int64] = rows.map { $0["ts_key"] }
        #expect(keys == keys.sorted(), "ids follow the ts, written in time order")
        let again = try Importer(archive: archive).importExport(at: export.path)
        #expect(again.messagesAdded == 0 && again.messagesUnchanged == 1_140)
        let newest = try SearchEngine(archive: archive).search("tock", options: Self.newestFirst)
        #expect(newest.hits.map(\.message.text) == (20..<40).reversed().map { "tock \($0)" })
    }

    /// Messages in the last millisecond of a day's last second share one preferred id: they take the second's free
    /// ids below it rather than the next second's, so a date bound still counts them in their own day.
    @Test func messagesAtASecondsEndStayInThatSecond() throws {
        let archive = try TestSupport.makeArchive()
        #expect(try Importer(archive: archive).importExport(at: Self.lateExport().path).messagesAdded == 10)
        try Self.expectLateMessagesInTheirSecond(archive)
    }

    /// 2015-06-05 23:59:59 UTC.
    static let lastSecond: Int64 = 1_433_548_799

    /// Ten messages in the last millisecond of 2015-06-05 (UTC).
    static func lateExport() throws -> URL {
        let messages = (0..<10).map { index in
            #"{"type": "message", "user": "U1", "text": "late \#(index)", "ts": "\#(lastSecond).999\#(900 + index)"}"#
        }
        return try TestSupport.minimalExport(days: ["2015-06-05": "[" + messages.joined(separator: ",") + "]"])
    }

    static func expectLateMessagesInTheirSecond(_ archive: Archive) throws {
        let ids = try archive.pool.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM message") }
        #expect(Set(ids).count == 10 && ids.allSatisfy { MessageID.second(of: lastSecond * 1_000_000).contains($0) })
        var options = Self.newestFirst
        options.timeZone = TimeZone(identifier: "UTC") ?? .current
        let engine = SearchEngine(archive: archive)
        #expect(try engine.search("late on:2015-06-05", options: options).hits.count == 10)
        #expect(try engine.search("late on:2015-06-06", options: options).hits.isEmpty)
    }

    /// Back to the ids an archive had before migration v13: `ts_key × 64` plus a tie-breaker, reactions and files
    /// following, the index rebuilt on them, v13 not applied.
    ///
    /// Opened without `Archive`, which would migrate; `searchTextElided` as `Migrations.rebuildIndex` takes it (false
    /// for an archive downgraded to v11 first).
    static func downgradeToV12(_ path: String, searchTextElided: Bool = true) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            let code = slackindex_register_tokenizer(db.sqliteConnection)
            guard code == 0 else { throw StoreError.needsUpgrade(path: path) }
        }
        try DatabaseQueue(path: path, configuration: configuration).write { db in
            try TestSupport.undoSearchScope(db)
            try db.execute(
                sql: """
                    CREATE TEMP TABLE id_map (new_id INTEGER PRIMARY KEY, old_id INTEGER NOT NULL);
                    INSERT INTO id_map
                        SELECT id, ts_key * 64 + row_number() OVER (PARTITION BY ts_key ORDER BY id) - 1
                        FROM message;
                    UPDATE message SET id = (SELECT old_id FROM id_map WHERE new_id = message.id);
                    UPDATE reaction SET message_id = (SELECT old_id FROM id_map WHERE new_id = message_id);
                    UPDATE file SET message_id = (SELECT old_id FROM id_map WHERE new_id = message_id);
                    DELETE FROM grdb_migrations WHERE identifier = 'v13 millisecond message ids';
                    DELETE FROM grdb_migrations WHERE identifier = 'v14 index entries lost after edits';
                    DELETE FROM grdb_migrations WHERE identifier = 'v15 file blobs';
                    DELETE FROM grdb_migrations WHERE identifier = 'v16 avatars and custom emoji';
                    DELETE FROM grdb_migrations WHERE identifier = 'v17 file thumbnails';
                    DELETE FROM grdb_migrations WHERE identifier = 'v18 web sessions';
                    DELETE FROM grdb_migrations WHERE identifier = 'v19 search index leaves of 1,000 bytes';
                    DELETE FROM grdb_migrations WHERE identifier = 'v20 search index word pairs';
                    DELETE FROM grdb_migrations WHERE identifier = 'v21 word counts';
                    DROP TABLE IF EXISTS message_word;
                    """)
            try Migrations.rebuildIndex(db, searchTextElided: searchTextElided)
        }
    }

    @Test func theMigrationRenumbersAnArchiveWrittenBeforeIt() throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("old.sqlite").path
        let before: [String]
        let searches = ["deadlock", "in:#general", "has:reaction", "during:2024", "python before:2024-05-01"]
        var hitsBefore: [[String]] = []
        do {
            let archive = try Archive(path: path)
            _ = try Importer(archive: archive).importExport(at: TestSupport.sampleZip)
            _ = Importer(archive: archive).importPaths([TestSupport.samplePages])
            before = try ImportTests.dump(archive)
            for query in searches {
                let hits = try SearchEngine(archive: archive).search(query, options: Self.newestFirst)
                hitsBefore.append(hits.hits.map { "\($0.message.conversationID) \($0.message.ts) \($0.snippet)" })
            }
        }
        try Self.downgradeToV12(path)
        let oldIDs = try DatabaseQueue(path: path).read { db in
            try Int64.fetchAll(db, sql: "SELECT id FROM message ORDER BY id")
        }
        #expect(oldIDs.count > 3_000 && oldIDs.allSatisfy { $0 > 1 << 56 }, "microsecond ids before")
        #expect(throws: StoreError.self) { try Archive(path: path, access: .readOnly) }
        let upgraded = try Archive(path: path)
        #expect(upgraded.store.upgradedOnOpen)
        #expect(try ImportTests.dump(upgraded) == before, "the same rows, ids, reactions and files")
        for (query, expected) in zip(searches, hitsBefore) {
            let hits = try SearchEngine(archive: upgraded).search(query, options: Self.newestFirst)
            #expect(hits.hits.map { "\($0.message.conversationID) \($0.message.ts) \($0.snippet)" } == expected)
            #expect(!expected.isEmpty)
        }
        try upgraded.pool.read { db in
            let triggers = try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
            #expect(triggers == ["message_count_delete", "message_count_update"])
            let indexes = try String.fetchAll(
                db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'message' ORDER BY name")
            #expect(indexes == ["message_history", "message_key", "message_thread"])
            #expect(try Int.fetchOne(db, sql: "SELECT v FROM message_fts_config WHERE k = 'pgsz'") == 16_000)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM message_vocab") ?? 0 > 1_000)
        }
        try IndexOracle.expectExact(upgraded)
        #expect(try Archive(path: path).store.upgradedOnOpen == false)
    }

    /// Messages of one millisecond (and of one ts in two conversations) renumbered by the migration keep their
    /// order and distinct ids, as the writer would have given them.
    @Test func theMigrationKeepsCrowdedSecondsInOrder() throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("crowded.sqlite").path
        let before: [String]
        do {
            let archive = try Archive(path: path)
            let export = try Self.crowdedExport(second: 1_433_500_000, count: 1_100, shared: 40)
            _ = try Importer(archive: archive).importExport(at: export.path)
            before = try ImportTests.dump(archive)
        }
        try Self.downgradeToV12(path)
        let upgraded = try Archive(path: path)
        #expect(try ImportTests.dump(upgraded) == before)
    }

    /// An archive whose packing (after migration v12) stopped part way is renumbered, and its packing goes on from
    /// the same row under its new id: every row ends packed.
    @Test func packingUnderWayGoesOnAfterTheRenumbering() throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("half.sqlite").path
        let before: [String]
        do {
            let archive = try Archive(path: path)
            _ = try Importer(archive: archive).importExport(at: TestSupport.sampleZip)
            before = try ImportTests.dump(archive)
        }
        try RawBlocksTests.downgradeToV11(path)
        try Self.downgradeToV12(path, searchTextElided: false)
        do {
            let pool = try DatabasePool(path: path)
            try Migrations.migrator.migrate(pool, upTo: "v12 packed raw JSON")
            #expect(try Migrations.packPendingRows(pool, rowsPerTransaction: 1_000, transactions: 1))
            try pool.close()
        }
        let upgraded = try Archive(path: path)
        let (unpacked, pending) = try upgraded.pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM message WHERE raw_block IS NULL") ?? -1,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM meta WHERE key = 'packing'") ?? -1
            )
        }
        #expect(unpacked == 0 && pending == 0)
        #expect(try ImportTests.dump(upgraded) == before)
    }

    /// Messages crowding a second's last millisecond are renumbered inside that second, in their order, so date
    /// bounds count them in their own day after the upgrade as before it.
    @Test func theMigrationKeepsASecondsLastMessagesInThatSecond() throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("late.sqlite").path
        do {
            let archive = try Archive(path: path)
            _ = try Importer(archive: archive).importExport(at: Self.lateExport().path)
        }
        try Self.downgradeToV12(path)
        let upgraded = try Archive(path: path)
        try Self.expectLateMessagesInTheirSecond(upgraded)
        let keys = try upgraded.pool.read { db in
            try Int64.fetchAll(db, sql: "SELECT ts_key FROM message ORDER BY id")
        }
        #expect(keys == keys.sorted() && keys.count == 10)
    }
}
