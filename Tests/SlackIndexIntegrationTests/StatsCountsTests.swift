import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@testable import SlackIndexTestSupport
@testable import SlackIndexTests

/// `stats` reads counts kept as the archive changes (`message_count`); every write path must keep them equal to a
/// count over the messages.
@Suite struct StatsCountsTests {
    @Test func everyImportPathKeepsTheCountsExact() throws {
        let archive = try TestSupport.makeArchive()
        #expect(try archive.stats().messages == 0)
        _ = try Importer(archive: archive).importExport(at: TestSupport.sampleZip)
        #expect(try archive.store.keptMessageCounts() == archive.store.recountedMessageCounts())
        #expect(try archive.stats().messages == 3_000)

        // Sync pages: new messages, replies that make parents threads, edits, deletions, reactions.
        let pages = Importer(archive: archive).importPaths([TestSupport.samplePages])
        #expect(pages.skippedFiles.isEmpty)
        #expect(try archive.store.keptMessageCounts() == archive.store.recountedMessageCounts())
        // Everything again (unchanged), then the export over the pages (older versions: unchanged).
        _ = Importer(archive: archive).importPaths([TestSupport.samplePages, TestSupport.sampleFolder])
        #expect(try archive.store.keptMessageCounts() == archive.store.recountedMessageCounts())

        let counts = try archive.store.recountedMessageCounts().values.reduce([0, 0, 0, 0]) { zip($0, $1).map(+) }
        let stats = try archive.stats()
        #expect([stats.messages, stats.deletedMessages, stats.threads, stats.replies] == counts)
        #expect(stats.deletedMessages > 0, "the sample pages delete messages")
        #expect(stats.threads > 0 && stats.replies > 0)
    }

    @Test func oneConversationsStatsReadItsRow() throws {
        let archive = try TestSupport.sampleArchive()
        let general = try archive.conversation(named: "general")
        let stats = try archive.stats(conversation: general)
        let recounted = try #require(try archive.store.recountedMessageCounts()[general.rowID])
        #expect([stats.messages, stats.deletedMessages, stats.threads, stats.replies] == recounted)
        #expect(stats.conversations == 1)
        #expect((stats.posters ?? 0) > 0)
        #expect((stats.firstSeconds ?? 0) > 0 && (stats.lastSeconds ?? 0) >= (stats.firstSeconds ?? 0))
    }

    @Test func aStoppedImportKeepsTheCountsOfWhatItCommitted() throws {
        let (export, total) = try InterruptTests.export(days: 20, perDay: 100)
        let archive = try TestSupport.makeArchive()
        let stop = StopSignal()
        let first = Importer(archive: archive, batchSize: 500, commitMessages: 700, stop: stop)
            .importPaths([export.path]) { _ in stop.request() }
        #expect(try archive.stats().messages == first.messagesAdded)
        _ = Importer(archive: archive).importPaths([export.path])
        #expect(try archive.stats().messages == total)
        #expect(try archive.store.keptMessageCounts() == archive.store.recountedMessageCounts())
    }

