import CSlackDeflate
import Foundation
import GRDB

/// Where a message's raw JSON lies in a packed block: its byte range in the block's inflated text.
package struct RawLocation: Sendable, Equatable {
    /// The block, as an index into the batch's `rawBlocks` (import) or the stored block's row id (archive).
    package var block: Int
    package var offset: Int
    package var length: Int

    /// The stored form (`message.raw_at`): offset and length in one integer.
    var packed: Int64 { Int64(offset) << 32 | Int64(length) }

    init(block: Int, offset: Int, length: Int) {
        self.block = block
        self.offset = offset
        self.length = length
    }

    /// The location `raw_at` encodes in block `block`, or nil when the value is out of range (a damaged row).
    init?(block: Int64, packed: Int64) {
        guard block > 0, packed >= 0, let block = Int(exactly: block) else { return nil }
        self.init(block: block, offset: Int(packed >> 32), length: Int(packed & 0xFFFF_FFFF))
    }
}

/// Messages' raw JSON packed into compressed blocks: the largest part of an archive (~560 of 1,213 MiB for 1M
/// messages) is the JSON Slack wrote, kept whole so that `serve` answers with it.
///
/// One message at a time, zlib saves about half and measured ~14 µs per message on this machine (a fresh stream
/// per message); the messages of one conversation's day deflated together save ~71% and cost ~3–4 µs per message,
/// paid on the import's reader thread. Blocks hold at most `capacity` bytes of JSON so that reading one message
/// inflates at most ~32 KB (~0.1 ms); a history page of 50 touches one to three blocks.
///
/// Stored form: 3 bytes of inflated length (little-endian) and a byte of `Format`, then a zlib stream (RFC 1950;
/// written and read by libdeflate since 2026-11-26, by zlib before: either reads the other's).
package enum RawBlocks {
    /// What a block's members may hold: the stored form's fourth byte (blocks written before slices have 0 there,
    /// the top byte of a 4-byte length that never reached 16 MB).
    enum Format: UInt8 {
        /// Markers for the fields the row repeats (`RawElision.Marker`).
        case fields = 0
        /// Those, and slices of the text (`RawElision`): every block written since 2026-11-26.
        case slices = 1
    }

    /// A block's JSON text and how its members are to be read.
    struct Inflated: Equatable {
        var bytes: [UInt8]
        var format: Format
    }

    /// Most bytes of JSON in one block; a message larger than this, or empty, stays unpacked (stored as it is).
    static let capacity = 32 * 1024
    /// The largest inflated block accepted when reading (a damaged length field must not allocate gigabytes).
    static let maximumInflated = 16 * 1024 * 1024

    /// Packs `raws` into blocks of at most `capacity` bytes each (in order), appending them to `blocks`; returns each
    /// raw's location (`block` indexes `blocks`), or nil for a raw that stays unpacked.
    static func pack(_ raws: some Sequence<String>, into blocks: inout [[UInt8]]) -> [RawLocation?] {
        pack(raws.lazy.map { ($0, nil) }, into: &blocks)
    }

    /// Packs each raw, without the fields its row repeats when `fields` are given (`RawElision`), into blocks of at
    /// most `capacity` bytes each (in order), appending them to `blocks`; returns each raw's location (`block`
    /// indexes `blocks`), or nil for a raw that stays unpacked.
    ///
    /// - Complexity: O(n) in the bytes packed.
    static func pack(
        _ raws: some Sequence<(raw: String, fields: RepeatedFields?)>, into blocks: inout [[UInt8]]
    ) -> [RawLocation?] {
        // One compressor for the call's blocks (a day file's), from the pool; nil when none can be allocated (no
        // memory): the messages then stay unpacked.
        DeflateCoders.fastCompressors.with { compressor in pack(raws, into: &blocks, with: compressor) }
    }

    private static func pack(
        _ raws: some Sequence<(raw: String, fields: RepeatedFields?)>, into blocks: inout [[UInt8]],
        with compressor: OpaquePointer?
    ) -> [RawLocation?] {
        var locations: [RawLocation?] = []
        var pending: [UInt8] = []
        // Where the pending block's messages start in `locations`.
        var groupStart = 0
        // The deflate output buffer, reused for the call's blocks (`deflate`).
        var scratch: [UInt8] = []
        func flush() {
            guard !pending.isEmpty else { return }
            if let compressor, let block = deflate(pending, with: compressor, scratch: &scratch) {
                blocks.append(block)
            } else {
                for index in groupStart..<locations.count { locations[index] = nil }
            }
            pending.removeAll(keepingCapacity: true)
        }
        var member: [UInt8] = []
        var elider = RawElision.Elider()
        for (raw, fields) in raws {
            let count = raw.utf8.count
            // Empty JSON (never a message) stays inline: it would point into a block that may never be written. So
            // does JSON holding a byte a block reads as a marker (`RawElision`).
            guard count > 0, count <= capacity else {
                locations.append(nil)
                continue
            }
            member.removeAll(keepingCapacity: true)
            if let fields {
                guard elider.elide(raw, fields, into: &member) else {
                    locations.append(nil)
                    continue
                }
            } else {
                var raw = raw
                guard !raw.withUTF8(RawElision.holdsMarker) else {
                    locations.append(nil)
                    continue
                }
                member.append(contentsOf: raw.utf8)
            }
            if pending.count + member.count > capacity { flush() }
            if pending.isEmpty { groupStart = locations.count }
            locations.append(RawLocation(block: blocks.count, offset: pending.count, length: member.count))
            pending.append(contentsOf: member)
        }
        flush()
        return locations
    }

    /// Packs the raw JSON of `messages[start...]` into blocks appended to `blocks` and points each message's
    /// `rawLocation` there (a batch's day file or a page: one conversation, in order).
    ///
    /// The messages are read and updated in place: a slice passed `inout` (`&messages[start...]`) copied every
    /// message of it twice, and mapping the messages themselves copied each once (a copy retains a dozen strings).
    /// A packed message lets its `raw` go: the block holds it, and the messages wait in the import's queue.
    static func pack(_ messages: inout [PreparedMessage], from start: Int = 0, into blocks: inout [[UInt8]]) {
        guard start < messages.count else { return }
        let locations = messages.withUnsafeBufferPointer { buffer in
            pack(
                (start..<buffer.count).lazy.map { index in
                    (buffer[index].raw, RepeatedFields(
                        text: buffer[index].text, ts: buffer[index].ts, userID: buffer[index].userID,
                        threadTS: buffer[index].threadTS))
                }, into: &blocks)
        }
        for (index, location) in zip(start..., locations) where location != nil {
            messages[index].rawLocation = location
            messages[index].raw = ""
        }
    }

    /// Stores `blocks` as new `raw_block` rows, in order; returns their ids (the rows' `raw_block`). For rewrites of
    /// stored rows (migration v12's packing, `upgrade`'s repacking); an import's writer numbers its batch's blocks
    /// itself (`MessageWriter`).
    static func store(_ blocks: [[UInt8]], in db: Database) throws -> [Int64] {
        let insert = try db.cachedStatement(sql: "INSERT INTO raw_block (data) VALUES (?)")
        return try blocks.map { block in
            try insert.execute(arguments: [Data(block)])
            return db.lastInsertedRowID
        }
    }

    /// The block's JSON text: nil when the stored bytes are not a block this code wrote (damaged archive).
    ///
    /// The length field must match what the stream inflates to, and the stream's Adler-32 must match its bytes.
    static func inflate(_ stored: [UInt8]) -> Inflated? {
        guard stored.count >= 4, let format = Format(rawValue: stored[3]) else { return nil }
        let size = Int(stored[0]) | Int(stored[1]) << 8 | Int(stored[2]) << 16
        guard size > 0, size <= maximumInflated else { return nil }
        return DeflateCoders.decompressors.with { decompressor -> Inflated? in
            guard let decompressor else { return nil }
            var output = [UInt8](repeating: 0, count: size)
            let result = stored.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { out in
                    guard let base = input.baseAddress else { return LIBDEFLATE_BAD_DATA }
                    // Without an actual-size argument libdeflate fails unless the stream fills `out` exactly.
                    return libdeflate_zlib_decompress(
                        decompressor, base + 4, input.count - 4, out.baseAddress, size, nil)
                }
            }
            return result == LIBDEFLATE_SUCCESS ? Inflated(bytes: output, format: format) : nil
        }
    }

    /// One message's packed JSON in its block's text; nil when the location lies outside it.
    static func member(_ text: [UInt8], _ location: RawLocation) -> ArraySlice<UInt8>? {
        guard location.offset >= 0, location.length >= 0, location.offset <= text.count,
            location.length <= text.count - location.offset
        else { return nil }
        return text[location.offset..<(location.offset + location.length)]
    }

    /// One message's JSON from its block, the fields its row repeats put back; nil when the location lies outside the
    /// block or the member names a field the row lacks or a slice outside its text.
    static func slice(_ block: Inflated, _ location: RawLocation, fields: RepeatedFields? = nil) -> String? {
        guard let member = member(block.bytes, location) else { return nil }
        guard let fields else { return String(decoding: member, as: UTF8.self) }
        return RawElision.restore(member, fields, slices: block.format == .slices)
    }

    /// The stored form of `text`: its length and `Format.slices`, then a zlib stream at libdeflate's level 1.
    ///
    /// libdeflate's level 1 (its window is always 32 KB: a block fits) instead of zlib's level 1 with a stream per
    /// block: the 1M export's 96,298 blocks (402 MB of JSON) took 8.4–10.5 s to deflate with zlib and 2.4–3.1 s with
    /// libdeflate, 4% smaller (124.5 → 119.9 MB); libdeflate's levels 6 and 9 saved 4–5% more for twice the time.
    /// Nil when libdeflate reports no output (not expected: the output buffer is its own bound for the input).
    /// - Parameter scratch: the output buffer, sized for the worst case; kept by the caller across blocks (allocating
    ///   and zero-filling one per block was 34 M instructions per 100,000 messages).
    private static func deflate(_ text: [UInt8], with compressor: OpaquePointer, scratch: inout [UInt8]) -> [UInt8]? {
        let bound = libdeflate_zlib_compress_bound(compressor, text.count)
        if scratch.count < 4 + bound { scratch = [UInt8](repeating: 0, count: 4 + bound) }
        let count = UInt32(text.count)
        scratch[0] = UInt8(truncatingIfNeeded: count)
        scratch[1] = UInt8(truncatingIfNeeded: count >> 8)
        scratch[2] = UInt8(truncatingIfNeeded: count >> 16)
        scratch[3] = Format.slices.rawValue
        let written = text.withUnsafeBufferPointer { input in
            scratch.withUnsafeMutableBufferPointer { out in
                guard let base = out.baseAddress else { return 0 }
                return libdeflate_zlib_compress(compressor, input.baseAddress, input.count, base + 4, bound)
            }
        }
        guard written > 0 else { return nil }
        // A copy of the bytes used: the buffer is sized for the worst case (more than the input), and a batch holds
        // its blocks until written (12.6 MB of unused capacity at the 3M import's peak, heaptrack).
        return Array(scratch[..<(4 + written)])
    }
}

