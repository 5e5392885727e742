import Foundation
import GRDB
import GRDBSQLite
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// Counts the commits of the connection it observes.
final class CommitCounter: TransactionObserver, @unchecked Sendable {
    private(set) var count = 0
    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseDidCommit(_ db: Database) { count += 1 }
    func databaseDidRollback(_ db: Database) {}
}

/// The import's write path: transactions spanning several batches, checkpoints on their own thread, and the
/// minifier that feeds it.
@Suite struct BulkWriteTests {
    @Test func smallTransactionsGiveTheSameArchiveAndLeaveNoWAL() throws {
        let reference = try TestSupport.makeArchive()
        let expected = try Importer(archive: reference).importExport(at: TestSupport.sampleFolder)
        let archive = try TestSupport.makeArchive()
        let commits = CommitCounter()
        archive.pool.writeWithoutTransaction { db in db.add(transactionObserver: commits) }
        // Batches of 40 messages, a commit every 100: many transactions, commits in the middle of a day.
        let summary = try Importer(archive: archive, batchSize: 40, commitMessages: 100)
            .importExport(at: TestSupport.sampleFolder)
        #expect(summary.messagesAdded == expected.messagesAdded)
        // One commit per 120 messages (three batches), give or take the listings' and the final transactions.
        #expect(abs(commits.count - summary.messagesAdded / 120) <= 4)
        #expect(summary.messagesAdded >= 3_000)
        #expect(try ImportTests.dump(archive) == ImportTests.dump(reference))
        try archive.pool.write { db in
            try db.execute(sql: "INSERT INTO message_fts (message_fts) VALUES ('integrity-check')")
        }
        try IndexOracle.expectExact(archive)
        let walSize = (try? FileManager.default.attributesOfItem(atPath: archive.path + "-wal")[.size] as? Int) ?? 0
        #expect(walSize == 0)
        // Automatic checkpoints are back on after the import.
        let autocheckpoint = try archive.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") }
        #expect(autocheckpoint == 1000)
    }

    @Test(arguments: [0, 1, 2, 7, 300])
    func daySortIsStableAndLeavesTheEarlierBatchAlone(count: Int) {
        var rng = SeededGenerator(seed: UInt64(count + 1))
        func message(_ key: Int64, _ label: String) -> PreparedMessage {
            PreparedMessage(
                conversationRowID: 1, ts: label, tsKey: key, userID: nil, username: nil, subtype: nil, threadTS: nil,
                threadKey: nil, replyCount: 0, editedTS: nil, editedKey: 0, flags: 0, text: label, searchText: "",
                searchExtra: "", raw: "{}", hash: 0, reactions: [], files: [])
        }
        let earlier = [message(5, "kept-0"), message(1, "kept-1")]
        let day = (0..<count).map { index in message(Int64(rng.next() % 5), "m\(index)") }
        var messages = earlier + day
        ReaderJob.sortStable(&messages, from: earlier.count)
        let expected = day.enumerated().sorted { ($0.element.tsKey, $0.offset) < ($1.element.tsKey, $1.offset) }
            .map(\.element.ts)
        #expect(messages.map(\.ts) == earlier.map(\.ts) + expected)
    }

    @Test func checkpointThreadCopiesCommittedFramesAndTheWALStartsOver() throws {
        let archive = try TestSupport.makeArchive()
        let wal = WALLength()
        archive.pool.writeWithoutTransaction { db in wal.install(on: db) }
        let checkpointer = try Checkpointer(path: archive.path)
        func writeSome() throws {
            try archive.pool.write { db in
                for index in 0..<200 {
                    try db.execute(
                        sql: "INSERT INTO meta (key, value) VALUES (?, ?)",
                        arguments: ["k\(UUID().uuidString)", String(repeating: "x", count: 2_000 + index)])
                }
            }
        }
        try writeSome()
        let grown = wal.current
        #expect(grown > 10)
        try checkpointer.wait(for: checkpointer.request())
        // Every frame is in the database file now: the next transaction starts the WAL over.
        let (log, copied) = try archive.pool.writeWithoutTransaction { db in
            let row = try #require(try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)"))
            return (row[1] as Int, row[2] as Int)
        }
        #expect(log == copied)
        try writeSome()
        #expect(wal.current <= grown)
        #expect(checkpointer.stop() >= 0)
        // After stop, waiting returns instead of hanging.
        try checkpointer.wait(for: checkpointer.request())
        try archive.pool.writeWithoutTransaction { db in try wal.uninstall(from: db) }
    }