    /// Back to the archive as v10 wrote it: no table, no triggers, the migration not applied.
    static func downgradeToV10(_ path: String) throws {
        try Archive(path: path).pool.write { try TestSupport.undoSearchScope($0) }
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(
                sql: """
                    DROP TRIGGER message_count_update; DROP TRIGGER message_count_delete; DROP TABLE message_count;
                    DELETE FROM grdb_migrations WHERE identifier = 'v11 message counts';
                    DELETE FROM grdb_migrations WHERE identifier = 'v14 index entries lost after edits';
                    DELETE FROM grdb_migrations WHERE identifier = 'v15 file blobs';
                    DELETE FROM grdb_migrations WHERE identifier = 'v16 avatars and custom emoji';
                    DELETE FROM grdb_migrations WHERE identifier = 'v17 file thumbnails';
                    DELETE FROM grdb_migrations WHERE identifier = 'v18 web sessions';
                    DELETE FROM grdb_migrations WHERE identifier = 'v19 search index leaves of 1,000 bytes';
                    DELETE FROM grdb_migrations WHERE identifier = 'v20 search index word pairs';
                    DELETE FROM grdb_migrations WHERE identifier = 'v21 word counts';
                    DROP TABLE message_word;
                    """)
        }
        try queue.close()
    }

    @Test func theMigrationCountsAnArchiveWrittenBeforeIt() throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("old.sqlite").path
        do {
            let archive = try Archive(path: path)
            _ = try Importer(archive: archive).importExport(at: TestSupport.sampleZip)
            _ = Importer(archive: archive).importPaths([TestSupport.samplePages])
        }
        try Self.downgradeToV10(path)
        #expect(throws: StoreError.self) { try Archive(path: path, access: .readOnly) }
        let upgraded = try Archive(path: path)
        #expect(try upgraded.store.keptMessageCounts() == upgraded.store.recountedMessageCounts())
        #expect(try upgraded.stats().messages > 3_000)
    }
}

