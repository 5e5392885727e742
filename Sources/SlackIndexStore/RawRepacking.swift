import Foundation
import GRDB

/// Blocks written before text slices (`RawBlocks.Format.fields`) packed again with them, for `upgrade`.
///
/// Not a migration: the old blocks stay readable, so read-only commands need not wait for an upgrade, and an import
/// into an older archive does not first repack all of it. Each piece of rows is its own transaction (stopping loses
/// nothing; the next run finds what is left by the blocks' format), and the old blocks are deleted once no row points
/// at them.
enum RawRepacking {
    typealias Summary = RepackSummary

    /// Repacks the messages held in blocks of the old format, `rowsPerTransaction` rows at a time in id order (the
    /// table's order), each old block's messages among them packed again together; nil when there are none.
    ///
    /// - Parameters:
    ///   - transactions: at most this many (tests stop it half way); the old blocks are deleted only after the last.
    ///   - progress: messages done and to do, after each transaction.
    /// - Complexity: O(n) in the rows up to the last old block, read once (those of new blocks below it are skipped);
    ///   the rows of old blocks rewritten once.
    static func repack(
        _ writer: some DatabaseWriter, rowsPerTransaction: Int = 32_768, transactions: Int = .max,
        progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) throws -> Summary? {
        // On the writer's connection: a pool's readers map the file, and this scan would make the whole table
        // resident (1M messages: 617 MB peak RSS, against 129 MB through the writer's page cache).
        let found = try writer.write { db -> OldBlocks? in
            // The last block with the old format byte (one pass over the blocks: ~0.1 s at 1M, also when there are
            // none), then the new blocks below it: there are some only when an older slackindex imported into an
            // archive this version wrote. Their rows are not repacked (nor called unreadable).
            guard let last = try Int64.fetchOne(db, sql: "SELECT max(id) FROM raw_block WHERE \(oldFormat)") else {
                return nil
            }
            let newBelow = try Set(
                Int64.fetchCursor(
                    db, sql: "SELECT id FROM raw_block WHERE id < ? AND \(newFormat)", arguments: [last]))
            var count = 0
            if newBelow.isEmpty {
                count = try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM message WHERE raw_block <= ?", arguments: [last]) ?? 0
            } else {
                let groups = try Row.fetchCursor(
                    db, sql: "SELECT raw_block, count(*) AS n FROM message WHERE raw_block <= ? GROUP BY raw_block",
                    arguments: [last])
                while let group = try groups.next() {
                    if !newBelow.contains(group["raw_block"]) { count += group["n"] as Int }
                }
            }
            return OldBlocks(last: last, newBelow: newBelow, rows: count, bytes: try blockBytes(db))
        }
        guard let found else { return nil }
        var summary = Summary(messages: 0, unreadable: 0, bytesBefore: found.bytes, bytesAfter: found.bytes)
        var after = Int64.min
        var finished = false
        for _ in 0..<transactions {
            let last = try writer.write { db in
                try repackRows(after: after, in: found, limit: rowsPerTransaction, summary: &summary, db)
            }
            guard let last else {
                finished = true
                break
            }
            after = last
            progress(summary.messages + summary.unreadable, found.rows)
        }
        try writer.write { db in
            if finished {
                // The old blocks no row points at any more (one pass over the rows, not one per block).
                try db.execute(
                    sql: """
                        DELETE FROM raw_block WHERE id <= ?1 AND \(oldFormat)
                            AND id NOT IN (SELECT raw_block FROM message WHERE raw_block <= ?1)
                        """,
                    arguments: [found.last])
            }
            summary.bytesAfter = try blockBytes(db)
        }
        return summary
    }

    /// Where the rows to repack are: in blocks up to `last` but those of `newBelow`.
    private struct OldBlocks {
        /// The last block in the old format.
        var last: Int64
        /// Blocks in the new format below `last`.
        var newBelow: Set<Int64>
        /// The messages in the old blocks (the damaged among them too).
        var rows: Int
        /// The bytes of all blocks.
        var bytes: Int64
    }