/// A message's stored JSON could not be read back: its packed block is missing or damaged.
package struct ArchiveDamage: Error, CustomStringConvertible {
    package var description: String
}

/// Reads messages' JSON, inline or packed, inflating each block once per reader (a page's messages share blocks).
struct RawBlockReader {
    private var cachedID: Int64?
    private var cachedBlock = RawBlocks.Inflated(bytes: [], format: .fields)

    /// The JSON of a row with columns `raw`, `raw_block` and `raw_at`, and the fields it repeats (`text`, `ts`,
    /// `user_id`, `thread_ts`).
    mutating func raw(
        inline: String, block: Int64?, at packed: Int64?, fields: RepeatedFields, in db: Database
    ) throws -> String {
        guard let block else { return inline }
        guard let packed, let location = RawLocation(block: block, packed: packed) else {
            throw ArchiveDamage(description: "a message's stored JSON has an invalid location (block \(block))")
        }
        if cachedID != block {
            // Cached: compiling it per block was measurable on serve's pages (as the latest-reply check was).
            let statement = try db.cachedStatement(sql: "SELECT data FROM raw_block WHERE id = ?")
            guard let stored = try Data.fetchOne(statement, arguments: [block]) else {
                throw ArchiveDamage(description: "block \(block) of stored message JSON is missing")
            }
            guard let inflated = RawBlocks.inflate([UInt8](stored)) else {
                throw ArchiveDamage(description: "block \(block) of stored message JSON is damaged")
            }
            cachedID = block
            cachedBlock = inflated
        }
        guard let json = RawBlocks.slice(cachedBlock, location, fields: fields) else {
            throw ArchiveDamage(
                description: "a message's stored JSON lies outside its block \(block), or names a field its row lacks "
                    + "or a slice outside its text")
        }
        return json
    }
}