@Suite struct UpgradeCommandTests {
    /// An archive a newer slackindex migrated is refused by every command, read or write, with the migrations this
    /// version does not know, and nothing in it changes (a write would misread or undo the newer layout). (GRDB's
    /// read-write open writes an empty transaction when the WAL is missing, so the file's bytes are not compared.)
    @Test func anArchiveFromANewerVersionIsRefusedAndLeftAsItWas() throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("newer.sqlite").path
        #expect(try CLITests.run(["--db", path, "import", TestSupport.sampleZip, "--quiet"]).status == 0)
        // A newer tokenizer too: an older version opening it for writing would rebuild the index with its own.
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99 from the future')")
            try db.execute(sql: "UPDATE meta SET value = 'newer' WHERE key = 'tokenizer'")
        }
        let before = try Self.rowCounts(path)
        #expect(before["message"] == 3_000 && before["meta: tokenizer = newer"] == 1)
        for access in [Archive.Access.readWrite, .readOnly] {
            let error = #expect(throws: StoreError.self) { try Archive(path: path, access: access) }
            guard case .newerArchive(path, ["v99 from the future"]) = error else {
                Issue.record("\(access): \(String(describing: error))")
                continue
            }
        }
        let commands = [
            ["stats"], ["search", "deploy"], ["history", "general"], ["upgrade"], ["upgrade", "--vacuum"],
            ["import", TestSupport.samplePages], ["token", "create", "--user", "U00000001"],
        ]
        for command in commands {
            let run = try CLITests.run(["--db", path] + command)
            #expect(run.status == 1, "\(command): \(run.stderr)")
            #expect(
                run.stderr.contains("was written by a newer slackindex")
                    && run.stderr.contains("does not know: v99 from the future)"), "\(command): \(run.stderr)")
        }
        #expect(try Self.rowCounts(path) == before)
    }

    /// Every table's row count (but the index's), and each `meta` row as a key.
    static func rowCounts(_ path: String) throws -> [String: Int] {
        try DatabaseQueue(path: path, configuration: { var c = Configuration(); c.readonly = true; return c }()).read {
            db in
            var counts: [String: Int] = [:]
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            where !table.hasPrefix("message_fts") && table != "message_vocab" {
                counts[table] = try Int.fetchOne(db, sql: "SELECT count(*) FROM \"\(table)\"")
            }
            for row in try Row.fetchAll(db, sql: "SELECT key, value FROM meta") {
                counts["meta: \(row["key"] as String) = \(row["value"] as String? ?? "NULL")"] = 1
            }
            return counts
        }
    }

    @Test func readCommandsPointToUpgradeWhichMakesTheArchiveReadable() throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("old.sqlite").path
        #expect(try CLITests.run(["--db", path, "import", TestSupport.sampleZip, "--quiet"]).status == 0)
        try StatsCountsTests.downgradeToV10(path)
        let refused = try CLITests.run(["--db", path, "stats"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("needs an upgrade") && refused.stderr.contains("Run `slackindex upgrade` once"))
        let upgrade = try CLITests.run(["--db", path, "upgrade"])
        #expect(upgrade.status == 0, "\(upgrade.stderr)")
        // Its sizes follow when the upgrade rewrote the search index (v19) and gave the freed pages back.
        #expect(upgrade.stdout.hasPrefix("The archive at \(path) is up to date") && upgrade.stdout.hasSuffix(".\n"))
        let stats = try CLITests.run(["--db", path, "stats", "--json"])
        #expect(try CLITests.json(stats.stdout.split(separator: "\n")[0])["messages"] as? Int == 3_000)
        #expect(try CLITests.run(["--db", path, "upgrade"]).status == 0)
        let missing = path + ".missing"
        #expect(try CLITests.run(["--db", missing, "upgrade"]).status == 2)
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    /// The packing migration frees pages; `upgrade` gives them back to the disk unless told not to.
    @Test func upgradeGivesThePackingsFreeSpaceBack() throws {
        let directory = TestSupport.temporaryDirectory()
        var sizes: [Int64] = []
        for flags in [[], ["--no-vacuum"]] {
            let path = directory.appendingPathComponent("old\(flags.count).sqlite").path
            #expect(try CLITests.run(["--db", path, "import", TestSupport.sampleZip, "--quiet"]).status == 0)
            try RawBlocksTests.downgradeToV11(path)
            let before = try CLITests.run(["--db", path, "stats", "--json"])
            #expect(before.status == 1 && before.stderr.contains("needs an upgrade"))
            let upgrade = try CLITests.run(["--db", path, "upgrade"] + flags)
            #expect(upgrade.status == 0, "\(upgrade.stderr)")
            if flags.isEmpty {
                #expect(upgrade.stdout.hasPrefix("The archive at \(path) is up to date ("))
                #expect(upgrade.stdout.contains("smaller"))
                #expect(upgrade.stderr.contains("giving the space the old layout took back to the disk"))
            } else {
                #expect(upgrade.stdout == "The archive at \(path) is up to date.\n")
            }
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            sizes.append(try #require((attributes[.size] as? NSNumber)?.int64Value))
            let stats = try CLITests.run(["--db", path, "stats", "--json"])
            #expect(try CLITests.json(stats.stdout.split(separator: "\n")[0])["messages"] as? Int == 3_000)
        }
        #expect(sizes[0] < sizes[1])
        // The archive left with its space: `--vacuum` gives it back although nothing needs an upgrade.
        let kept = directory.appendingPathComponent("old1.sqlite").path
        let vacuum = try CLITests.run(["--db", kept, "upgrade", "--vacuum"])
        #expect(vacuum.status == 0 && vacuum.stdout.contains("smaller"), "\(vacuum.stdout)\(vacuum.stderr)")
        #expect(vacuum.stderr.contains("Giving the file's free space back to the disk"))
        let after = try FileManager.default.attributesOfItem(atPath: kept)
        #expect(try #require((after[.size] as? NSNumber)?.int64Value) < sizes[1])
        #expect(try CLITests.run(["--db", kept, "upgrade", "--vacuum", "--no-vacuum"]).status == 64)
    }

    /// An import that upgrades an archive says how to give the old layout's space back.
    @Test func anImportThatUpgradesPointsToVacuum() throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("old.sqlite").path
        #expect(try CLITests.run(["--db", path, "import", TestSupport.sampleZip, "--quiet"]).status == 0)
        try RawBlocksTests.downgradeToV11(path)
        let again = try CLITests.run(["--db", path, "import", TestSupport.sampleZip, "--quiet"])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stderr.contains("`slackindex upgrade --vacuum` gives the space"))
        let current = try CLITests.run(["--db", path, "import", TestSupport.sampleZip, "--quiet"])
        #expect(!current.stderr.contains("upgrade --vacuum"))
    }
}
