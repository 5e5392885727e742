import Foundation
import GRDB
import Testing

@testable import SlackIndex

/// The import's write path: transactions spanning several batches, checkpoints on their own thread, and the
/// minifier that feeds it.
@Suite struct BulkWriteTests {
    @Test func smallTransactionsGiveTheSameArchiveAndLeaveNoWAL() throws {
        let reference = try TestSupport.makeArchive()
        let expected = try Importer(archive: reference).importExport(at: TestSupport.sampleFolder)
        let archive = try TestSupport.makeArchive()
        // Batches of 40 messages, a commit every 100: many transactions, commits in the middle of a day.
        let summary = try Importer(archive: archive, batchSize: 40, commitMessages: 100)
            .importExport(at: TestSupport.sampleFolder)
        #expect(summary.messagesAdded == expected.messagesAdded)
        #expect(summary.messagesAdded >= 3_000)
        #expect(try ImportTests.dump(archive) == ImportTests.dump(reference))
        try archive.pool.write { db in
            try db.execute(sql: "INSERT INTO message_fts (message_fts) VALUES ('integrity-check')")
        }
        let walSize = (try? FileManager.default.attributesOfItem(atPath: archive.path + "-wal")[.size] as? Int) ?? 0
        #expect(walSize == 0)
        // Automatic checkpoints are back on after the import.
        let autocheckpoint = try archive.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") }
        #expect(autocheckpoint == 1000)
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
