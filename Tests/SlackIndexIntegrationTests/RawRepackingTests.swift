import CSlackZlib
import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// Blocks written before text slices are packed again by `upgrade` (`RawRepacking`): every message reads the same
/// before, half way and after; the old blocks go; a damaged one stays with the rows that point at it.
@Suite struct RawRepackingTests {
    /// The sample archive with its blocks rewritten as blocks of the old format (`RawBlocks.Format.fields`): each
    /// block's members whole (as the first packed archives stored them), deflated by zlib, a 4-byte length whose top
    /// byte is 0; in every other block `"ts"` and `"user"` are markers (1–7) as the blocks before slices had them. One
    /// message's JSON holds a byte that reads as a slice's marker in a new block (an old block could hold it); one row
    /// points outside its block and one has no location (damage).
    static func oldArchive() throws -> (path: String, damaged: Set<Int64>, oddID: Int64) {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("old-blocks.sqlite").path
        let archive = try Archive(path: path)
        _ = try Importer(archive: archive).importExport(at: TestSupport.sampleZip)
        let rows = try archive.pool.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT id, raw_block, ts, user_id FROM message WHERE raw_block IS NOT NULL ORDER BY id")
        }
        let ids: [Int64] = rows.map { $0["id"] }
        var jsons = try Self.jsons(archive, except: [])
        let oddID = ids[ids.count / 2]
        jsons[oddID] = try #require(jsons[oddID]).replacingOccurrences(of: "\"type\":\"", with: "\"type\":\"\u{E}")
        let damagedID = ids[ids.count * 2 / 3]
        let noLocationID = ids[ids.count * 2 / 3 + 1]
        var byBlock: [Int64: [Int64]] = [:]
        var fields: [Int64: RepeatedFields] = [:]
        for row in rows {
            byBlock[row["raw_block"], default: []].append(row["id"])
            fields[row["id"]] = RepeatedFields(text: "", ts: row["ts"], userID: row["user_id"], threadTS: nil)
        }
        try archive.pool.write { db in
            try db.execute(sql: "DELETE FROM raw_block")
            for (block, members) in byBlock.sorted(by: { $0.key < $1.key }) {
                let stored = members.map { id in
                    let json = Array((jsons[id] ?? "").utf8)
                    guard block % 2 == 0, let fields = fields[id] else { return (id, json) }
                    return (id, Self.markers(json, fields))
                }
                try Self.storeOldBlock(stored, in: db) { id, at in
                    id == damagedID ? Int64(Int32.max) << 32 : id == noLocationID ? nil : at
                }
            }
        }
        return (path, [damagedID, noLocationID], oddID)
    }

    /// `json` with its `"ts"` and `"user"` members replaced by their markers, as blocks before slices held them.
    static func markers(_ json: [UInt8], _ fields: RepeatedFields) -> [UInt8] {
        var json = json
        for marker in [RawElision.Marker.ts, .user] {
            guard let literal = RawElision.literal(marker, fields),
                let start = json.withUnsafeBytes({ RawElision.firstIndex(of: literal, in: $0) })
            else { continue }
            json.replaceSubrange(start..<(start + literal.count), with: [marker.rawValue])
        }
        return json
    }

    /// Stores `members`' JSON whole, one after another, as one block of the old format and points their rows at it;
    /// `location` may replace a row's packed location (damage).
    static func storeOldBlock(
        _ members: [(id: Int64, json: [UInt8])], in db: Database,
        location: (_ id: Int64, _ packed: Int64) -> Int64? = { $1 }
    ) throws {
        var text: [UInt8] = []
        var locations: [(id: Int64, at: Int64?)] = []
        for (id, json) in members {
            locations.append((id, location(id, RawLocation(block: 0, offset: text.count, length: json.count).packed)))
            text += json
        }
        try db.execute(sql: "INSERT INTO raw_block (data) VALUES (?)", arguments: [Data(Self.oldBlock(text))])
        let block = db.lastInsertedRowID
        for (id, at) in locations {
            try db.execute(
                sql: "UPDATE message SET raw_block = ?, raw_at = ? WHERE id = ?", arguments: [block, at, id])
        }
    }

    /// The stored form of a block before text slices: 4 bytes of length, then zlib at level 1.
    static func oldBlock(_ text: [UInt8]) -> [UInt8] {
        var compressed = [UInt8](repeating: 0, count: Int(compressBound(uLong(text.count))))
        var count = uLongf(compressed.count)
        guard compress2(&compressed, &count, text, uLong(text.count), 1) == Z_OK else { return [] }
        let length = UInt32(text.count)
        return (0..<4).map { UInt8(truncatingIfNeeded: length >> (8 * $0)) } + compressed.prefix(Int(count))
    }

    /// Every message's JSON but the damaged ones', by id.
    static func jsons(_ archive: Archive, except damaged: Set<Int64>) throws -> [Int64: String] {
        let ids = try archive.pool.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM message ORDER BY id") }
            .filter { !damaged.contains($0) }
        var out: [Int64: String] = [:]
        for start in stride(from: 0, to: ids.count, by: 500) {
            for (id, message) in try archive.store.rawMessages(ids: Array(ids[start..<min(start + 500, ids.count)])) {
                out[id] = message.json
            }
        }
        return out
    }

    static func blockCounts(_ pool: DatabasePool) throws -> (old: Int, new: Int) {
        try pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM raw_block WHERE substr(data, 4, 1) = x'00'") ?? -1,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM raw_block WHERE substr(data, 4, 1) = x'01'") ?? -1
            )
        }
    }

    @Test func oldBlocksAreRepackedAndReadTheSame() throws {
        let (path, damaged, oddID) = try Self.oldArchive()
        let archive = try Archive(path: path)
        let before = try Self.jsons(archive, except: damaged)
        #expect(before.count > 2_900)
        #expect(before[oddID]?.contains("\u{E}") == true)
        let packedRows = try archive.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM message WHERE raw_block IS NOT NULL") ?? 0
        }
        let (oldBlocks, newBlocks) = try Self.blockCounts(archive.pool)
        #expect(oldBlocks > 200 && newBlocks == 0)

        // Two transactions of 500 rows, then a stop: read the same, the old blocks all still there.
        let half = try #require(try RawRepacking.repack(archive.pool, rowsPerTransaction: 500, transactions: 2))
        #expect(half.messages > 0 && half.messages + half.unreadable == 1_000)
        #expect(try Self.blockCounts(archive.pool).old == oldBlocks)
        #expect(try Self.blockCounts(archive.pool).new > 0)
        #expect(try Self.jsons(archive, except: damaged) == before)

        // The rest: everything reads the same; only the damaged rows' blocks are left in the old format.
        var reports: [(Int, Int)] = []
        let rest = try #require(
            try RawRepacking.repack(archive.pool, rowsPerTransaction: 500) { reports.append(($0, $1)) })
        #expect(rest.unreadable == 2)
        #expect(half.messages + rest.messages == packedRows - 2)
        #expect(try Self.jsons(archive, except: damaged) == before)
        let damagedBlocks = try archive.pool.read { db in
            try Int64.fetchAll(
                db, sql: "SELECT DISTINCT raw_block FROM message WHERE id IN (?, ?)",
                arguments: StatementArguments(Array(damaged)))
        }
        #expect(try Self.blockCounts(archive.pool).old == damagedBlocks.count)
        #expect(rest.bytesAfter < half.bytesBefore * 85 / 100, "\(half.bytesBefore) → \(rest.bytesAfter)")
        #expect(reports.count >= 3 && reports.last?.0 == reports.last?.1 && reports.last?.1 ?? 0 > 1_000)
        let oddInline = try archive.pool.read { db in
            try String.fetchOne(
                db, sql: "SELECT raw FROM message WHERE id = ? AND raw_block IS NULL", arguments: [oddID])
        }
        #expect(oddInline == before[oddID], "a member holding a slice marker's byte goes inline")
        for block in damagedBlocks {
            #expect(try archive.pool.read { db in
                try Bool.fetchOne(
                    db, sql: "SELECT substr(data, 4, 1) = x'00' FROM raw_block WHERE id = ?", arguments: [block])
            } == true)
        }

        // Again: nothing moves but the damaged row is reported again; an archive without old blocks has nothing.
        let again = try #require(try RawRepacking.repack(archive.pool))
        #expect(again.messages == 0 && again.unreadable == 2)
        let fresh = try TestSupport.makeArchive()
        _ = try Importer(archive: fresh).importExport(at: TestSupport.sampleZip)
        #expect(try RawRepacking.repack(fresh.pool) == nil)
    }

    /// An older slackindex importing into an archive this version wrote leaves old blocks after new ones: here the rows
    /// of every third block move to old blocks written after all the others. Repacking moves exactly those rows and
    /// leaves the new blocks below them as they are, none of their rows called unreadable; the rows of a damaged block
    /// among those (2 bytes: neither format) are.
    @Test func newBlocksBelowOldOnesAreLeftAsTheyAre() throws {
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.sampleZip)
        let before = try Self.jsons(archive, except: [])
        let moved = try archive.pool.write { db -> Int in
            let rows = try Row.fetchAll(
                db, sql: "SELECT id, raw_block FROM message WHERE raw_block % 3 = 0 ORDER BY raw_block, id")
            var byBlock: [Int64: [Int64]] = [:]
            for row in rows { byBlock[row["raw_block"], default: []].append(row["id"]) }
            for (block, members) in byBlock.sorted(by: { $0.key < $1.key }) {
                try db.execute(sql: "DELETE FROM raw_block WHERE id = ?", arguments: [block])
                try Self.storeOldBlock(members.map { ($0, Array((before[$0] ?? "").utf8)) }, in: db)
            }
            return rows.count
        }
        let damagedIDs = try archive.pool.write { db -> Set<Int64> in
            let block = try #require(
                try Int64.fetchOne(db, sql: "SELECT min(raw_block) FROM message WHERE raw_block % 3 = 1"))
            try db.execute(sql: "UPDATE raw_block SET data = x'0102' WHERE id = ?", arguments: [block])
            return try Set(Int64.fetchAll(db, sql: "SELECT id FROM message WHERE raw_block = ?", arguments: [block]))
        }
        let (oldBlocks, newBlocks) = try Self.blockCounts(archive.pool)
        #expect(moved > 500 && oldBlocks > 50 && newBlocks > 100 && !damagedIDs.isEmpty)
        let lowestOld = try archive.pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT min(id) FROM raw_block WHERE substr(data, 4, 1) = x'00'")
        }
        #expect(try archive.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT max(id) FROM raw_block WHERE substr(data, 4, 1) = x'01'")
        } ?? 0 < lowestOld ?? 0, "the new blocks all lie below the old ones")
        let readable = before.filter { !damagedIDs.contains($0.key) }
        #expect(try Self.jsons(archive, except: damagedIDs) == readable)

        var reports: [(Int, Int)] = []
        let summary = try #require(
            try RawRepacking.repack(archive.pool, rowsPerTransaction: 500) { reports.append(($0, $1)) })
        #expect(summary.unreadable == damagedIDs.count && summary.messages == moved)
        let total = moved + damagedIDs.count
        #expect(reports.last.map { $0 == (total, total) } == true, "\(reports)")
        #expect(try Self.blockCounts(archive.pool).old == 0)
        #expect(try Self.jsons(archive, except: damagedIDs) == readable)
        #expect(try RawRepacking.repack(archive.pool) == nil)
    }

    /// `upgrade` repacks, says so, gives the space back and exits 2 for the messages it could not read; run again,
    /// it reports them again but has nothing to move, so it does not rewrite the file.
    @Test func upgradeRepacksAndReportsTheDamagedMessages() throws {
        let (path, damaged, _) = try Self.oldArchive()
        let run = try CLITests.run(["--db", path, "upgrade"])
        #expect(run.status == 2, "\(run.stderr)")
        #expect(run.stderr.contains("Repacked the stored JSON of "), "\(run.stderr)")
        #expect(run.stderr.contains("2 message(s) were left as they were"), "\(run.stderr)")
        #expect(run.stdout.contains("is up to date ("), "\(run.stdout)")
        #expect(try Self.blockCounts(Archive(path: path).pool).old >= 1)
        let again = try CLITests.run(["--db", path, "upgrade"])
        #expect(again.status == 2, "\(again.stderr)")
        #expect(!again.stderr.contains("Repacked") && !again.stderr.contains("Upgraded"), "\(again.stderr)")
        #expect(again.stderr.contains("2 message(s) were left as they were"), "\(again.stderr)")
        #expect(again.stdout == "The archive at \(path) is up to date.\n", "\(again.stdout)")
        #expect(damaged.count == 2)
    }
}