    /// The byte-by-byte minifier the fast one replaced, as the oracle.
    static func referenceMinify(_ input: [UInt8]) -> (bytes: [UInt8], complete: Bool) {
        var out: [UInt8] = []
        var inString = false
        var escaped = false
        var depth = 0
        var sawFirst = false
        var i = input.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while i < input.count {
            let byte = input[i]
            i += 1
            if inString {
                out.append(byte)
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): continue
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
            sawFirst = true
            out.append(byte)
        }
        return (out, depth == 0 && !inString && sawFirst)
    }

    static func slice(_ text: String) -> JSONSlicer {
        Array(text.utf8).withUnsafeBytes { JSONSlicer($0) }
    }

    @Test(arguments: [
        "[]", "[1, 2 ,3]", "\u{FEFF}[ {\"a\" : \"b c\"} ]", "[\"a \\\" b\", \"c\\\\\", \"\\\\\\\"\"]",
        "[\n    {\n        \"text\": \"caf\u{E9} \u{1F600} \\u00e9\",\n        \"n\": [ 1, 2 ]\n    },\n    \"x\"\n]",
        "{\"not\": \"an array\"}", "[\"unterminated", "[\"ends in a backslash\\", "[{\"a\": 1}", "", "   ",
    ])
    func minifierMatchesTheReference(_ text: String) {
        let sliced = Self.slice(text)
        let reference = Self.referenceMinify(Array(text.utf8))
        #expect(sliced.bytes == reference.bytes)
        #expect(sliced.isComplete == reference.complete)
    }

    /// Whitespace runs of every length up to 20 (the minifier skips spaces eight at a time), at the end too. (The
    /// reference does not know values that follow the first one, so completeness is compared without whitespace.)
    @Test(arguments: [1, 2, 3] as [UInt64]) func minifierMatchesTheReferenceOnAnyWhitespace(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let tokens = ["[", "]", "{", "}", ",", ":", "\"a b\"", "\"x\\\"  y\"", "12", "true", "\n", "\t", "\r"]
        for _ in 0..<500 {
            var text = ""
            for _ in 0..<Int.random(in: 0..<16, using: &rng) {
                text += String(repeating: " ", count: Int.random(in: 0...20, using: &rng))
                text += tokens.randomElement(using: &rng) ?? ""
            }
            text += String(repeating: " ", count: Int.random(in: 0...20, using: &rng))
            let sliced = Self.slice(text)
            let reference = Self.referenceMinify(Array(text.utf8))
            #expect(sliced.bytes == reference.bytes, "\(text.debugDescription)")
            // Whitespace changes nothing else: the minified text slices to the same elements and completeness.
            let again = sliced.bytes.withUnsafeBytes { JSONSlicer($0) }
            #expect(again.elements == sliced.elements, "\(text.debugDescription)")
            #expect(again.isComplete == sliced.isComplete, "\(text.debugDescription)")
            #expect(!sliced.isComplete || reference.complete)
        }
    }

    @Test func minifierFindsTheElements() {
        let sliced = Self.slice("[ {\"a\": \"x, y\"}, [1, 2], \"s]\", 3 ]")
        let elements = sliced.elements.map { String(decoding: sliced.bytes[$0], as: UTF8.self) }
        #expect(sliced.isArray && sliced.isComplete)
        #expect(elements == ["{\"a\":\"x, y\"}", "[1,2]", "\"s]\"", "3"])
    }

    @Test func minifierMatchesTheReferenceOnEverySampleDayFile() throws {
        let folder = URL(fileURLWithPath: TestSupport.sampleFolder)
        let files = try #require(FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "json" }
        #expect(files.count > 100)
        for file in files {
            let data = try Data(contentsOf: file)
            let sliced = data.withUnsafeBytes { JSONSlicer($0) }
            let reference = Self.referenceMinify(Array(data))
            #expect(sliced.bytes == reference.bytes, "\(file.lastPathComponent)")
            #expect(sliced.isComplete == reference.complete)
            // Every element decodes on its own.
            for range in sliced.elements {
                #expect((try? JSONSerialization.jsonObject(with: Data(sliced.bytes[range]), options: .fragmentsAllowed)) != nil)
            }
        }
    }
}

