import Foundation
import GRDB
import Testing

@testable import SlackIndex
@testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// `slackindex check`: healthy archives pass; each damage made on purpose is found and named, and `--repair`
/// (or the same import again, for JSON only the source holds) makes the archive healthy again.
@Suite struct ArchiveCheckTests {
    /// sample-data's export and its sync pages (edits, deletions, reactions, threads).
    static func sampleWithPages() throws -> Archive {
        let archive = try TestSupport.sampleArchive()
        _ = Importer(archive: archive).importPaths([TestSupport.samplePages])
        return archive
    }

    static func check(_ archive: Archive) throws -> CheckReport {
        try ArchiveChecker(archive: archive).run()
    }

    @Test func healthyArchivesPass() throws {
        let archive = try Self.sampleWithPages()
        let report = try Self.check(archive)
        #expect(report.healthy, "\(report.findings)")
        #expect(report.messages == (try archive.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM message") }))
        #expect(report.blocks > 0)
        // Read-only, as the command opens it.
        let readOnly = try Archive(path: archive.path, access: .readOnly)
        #expect(try Self.check(readOnly).healthy)
    }

    @Test func aTruncatedBlockIsFoundAndItsMessagesNamed() throws {
        let archive = try TestSupport.sampleArchive()
        let (block, handles) = try archive.pool.write { db -> (Int64, [String]) in
            let block = try #require(try Int64.fetchOne(db, sql: "SELECT min(raw_block) FROM message"))
            try db.execute(
                sql: "UPDATE raw_block SET data = substr(data, 1, length(data) / 2) WHERE id = ?", arguments: [block])
            let handles = try String.fetchAll(
                db,
                sql: """
                    SELECT c.slack_id || '/' || m.ts FROM message m JOIN conversation c ON c.id = m.conversation_id
                    WHERE m.raw_block = ? ORDER BY m.id
                    """, arguments: [block])
            return (block, handles)
        }
        let report = try Self.check(archive)
        let blocks = try #require(report.findings.first { $0.area == "blocks" && $0.problem.contains("inflate") })
        #expect(blocks.count == 1 && blocks.examples == ["block \(block)"])
        let messages = try #require(report.findings.first { $0.area == "messages" })
        #expect(messages.count == handles.count && messages.repair == .reimport)
        #expect(messages.examples.first?.hasPrefix(handles[0]) == true, "\(messages.examples)")

        // --repair marks them; the same import rewrites their JSON, and the archive is healthy again.
        let outcome = try ArchiveChecker(archive: archive).repair(report)
        #expect(outcome.markedForReimport == handles.count)
        _ = try Importer(archive: archive).importExport(at: TestSupport.sampleFolder)
        let after = try Self.check(archive)
        #expect(after.findings.allSatisfy { $0.area == "blocks" && $0.problem.contains("no message") }, "\(after.findings)")
        _ = try ArchiveChecker(archive: archive).repair(after)
        #expect(try Self.check(archive).healthy)
    }