    /// Blocks in the old format (`RawBlocks.Format.fields`): their fourth byte (the top byte of a 4-byte length) is 0.
    private static let oldFormat = "substr(data, 4, 1) = x'00'"
    /// Blocks in the current format (`RawBlocks.Format.slices`); a block in neither is damaged.
    private static let newFormat = "substr(data, 4, 1) = x'01'"

    private static func blockBytes(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT coalesce(sum(length(data)), 0) FROM raw_block") ?? 0
    }

    /// Repacks the rows after `after` (up to `limit` of them read, in id order) whose block is an old one; returns the
    /// last row id read, or nil when there are none.
    private static func repackRows(
        after: Int64, in old: OldBlocks, limit: Int, summary: inout Summary, _ db: Database
    ) throws -> Int64? {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT id, raw_block, raw_at, text, ts, user_id, thread_ts FROM message
                WHERE id > ? AND raw_block <= ? ORDER BY id LIMIT ?
                """,
            arguments: [after, old.last, limit])
        guard let last = rows.last else { return nil }
        let read = try db.cachedStatement(sql: "SELECT data FROM raw_block WHERE id = ?")
        let update = try db.cachedStatement(sql: "UPDATE message SET raw_block = ?, raw_at = ? WHERE id = ?")
        // Each old block's rows in this piece, in id order (which is ts order within a block: one conversation's day).
        var groups: [Int64: [(id: Int64, json: String, fields: RepeatedFields)]] = [:]
        var order: [Int64] = []
        var inflated: [Int64: RawBlocks.Inflated] = [:]
        // Blocks missing or damaged: tried once per piece, not once per row.
        var damaged: Set<Int64> = []
        for row in rows {
            let block: Int64 = row["raw_block"]
            if old.newBelow.contains(block) { continue }
            let fields = RepeatedFields(
                text: row["text"], ts: row["ts"], userID: row["user_id"], threadTS: row["thread_ts"])
            if inflated[block] == nil && !damaged.contains(block) {
                if let stored = try Data.fetchOne(read, arguments: [block]),
                    let text = RawBlocks.inflate([UInt8](stored))
                {
                    inflated[block] = text
                } else {
                    damaged.insert(block)
                }
            }
            // A damaged row may lack its location (NULL `raw_at`): read as optional, counted as unreadable.
            let packed: Int64? = row["raw_at"]
            guard let text = inflated[block], text.format == .fields, let packed,
                let location = RawLocation(block: block, packed: packed),
                let json = RawBlocks.slice(text, location, fields: fields)
            else {
                summary.unreadable += 1
                continue
            }
            if groups[block] == nil { order.append(block) }
            groups[block, default: []].append((row["id"], json, fields))
        }
        for block in order {
            guard let members = groups[block] else { continue }
            var blocks: [[UInt8]] = []
            let locations = RawBlocks.pack(members.lazy.map { ($0.json, $0.fields) }, into: &blocks)
            let blockIDs = try RawBlocks.store(blocks, in: db)
            for (member, location) in zip(members, locations) {
                // A member that stays unpacked now (it holds a byte that reads as a slice's marker) goes inline.
                if let location {
                    try update.execute(arguments: [blockIDs[location.block], location.packed, member.id])
                } else {
                    try db.execute(
                        sql: "UPDATE message SET raw = ?, raw_block = NULL, raw_at = NULL WHERE id = ?",
                        arguments: [member.json, member.id])
                }
                summary.messages += 1
            }
        }
        return last["id"]
    }
}

/// What repacking old blocks did (`Archive.repackOldBlocks`).
package struct RepackSummary: Sendable, Equatable {
    /// Messages whose JSON moved: to new blocks, or inline when it holds a byte a new block would read as a marker.
    package var messages: Int
    /// Messages left in their old block: their JSON could not be read back (a damaged block or row).
    package var unreadable: Int
    /// The blocks' stored bytes before and after.
    package var bytesBefore: Int64
    package var bytesAfter: Int64
}

extension SQLiteArchive {
    /// Packs the JSON held in blocks written before text slices again, with them (`RawRepacking`); nil when there
    /// were none. `upgrade` runs it; the archive reads the same either way.
    package func repackOldBlocks(progress: (_ done: Int, _ total: Int) -> Void) throws -> RepackSummary? {
        try RawRepacking.repack(pool, progress: progress)
    }
}