/// Reply counts after an export import: declared counts kept, missing or short ones raised to the replies archived.
@Suite struct ReplyCountTests {
    static func replyCounts(_ archive: Archive) throws -> [String: Int] {
        try archive.pool.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT ts, reply_count, flags FROM message ORDER BY ts")
            var result: [String: Int] = [:]
            for row in rows where (row["flags"] as Int64) & MessageFlags.threadParent.rawValue != 0 {
                result[row["ts"]] = row["reply_count"]
            }
            return result
        }
    }

    @Test func parentsWithoutOrWithShortCountsAreRecountedOthersKeepTheirs() throws {
        // P1 declares nothing (old exports), P2 declares 1 but has 2 replies, P3 declares 5 (some replies not in
        // the export), the reply to 1700000099.000001 has no parent in the export.
        let day = """
            [
              {"type": "message", "user": "U1", "text": "p1", "ts": "1700000000.000001"},
              {"type": "message", "user": "U1", "text": "p2", "ts": "1700000000.000002",
               "thread_ts": "1700000000.000002", "reply_count": 1},
              {"type": "message", "user": "U1", "text": "p3", "ts": "1700000000.000003",
               "thread_ts": "1700000000.000003", "reply_count": 5},
              {"type": "message", "user": "U1", "text": "r1a", "ts": "1700000001.000001", "thread_ts": "1700000000.000001"},
              {"type": "message", "user": "U1", "text": "r1b", "ts": "1700000002.000001", "thread_ts": "1700000000.000001"},
              {"type": "message", "user": "U1", "text": "r2a", "ts": "1700000001.000002", "thread_ts": "1700000000.000002"},
              {"type": "message", "user": "U1", "text": "r2b", "ts": "1700000002.000002", "thread_ts": "1700000000.000002"},
              {"type": "message", "user": "U1", "text": "r3a", "ts": "1700000001.000003", "thread_ts": "1700000000.000003"},
              {"type": "message", "user": "U1", "text": "orphan", "ts": "1700000003.000001", "thread_ts": "1699999999.000001"}
            ]
            """
        let export = try TestSupport.minimalExport(days: ["2023-11-14": day])
        let archive = try TestSupport.makeArchive()
        let summary = try Importer(archive: archive).importExport(at: export.path)
        #expect(summary.messagesAdded == 9)
        let counts = try Self.replyCounts(archive)
        #expect(counts["1700000000.000001"] == 2)
        #expect(counts["1700000000.000002"] == 2)
        #expect(counts["1700000000.000003"] == 5)
        // Importing again (the conversation now has messages: recounted whole) changes nothing.
        let again = try Importer(archive: archive).importExport(at: export.path)
        #expect(again.messagesUnchanged == 9)
        #expect(try Self.replyCounts(archive) == counts)
    }

    @Test func checkListsOnlyThreadsThatNeedIt() {
        func message(_ ts: Int64, thread: Int64?, replies: Int64 = 0, conversation: Int64 = 1) -> PreparedMessage {
            PreparedMessage(
                conversationRowID: conversation, ts: "\(ts)", tsKey: ts, userID: nil, username: nil, subtype: nil,
                threadTS: nil, threadKey: thread, replyCount: replies, editedTS: nil, editedKey: 0, flags: 0, text: "",
                searchText: "", searchExtra: "", raw: "{}", hash: 0, reactions: [], files: [])
        }
        var check = ReplyCountCheck()
        check.note(message(10, thread: 10, replies: 1), .added)
        check.note(message(11, thread: 10), .added)  // as declared
        check.note(message(20, thread: 20, replies: 1), .added)
        check.note(message(21, thread: 20), .added)
        check.note(message(22, thread: 20), .added)  // one more than declared
        check.note(message(22, thread: 20), .updated)  // a revision: not another reply
        check.note(message(31, thread: 30), .added)  // parent not in this import
        check.note(message(41, thread: 40, conversation: 2), .unchanged)  // already archived
        check.note(message(50, thread: 50, replies: 2), .added)
        check.note(message(51, thread: 50), .added)
        check.note(message(50, thread: 50, replies: 1), .updated)  // a revision declares 1: all arrived
        check.note(message(52, thread: 50), .added)  // one more than the revision declares
        check.note(message(60, thread: 60, replies: 1), .added)
        check.note(message(61, thread: 60), .added)
        check.note(message(60, thread: 60, replies: 1), .updated)  // revised after its replies: not tracked
        check.note(message(70, thread: 70, replies: 3), .added)
        check.note(message(71, thread: 70), .added)  // fewer than declared: kept as declared
        #expect(check.threadsToRecount() == [1: [20, 30, 50, 60]])
    }
}