    @Test func aWrongLocationIsFound() throws {
        let archive = try TestSupport.sampleArchive()
        let handle = try archive.pool.write { db -> String in
            let id = try #require(try Int64.fetchOne(db, sql: "SELECT min(id) FROM message WHERE raw_block IS NOT NULL"))
            // Seven bytes further into the block: the JSON of a neighbour, or the middle of one.
            try db.execute(sql: "UPDATE message SET raw_at = raw_at + (7 << 32) WHERE id = ?", arguments: [id])
            return try #require(
                try String.fetchOne(
                    db,
                    sql: "SELECT c.slack_id || '/' || m.ts FROM message m JOIN conversation c ON c.id = m.conversation_id WHERE m.id = ?",
                    arguments: [id]))
        }
        let report = try Self.check(archive)
        #expect(report.findings.map(\.area) == ["messages"], "\(report.findings)")
        #expect(report.findings.first?.count == 1)
        #expect(report.findings.first?.examples.first?.hasPrefix(handle) == true, "\(report.findings)")
    }

    @Test func aRemovedIndexEntryIsFoundAndRebuilt() throws {
        let archive = try TestSupport.sampleArchive()
        let handle = try archive.pool.write { db -> String in
            let row = try #require(
                try Row.fetchOne(
                    db,
                    sql: """
                        SELECT m.id, \(SearchTextColumn.sql("m")) AS search_text, m.search_extra,
                            m.conversation_id, m.user_id, c.slack_id || '/' || m.ts AS handle
                        FROM message m JOIN conversation c ON c.id = m.conversation_id
                        WHERE m.is_deleted = 0 AND m.text LIKE '% %' ORDER BY m.id LIMIT 1 OFFSET 100
                        """))
            try MessageWriter.indexDelete(
                id: row["id"], row["search_text"], row["search_extra"], scope: (row["conversation_id"], row["user_id"]),
                in: db)
            try WordCounts.of(db).flush(db)
            return row["handle"]
        }
        let report = try Self.check(archive)
        let index = try #require(report.findings.first { $0.area == "index" }, "\(report.findings)")
        #expect(report.findings.count == 1 && index.examples == [handle] && index.repair == .checkRepair,
            "\(report.findings) \(handle)")

        let outcome = try ArchiveChecker(archive: archive).repair(report)
        #expect(outcome.rebuiltIndex)
        #expect(try Self.check(archive).healthy)
    }

    @Test func countsAndReplyCountsAreRecounted() throws {
        let archive = try Self.sampleWithPages()
        try archive.pool.write { db in
            try db.execute(sql: "UPDATE message_count SET messages = messages + 3 WHERE rowid = (SELECT min(rowid) FROM message_count)")
            try db.execute(
                sql: "UPDATE message SET reply_count = 0 WHERE id = (SELECT min(id) FROM message WHERE reply_count > 0)")
            try db.execute(sql: "DELETE FROM message WHERE id = (SELECT min(message_id) FROM reaction)")
        }
        let report = try Self.check(archive)
        #expect(Set(report.findings.map(\.area)).isSuperset(of: ["counts", "replies", "attachments"]), "\(report.findings)")
        let counts = try #require(report.findings.first { $0.area == "counts" })
        #expect(counts.count >= 1)
        _ = try ArchiveChecker(archive: archive).repair(report)
        let after = try Self.check(archive)
        // Deleting a row outside the writer also took its index entry's message: the index no longer agrees, which
        // a second repair rebuilds.
        _ = try ArchiveChecker(archive: archive).repair(after)
        let final = try Self.check(archive)
        #expect(final.healthy, "\(final.findings)")
    }

    /// The checksum sees what SQLite's own comparison sees: on a healthy archive both agree (SQLite's needs a
    /// writable connection and content that is stored as indexed, so it runs here on a copy made so).
    @Test func theIndexChecksumAgreesWithSQLitesIntegrityCheck() throws {
        let archive = try Self.sampleWithPages()
        let agreement = try archive.store.indexAgreement()
        #expect(agreement.agrees && agreement.indexSum != 0)
        try archive.pool.write { db in
            // The content SQLite reads: search text in full, and only the messages indexed (not the deleted ones).
            try db.execute(sql: "UPDATE message SET search_text = \(SearchTextColumn.sql("message"))")
            try db.execute(sql: "DELETE FROM message WHERE is_deleted = 1")
            try db.execute(sql: "INSERT INTO message_fts (message_fts, rank) VALUES ('integrity-check', 1)")
        }
    }
}

