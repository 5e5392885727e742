import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

@Suite struct ImportTests {
    /// Every stored message as comparable text: the archive's whole content, in key order.
    /// - Parameter raw: include the raw JSON text (pages and exports write the same JSON value with different
    ///   escapes, so a state reached in another order may keep the other spelling).
    static func dump(_ archive: Archive, raw: Bool = true) throws -> [String] {
        let messages = try archive.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT m.id, c.slack_id || '|' || m.ts || '|' || m.id || '|' || coalesce(m.user_id, '') || '|' ||
                        coalesce(m.thread_ts, '') || '|' || m.reply_count || '|' || m.flags || '|' || m.text || '|' ||
                        \(SearchTextColumn.sql("m")) || '|' || m.search_extra AS line, m.hash
                    FROM message m JOIN conversation c ON c.id = m.conversation_id
                    ORDER BY c.slack_id, m.ts_key
                    """)
        }
        // The JSON as the store gives it back (packed or inline).
        var raws: [Int64: String] = [:]
        if raw {
            let ids: [Int64] = messages.map { $0["id"] }
            for start in stride(from: 0, to: ids.count, by: 500) {
                for (id, message) in try archive.store.rawMessages(ids: Array(ids[start..<min(start + 500, ids.count)])) {
                    raws[id] = message.json
                }
            }
        }
        let lines = messages.map { row -> String in
            let id: Int64 = row["id"]
            let hash: Int64 = row["hash"]
            return (row["line"] as String) + "|" + (raws[id] ?? "") + "|" + String(hash)
        }
        return try lines
            + archive.pool.read { db in
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT message_id || '|' || name || '|' || count || '|' || users FROM reaction
                        ORDER BY message_id, name
                        """)
                    + String.fetchAll(
                        db,
                        sql: """
                            SELECT message_id || '|' || position || '|' || coalesce(name, '') || '|' ||
                                coalesce(url_private, '') FROM file ORDER BY message_id, position
                            """)
            }
    }

    @Test func folderAndZipGiveIdenticalArchives() throws {
        let fromFolder = try TestSupport.makeArchive()
        let fromZip = try TestSupport.makeArchive()
        let a = try Importer(archive: fromFolder).importExport(at: TestSupport.sampleFolder)
        let b = try Importer(archive: fromZip).importExport(at: TestSupport.sampleZip)
        #expect(a.messagesAdded == b.messagesAdded)
        #expect(!a.hasSkips && !b.hasSkips)
        let left = try Self.dump(fromFolder)
        let right = try Self.dump(fromZip)
        #expect(left.count > 3_000)
        #expect(left == right)
    }

    @Test func countsEqualTheGeneratorSummary() throws {
        let archive = try TestSupport.makeArchive()
        let summary = try Importer(archive: archive).importExport(at: TestSupport.sampleFolder)
        let expected = TestSupport.sampleSummary
        let conversations = try #require(expected["conversations"] as? [String: Int])
        let users = try #require(expected["users"] as? [String: Int])
        #expect(summary.messagesAdded == expected["messages"] as? Int)
        #expect(summary.messagesSkipped == 0)
        #expect(summary.conversationsAdded == conversations.values.reduce(0, +))
        #expect(summary.usersAdded == users["total_in_users_json"])
        let stats = try archive.stats()
        #expect(stats.messages == expected["messages"] as? Int)
        #expect(stats.threads == expected["thread_parents"] as? Int)
        #expect(stats.replies == expected["replies"] as? Int)
        #expect(stats.conversationsByKind["channel"] == conversations["channel"])
        #expect(stats.conversationsByKind["private"] == conversations["group"])
        #expect(stats.conversationsByKind["dm"] == conversations["dm"])
        #expect(stats.conversationsByKind["mpim"] == conversations["mpim"])
        #expect(stats.users == users["total_in_users_json"])
    }

    @Test func reimportAddsNothing() throws {
        let archive = try TestSupport.makeArchive()
        let first = try Importer(archive: archive).importExport(at: TestSupport.sampleFolder)
        let before = try Self.dump(archive)
        let second = try Importer(archive: archive).importExport(at: TestSupport.sampleZip)
        #expect(second.messagesAdded == 0)
        #expect(second.messagesUpdated == 0)
        #expect(second.messagesUnchanged == first.messagesAdded)
        #expect(second.conversationsAdded == 0)
        #expect(second.conversationsUnchanged == first.conversationsAdded)
        #expect(try Self.dump(archive) == before)
    }

    @Test func overlappingExportsLeaveOneRowPerMessage() throws {
        // Two exports that share days, where the shared copies differ only in volatile block ids.
        let day1 = #"[{"type":"message","user":"U1","text":"first","ts":"1700000000.000100"}]"#
        let day2a = #"""
            [{"type":"message","user":"U1","text":"second","ts":"1700086400.000200",
              "blocks":[{"type":"rich_text","block_id":"AAAA","elements":[]}]}]
            """#
        let day2b = day2a.replacingOccurrences(of: "AAAA", with: "BBBB")
        let day3 = #"[{"type":"message","user":"U1","text":"third","ts":"1700172800.000300"}]"#
        let a = try TestSupport.minimalExport(days: ["2023-11-14": day1, "2023-11-15": day2a])
        let b = try TestSupport.minimalExport(days: ["2023-11-15": day2b, "2023-11-16": day3])
        let archive = try TestSupport.makeArchive()
        let importer = Importer(archive: archive)
        let first = try importer.importExport(at: a.path)
        let second = try importer.importExport(at: b.path)
        #expect(first.messagesAdded == 2)
        #expect(second.messagesAdded == 1)
        #expect(second.messagesUnchanged == 1)
        #expect(try archive.stats().messages == 3)
    }

    @Test func messageChangedRecordsAreRevisionsNotMessages() throws {
        let day = #"""
            [{"type":"message","user":"U1","text":"old text","ts":"1700000000.000100"},
             {"type":"message","subtype":"message_changed","hidden":true,"ts":"1700000100.000000",
              "thread_ts":"0000000000.000000","editor_id":"U1",
              "message":{"type":"message","user":"U1","text":"new text","ts":"1700000000.000100",
                         "edited":{"user":"U1","ts":"1700000100.000000"}},
              "original":{"type":"message","user":"U1","text":"old text","ts":"1700000000.000100"}}]
            """#
        let export = try TestSupport.minimalExport(days: ["2023-11-14": day])
        let archive = try TestSupport.makeArchive()
        let summary = try Importer(archive: archive).importExport(at: export.path)
        #expect(summary.messagesRead == 2)
        #expect(try archive.stats().messages == 1)
        let engine = SearchEngine(archive: archive)
        #expect(try engine.search("new").hits.map(\.message.text) == ["new text"])
        #expect(try engine.search("old").hits.isEmpty)
        // The original's entry went before the revision's replaced it (both in one batch).
        try IndexOracle.expectExact(archive)
        // Importing again (the original and then its revision) keeps the revision.
        let again = try Importer(archive: archive).importExport(at: export.path)
        #expect(again.messagesAdded == 0)
        #expect(try engine.search("new").hits.count == 1)
        try IndexOracle.expectExact(archive)
    }

    /// An edit that changes a stored message's index entry, then a new message in the same batch: the new message
    /// is indexed (it got no entry, and the index an empty document, when the statement the edit ran was not reset).
    @Test func aNewMessageAfterAnEditInTheSameBatchIsIndexed() throws {
        let archive = try TestSupport.makeArchive()
        let original = #"[{"type":"message","user":"U1","text":"alpha original","ts":"1700000000.000100"}]"#
        _ = try Importer(archive: archive).importExport(
            at: TestSupport.minimalExport(days: ["2023-11-14": original]).path)
        let later = #"""
            [{"type":"message","subtype":"message_changed","hidden":true,"ts":"1700000100.000000",
              "message":{"type":"message","user":"U1","text":"beta revised","ts":"1700000000.000100",
                         "edited":{"user":"U1","ts":"1700000100.000000"}}},
             {"type":"message","user":"U1","text":"gamma newcomer","ts":"1700000200.000300"},
             {"type":"message","user":"U1","text":"delta follower","ts":"1700000300.000400"}]
            """#
        let summary = try Importer(archive: archive).importExport(
            at: TestSupport.minimalExport(days: ["2023-11-14": later]).path)
        #expect(summary.messagesUpdated == 1 && summary.messagesAdded == 2)
        let engine = SearchEngine(archive: archive)
        #expect(try engine.search("gamma").hits.map(\.message.text) == ["gamma newcomer"])
        #expect(try engine.search("delta").hits.map(\.message.text) == ["delta follower"])
        #expect(try engine.search("beta").hits.map(\.message.text) == ["beta revised"])
        #expect(try engine.search("alpha").hits.isEmpty)
        try IndexOracle.expectExact(archive)
    }

    /// What the unreset statement left (before v14), made by hand: the lost message's entry is missing and an empty
    /// document was added at the index's highest row id + 1 (`lost`), or on the lost message's own id
    /// (`emptyOnItsOwnID`), or the lost message was deleted later (`lostThenDeleted`).
    enum IndexDamage: CaseIterable { case lost, emptyOnItsOwnID, lostThenDeleted }

    /// Migration v14 builds the index again when it finds what the unreset statement did, and leaves a sound index
    /// as it is.
    @Test(arguments: IndexDamage.allCases)
    func theMigrationRebuildsAnIndexThatLostEntries(damage: IndexDamage) throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("archive.sqlite").path
        let v14 = "DELETE FROM grdb_migrations WHERE identifier = 'v14 index entries lost after edits'"
        func indexPages(_ archive: Archive) throws -> [Int64] {
            try archive.pool.read { db in
                try Int64.fetchAll(db, sql: "SELECT id FROM message_fts_data ORDER BY id")
                    + Int64.fetchAll(db, sql: "SELECT length(block) FROM message_fts_data ORDER BY id")
            }
        }
        do {
            let archive = try Archive(path: path)
            _ = try Importer(archive: archive).importExport(at: TestSupport.sampleFolder)
            let lost = try #require(
                try archive.pool.read { db in
                    try Row.fetchOne(
                        db,
                        sql: """
                            SELECT id, conversation_id, ts_key, \(SearchTextColumn.sql("message")) AS indexed,
                                search_extra, user_id
                            FROM message WHERE is_deleted = 0 AND text GLOB '*[a-z]*' ORDER BY id DESC LIMIT 1
                            """)
                })
            let id: Int64 = lost["id"]
            let emptyDocument = "INSERT INTO message_fts (rowid, search_text, search_extra) VALUES (NULL, NULL, NULL)"
            try archive.pool.write { db in
                // The damage as v13 and before did it, to their index of two columns.
                try TestSupport.undoSearchScope(db)
                try db.execute(
                    sql: "INSERT INTO message_fts (message_fts, rowid, search_text, search_extra) VALUES ('delete', ?, ?, ?)",
                    arguments: [id, lost["indexed"], lost["search_extra"]])
                switch damage {
                case .lost:
                    try db.execute(sql: emptyDocument)
                case .emptyOnItsOwnID:
                    try db.execute(
                        sql: "INSERT INTO message_fts (rowid, search_text, search_extra) VALUES (?, NULL, NULL)",
                        arguments: [id])
                case .lostThenDeleted:
                    try db.execute(sql: emptyDocument)
                    try db.execute(
                        sql: "UPDATE message SET is_deleted = 1 WHERE id = ?", arguments: [id])
                }
                try WordCounts.of(db).flush(db)
                try db.execute(sql: v14)
                // v14 finds it (v22, which rebuilds the index after it, would mend it anyway).
                #expect(try Migrations.indexLostEntries(db))
            }
            #expect(try !IndexOracle.differences(in: archive).isEmpty)
        }
        #expect(throws: StoreError.self) { try Archive(path: path, access: .readOnly) }
        let upgraded = try Archive(path: path)
        #expect(upgraded.store.upgradedOnOpen)
        try IndexOracle.expectExact(upgraded)
        // Nothing lost: the migration leaves the index as it is (a stray entry, which a rebuild would drop, stays).
        let sentinel = try #require(
            try upgraded.pool.read { db in
                try Int64.fetchOne(db, sql: "SELECT max(id) FROM message WHERE is_deleted = 0")
            })
        try upgraded.pool.write { db in
            try MessageWriter.indexInsert(id: sentinel, "zzsentinel", "", scope: (0, nil), in: db)
            try WordCounts.of(db).flush(db)
            try db.execute(sql: v14)
        }
        let before = try indexPages(upgraded)
        let again = try Archive(path: path)
        #expect(!again.store.upgradedOnOpen, "nothing to give back to the disk")
        #expect(try indexPages(again) == before)
        #expect(try SearchEngine(archive: again).search("zzsentinel").hits.count == 1)
    }

    /// The oracle the index tests rely on sees an entry missing and an entry for a text the message does not have.
    @Test func theIndexOracleSeesAMissingEntryAndAStrayOne() throws {
        let archive = try TestSupport.sampleArchive()
        try IndexOracle.expectExact(archive)
        let row = try #require(
            try archive.pool.read { db in
                try Row.fetchOne(
                    db,
                    sql: """
                        SELECT id, \(SearchTextColumn.sql("message")) AS indexed, search_extra, \(IndexScope.definition) AS search_scope FROM message
                        WHERE is_deleted = 0 AND text LIKE '% %' ORDER BY id LIMIT 1
                        """)
            })
        let id: Int64 = row["id"]
        let text: String = row["indexed"]
        let extra: String = row["search_extra"]
        let scope: String = row["search_scope"]
        // The index alone, by hand (its words' counts untouched).
        try archive.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO message_fts (message_fts, rowid, search_text, search_extra, search_scope)
                    VALUES ('delete', ?, ?, ?, ?)
                    """,
                arguments: [id, text, extra, scope])
        }
        let missing = try IndexOracle.differences(in: archive, limit: 1_000)
        let entries = missing.filter { $0.hasPrefix("missing from the index: ") }
        #expect(!entries.isEmpty && entries.allSatisfy { $0.contains(" message \(id) ") }, "\(missing)")
        #expect(missing.count == entries.count + 2, "\(missing)")
        #expect(missing.contains { $0.hasPrefix("document missing from the index: \(id) sizes ") })
        #expect(missing.last?.hasPrefix("totals differ: ") == true)
        // The index alone, by hand (its words' counts untouched).
        try archive.pool.write { db in
            try db.execute(
                sql: "INSERT INTO message_fts (rowid, search_text, search_extra, search_scope) VALUES (?, ?, ?, ?)",
                arguments: [id, text, extra, scope])
        }
        try IndexOracle.expectExact(archive)
        // An entry for a row id no message has.
        let strayID = try #require(
            try archive.pool.read { db in try Int64.fetchOne(db, sql: "SELECT max(id) + 7 FROM message") })
        // The index alone, by hand (its words' counts untouched).
        try archive.pool.write { db in
            try db.execute(
                sql: "INSERT INTO message_fts (rowid, search_text, search_extra) VALUES (?, 'zzstray', '')",
                arguments: [strayID])
        }
        let stray = try IndexOracle.differences(in: archive)
        #expect(stray.count == 3, "\(stray)")
        #expect(stray.first == "only in the index: zzstray message \(strayID) column search_text at 0", "\(stray)")
        #expect(stray.contains("document only in the index: \(strayID) sizes 010000"), "\(stray)")
        #expect(stray.last?.hasPrefix("totals differ: ") == true)
    }

    @Test func threadsComeFromThreadTS() throws {
        let archive = try TestSupport.sampleArchive()
        let stats = try archive.stats()
        #expect(stats.threads == TestSupport.sampleSummary["thread_parents"] as? Int)
        // Every reply's parent is stored in the same conversation.
        let orphans = try archive.pool.read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM message r WHERE r.thread_key IS NOT NULL AND r.thread_key != r.ts_key
                    AND NOT EXISTS (SELECT 1 FROM message p WHERE p.conversation_id = r.conversation_id
                        AND p.ts_key = r.thread_key)
                    """)
        }
        #expect(orphans == 0)
    }

    @Test func fileURLsLoseTheirTokens() {
        #expect(
            URLScrubber.strippingTokens("https://files.slack.com/x/a.png?t=xoxe-123&width=200")
                == "https://files.slack.com/x/a.png?width=200")
        #expect(URLScrubber.strippingTokens("https://x.y/z?token=abc") == "https://x.y/z")
        #expect(URLScrubber.strippingTokens("https://x.y/z?a=1#frag") == "https://x.y/z?a=1#frag")
    }

    @Test func defaultDatabaseFollowsXDG() {
        #expect(Archive.defaultPath(environment: ["SLACKINDEX_DB": "/x/y.sqlite"]) == "/x/y.sqlite")
        #expect(
            Archive.defaultPath(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/a"])
                == "/data/slackindex/archive.sqlite")
        #expect(
            Archive.defaultPath(environment: ["HOME": "/home/a"]) == "/home/a/.local/share/slackindex/archive.sqlite")
        #expect(
            Archive.defaultPath(environment: ["XDG_DATA_HOME": "relative", "HOME": "/home/a"])
                == "/home/a/.local/share/slackindex/archive.sqlite")
    }

    @Test(arguments: [
        ("1612345678.000200", Int64(1_612_345_678_000_200)),
        ("1612345678", Int64(1_612_345_678_000_000)),
        ("1612345678.5", Int64(1_612_345_678_500_000)),
        ("1612345678.1234567", Int64(1_612_345_678_123_456)),
    ])
    func timestampsStayExact(text: String, key: Int64) {
        #expect(SlackTimestamp.parseKey(text) == key)
    }

    @Test(arguments: ["", ".5", "abc", "1.2.3", "-1", "1e9", "12345678901234"])
    func badTimestampsAreRejected(text: String) {
        #expect(SlackTimestamp.parseKey(text) == nil)
    }
}

@Suite struct ConfigTests {
    @Test func meComesFromTheConfigFile() throws {
        let dir = TestSupport.temporaryDirectory()
        let environment = ["XDG_CONFIG_HOME": dir.path, "HOME": "/nonexistent"]
        #expect(try Config.load(environment: environment) == Config())
        try FileManager.default.createDirectory(
            at: dir.appendingPathComponent("slackindex"), withIntermediateDirectories: true)
        try Data(#"{"me": "ann"}"#.utf8).write(to: dir.appendingPathComponent("slackindex/config.json"))
        #expect(try Config.load(environment: environment).me == "ann")
        try Data("[1,".utf8).write(to: dir.appendingPathComponent("slackindex/config.json"))
        #expect(throws: ConfigError.self) { try Config.load(environment: environment) }
    }

    @Test func fromMeSearchesTheConfiguredUser() throws {
        let day = #"[{"type":"message","user":"U1","text":"mine","ts":"1700000000.000100"}]"#
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.minimalExport(days: ["2023-11-14": day]).path)
        var options = SearchOptions()
        #expect(throws: SearchError.self) { try SearchEngine(archive: archive).search("from:me", options: options) }
        options.me = "ann"
        #expect(try SearchEngine(archive: archive).search("from:me", options: options).hits.map(\.message.text) == ["mine"])
    }
}