/// The writer's copies of bound strings (`BindArena`): each stays as it was until `reset()`, across chunks and for
/// strings larger than a chunk, round after round of reuse.
@Suite struct BindArenaTests {
    @Test func copiesStayIntactUntilReset() {
        let arena = BindArena()
        for round in 0..<3 {
            var copies: [(UnsafeBufferPointer<UInt8>, [UInt8])] = []
            for index in 0..<2_000 {
                // Short strings, empty ones, and now and then one longer than a chunk.
                let length = index % 500 == 7 ? 40_000 : (index * 37 + round) % 90
                let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index &+ round) }
                copies.append((bytes.withUnsafeBufferPointer { arena.copy($0) }, bytes))
            }
            for (copy, bytes) in copies {
                #expect(copy.count == bytes.count)
                #expect(Array(copy) == bytes)
            }
            arena.reset()
        }
    }
}

/// A value SQLite refuses to bind (past its length limit) stops the write with an error: with the bind's code
/// unchecked, the statement stepped with the value bound before, another message's.
@Suite struct RefusedBindTests {
    @Test(arguments: ["user", "text", "block"]) func aValueTooLongToBindThrows(field: String) throws {
        let archive = try TestSupport.makeArchive()
        func message(_ key: Int64, user: String, text: String) -> PreparedMessage {
            PreparedMessage(
                conversationRowID: 1, ts: "\(key).000000", tsKey: key * 1_000_000, userID: user, username: nil,
                subtype: nil, threadTS: nil, threadKey: nil, replyCount: 0, editedTS: nil, editedKey: 0, flags: 0,
                text: text, searchText: "", searchExtra: "", raw: "{}", hash: key, reactions: [], files: [])
        }
        let long = String(repeating: "x", count: 5_000)
        try archive.pool.write { db in
            try db.execute(
                sql: "INSERT INTO conversation (id, slack_id, kind, name) VALUES (1, 'C1', 'channel', 'general')")
            _ = sqlite3_limit(db.sqliteConnection, SQLITE_LIMIT_LENGTH, 4_000)
            var writer = try MessageWriter(db)
            var first = message(1_700_000_000, user: "U1", text: "hello")
            var second = message(
                1_700_000_100, user: field == "user" ? long : "U2", text: field == "text" ? long : "hi")
            if field == "block" {
                // Both point into their own block; the second block is longer than the limit.
                let base = writer.usePackedRaws([Array("{}".utf8), Array(long.utf8)])
                first.rawLocation = RawLocation(block: 0, offset: 0, length: 2)
                second.rawLocation = RawLocation(block: 1, offset: 0, length: 2)
                #expect(try writer.upsert([first], at: 0, rawBlockBase: base) == .added)
                #expect(throws: DatabaseError.self) { try writer.upsert([second], at: 0, rawBlockBase: base) }
            } else {
                #expect(try writer.upsert([first], at: 0) == .added)
                #expect(throws: DatabaseError.self) { try writer.upsert([second], at: 0) }
            }
            // What owns a writer's transaction stores its word counts before committing (`WordCounts`).
            try WordCounts.of(db).flush(db)
        }
        // (The error is caught inside the transaction here; an import rolls its transaction back.)
        let users = try archive.pool.read { db in try String.fetchAll(db, sql: "SELECT user_id FROM message") }
        let blocks = try archive.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM raw_block") }
        if field == "block" {
            #expect(blocks == 1, "the refused block is not stored with the first one's bytes")
        } else {
            #expect(users == ["U1"], "the refused message is not stored with the first one's values")
        }
    }
}