/// `slackindex check` as a user runs it: the exit status, the report on stdout, `--json`, `--repair`.
@Suite struct CheckCLITests {
    @Test func healthyDamagedAndRepaired() throws {
        let db = TestSupport.temporaryDirectory().appendingPathComponent("check.sqlite").path
        #expect(try CLITests.run(["--db", db, "import", TestSupport.sampleZip, "--quiet"]).status == 0)
        let healthy = try CLITests.run(["--db", db, "check"])
        #expect(healthy.status == 0, "\(healthy.stderr)")
        #expect(healthy.stdout.hasPrefix("Healthy: \(db) (3,000 messages and "), "\(healthy.stdout)")

        // An index entry removed: found, named, exit 2; --repair rebuilds it; then healthy.
        let archive = try Archive(path: db)
        try archive.pool.write { db in
            let row = try #require(
                try Row.fetchOne(
                    db,
                    sql: "SELECT id, \(SearchTextColumn.sql("m")) AS t, search_extra, conversation_id, user_id FROM message m WHERE is_deleted = 0 LIMIT 1"))
            try MessageWriter.indexDelete(
                id: row["id"], row["t"], row["search_extra"], scope: (row["conversation_id"], row["user_id"]), in: db)
            try WordCounts.of(db).flush(db)
        }
        let damaged = try CLITests.run(["--db", db, "check"])
        #expect(damaged.status == 2)
        #expect(damaged.stdout.hasPrefix("Damaged: \(db)"), "\(damaged.stdout)")
        #expect(damaged.stdout.contains("  index: 1 — The search index does not hold what the messages' text gives"))
        #expect(damaged.stdout.contains("repair: check --repair"))
        let json = try CLITests.run(["--db", db, "check", "--json"])
        #expect(json.status == 2)
        let report = try CLITests.json(Substring(json.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(report["healthy"] as? Bool == false)
        let findings = try #require(report["findings"] as? [[String: Any]])
        #expect(findings.map { $0["area"] as? String } == ["index"])
        let repaired = try CLITests.run(["--db", db, "check", "--repair"])
        #expect(repaired.status == 2)
        #expect(repaired.stdout.contains("Repaired: search index rebuilt."), "\(repaired.stdout)")
        #expect(try CLITests.run(["--db", db, "check"]).status == 0)
    }
}

/// A failed write SQLite reports in its own words becomes one sentence naming the archive, never the raw error.
@Suite struct WriteFailureWordsTests {
    @Test func aFullDiskIsToldAsSuch() throws {
        let error = DatabaseError(resultCode: .SQLITE_FULL, message: "database or disk is full")
        let told = try #require(StoreError.writeFailure(error, path: "/srv/archive.sqlite"))
        #expect(told.description.hasPrefix("The disk holding the archive /srv/archive.sqlite is full"))
        #expect(told.description.contains("run the same command again"))
        #expect(!told.description.contains("SQLite error"))
        // Not every database error is a failed write: a constraint is a defect, reported as it is.
        #expect(StoreError.writeFailure(DatabaseError(resultCode: .SQLITE_CONSTRAINT), path: "/x") == nil)
        #expect(StoreError.writeFailure(CocoaError(.fileNoSuchFile), path: "/x") == nil)
    }
}

/// Every other error SQLite reports reaches the user in the store's words, with what to do (issue 47).
@Suite struct DatabaseErrorWordsTests {
    @Test func busyDamagedAndOtherErrorsAreToldInOurWords() throws {
        let busy = try #require(StoreError.told(DatabaseError(resultCode: .SQLITE_BUSY), path: "/a.sqlite"))
        #expect(busy.description.hasPrefix("Another process has been writing to the archive /a.sqlite"))
        let damaged = try #require(
            StoreError.told(DatabaseError(resultCode: .SQLITE_CORRUPT, message: "database disk image is malformed"), path: "/a"))
        #expect(damaged.description.contains("is damaged") && damaged.description.contains("slackindex check"))
        let other = try #require(StoreError.told(DatabaseError(resultCode: .SQLITE_CONSTRAINT), path: "/a"))
        #expect(other.description.hasPrefix("The archive /a could not be used"))
        // A full disk stays a failed write; what is not SQLite's is not ours to tell.
        #expect(StoreError.told(DatabaseError(resultCode: .SQLITE_FULL), path: "/a")?.description.contains("is full") == true)
        #expect(StoreError.told(CocoaError(.fileNoSuchFile), path: "/a") == nil)
    }

    @Test func aDamagedArchiveIsToldAsSuchByReadCommands() throws {
        let db = TestSupport.temporaryDirectory().appendingPathComponent("damaged.sqlite").path
        #expect(try CLITests.run(["--db", db, "import", TestSupport.sampleZip, "--quiet"]).status == 0)
        // Pages in the middle of the file overwritten: SQLite finds the b-trees malformed.
        let file = try #require(FileHandle(forWritingAtPath: db))
        try file.seek(toOffset: 16_384 * 5)
        try file.write(contentsOf: Data(repeating: 0xFF, count: 16_384 * 3))
        try file.close()
        let history = try CLITests.run(["--db", db, "history", "general"])
        #expect(history.status == 1)
        #expect(history.stderr.contains("is damaged"), "\(history.stderr)")
        #expect(history.stderr.contains("slackindex check"))
        #expect(!history.stderr.contains("SQLite error"), "\(history.stderr)")
    }
}
