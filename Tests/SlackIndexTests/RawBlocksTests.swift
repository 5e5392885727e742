import CSlackTokenizer
import CSlackZlib
import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// Messages' raw JSON packed into compressed blocks (`RawBlocks`) and `search_text` stored only where it differs
/// from `text` (`SearchTextColumn`): what `serve` answers must be byte for byte what was imported.
@Suite struct RawBlocksTests {
    /// Random JSON-like strings: ASCII, accents, CJK, emoji; empty ones; some larger than a block.
    static func randomRaws(count: Int, seed: UInt64) -> [String] {
        var rng = SeededGenerator(seed: seed)
        let pieces = ["{\"type\":\"message\",\"text\":\"", "héllo", "東京オフィス", "👍🏽", "\\n", "\"}", "a", " "]
        return (0..<count).map { _ in
            let length: Int
            switch Int.random(in: 0..<20, using: &rng) {
            case 0: length = 0
            case 1: length = Int.random(in: 5_000..<12_000, using: &rng)
            default: length = Int.random(in: 1..<200, using: &rng)
            }
            return (0..<length).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &rng)] }.joined()
        }
    }

    /// The model: every packed string reads back equal; blocks never exceed their capacity; only strings larger than
    /// a block stay unpacked.
    @Test(arguments: [1, 2, 3]) func everyPackedRawReadsBackEqual(seed: UInt64) throws {
        let raws = Self.randomRaws(count: 600, seed: seed)
        var blocks: [[UInt8]] = [[1, 2, 3]]  // an earlier batch's block: indices continue after it
        let locations = RawBlocks.pack(raws, into: &blocks)
        #expect(locations.count == raws.count)
        let inflated = blocks.dropFirst().map { RawBlocks.inflate($0) }
        // A block holds no more memory than its bytes (a batch keeps its blocks until they are written).
        // (512: malloc's rounding on macOS; the deflate buffer kept was larger than the input, ~3 times the bytes.)
        #expect(blocks.dropFirst().allSatisfy { $0.capacity <= $0.count + 512 })
        for text in inflated {
            let text = try #require(text)
            #expect(text.bytes.count <= RawBlocks.capacity && text.format == .slices)
        }
        for (raw, location) in zip(raws, locations) {
            guard let location else {
                #expect(raw.isEmpty || raw.utf8.count > RawBlocks.capacity)
                continue
            }
            #expect(location.block >= 1)
            let text = try #require(inflated[location.block - 1])
            #expect(RawBlocks.slice(text, location) == raw)
            let stored = try #require(RawLocation(block: Int64(location.block), packed: location.packed))
            #expect(stored == location)
        }
        #expect(zip(raws, locations).contains { $1 == nil && !$0.isEmpty }, "some strings are larger than a block")
        #expect(zip(raws, locations).contains { $1 == nil && $0.isEmpty }, "some strings are empty")
        // Only empty strings: no block, nothing located.
        var none: [[UInt8]] = []
        #expect(RawBlocks.pack(["", ""], into: &none) == [nil, nil] && none.isEmpty)
    }

    /// A batch packs each day file's messages as they are added (`packRaws(from:)`): the messages before `start` keep
    /// their locations, the others point into the blocks appended, and each reads back whole, its repeated fields
    /// (text, ts, user, thread) restored from the message's own columns; a packed message keeps no copy of its JSON.
    @Test func aBatchPacksEachFilesMessagesInPlace() throws {
        func message(_ index: Int) -> PreparedMessage {
            let ts = "17000000\(index).000100"
            let text = "message \(index) héllo"
            let raw = #"{"type":"message","text":"\#(text)","user":"U\#(index)","ts":"\#(ts)","n":\#(index)}"#
            return PreparedMessage(
                conversationRowID: 1, ts: ts, tsKey: Int64(index), userID: "U\(index)", username: nil, subtype: nil,
                threadTS: nil, threadKey: nil, replyCount: 0, editedTS: nil, editedKey: 0, flags: 0, text: text,
                searchText: "", searchExtra: "", raw: raw, hash: 0, reactions: [], files: [])
        }
        let raws = (0..<7).map { message($0).raw }
        var batch = ImportBatch(messages: (0..<3).map(message))
        batch.packRaws(from: 0)
        let firstBlocks = batch.rawBlocks.count
        let firstLocations = batch.messages.map(\.rawLocation)
        #expect(firstBlocks == 1 && firstLocations.allSatisfy { $0?.block == 0 })
        batch.messages += (3..<7).map(message)
        batch.packRaws(from: 3)
        #expect(batch.messages.prefix(3).map(\.rawLocation) == firstLocations, "earlier messages keep their places")
        #expect(batch.rawBlocks.count == firstBlocks + 1)
        for message in batch.messages {
            let location = try #require(message.rawLocation)
            #expect(location.block == (message.tsKey < 3 ? 0 : 1))
            let text = try #require(RawBlocks.inflate(batch.rawBlocks[location.block]))
            let fields = RepeatedFields(
                text: message.text, ts: message.ts, userID: message.userID, threadTS: message.threadTS)
            #expect(RawBlocks.slice(text, location, fields: fields) == raws[Int(message.tsKey)])
            #expect(message.raw.isEmpty, "a packed message lets its JSON go")
        }
        // Nothing past the end: no block, nothing changed.
        batch.packRaws(from: batch.messages.count)
        #expect(batch.rawBlocks.count == firstBlocks + 1)
    }

    /// Blocks are zlib streams whichever library wrote them: archives packed by zlib (before libdeflate) read back,
    /// and zlib reads what is packed now.
    @Test(arguments: [1, 2]) func blocksAreZlibStreamsBothWays(seed: UInt64) throws {
        let raws = Self.randomRaws(count: 120, seed: seed).filter { !$0.isEmpty && $0.utf8.count < 1_000 }
        let text = Array(raws.joined().utf8)
        // As the earlier versions stored a block: its length, then zlib level 1.
        var compressed = [UInt8](repeating: 0, count: Int(compressBound(uLong(text.count))))
        var compressedCount = uLongf(compressed.count)
        #expect(compress2(&compressed, &compressedCount, text, uLong(text.count), 1) == Z_OK)
        let count = UInt32(text.count)
        let lengthField = (0..<4).map { UInt8(truncatingIfNeeded: count >> (8 * $0)) }
        let stored = lengthField + compressed.prefix(Int(compressedCount))
        #expect(RawBlocks.inflate(stored) == RawBlocks.Inflated(bytes: text, format: .fields))

        var blocks: [[UInt8]] = []
        let locations = RawBlocks.pack(raws, into: &blocks)
        #expect(locations.allSatisfy { $0 != nil })
        for block in blocks {
            // Three bytes of length, then the format.
            let size = Int(block[0]) | Int(block[1]) << 8 | Int(block[2]) << 16
            #expect(block[3] == RawBlocks.Format.slices.rawValue)
            var inflated = [UInt8](repeating: 0, count: size)
            var inflatedCount = uLongf(size)
            let body = Array(block.dropFirst(4))
            #expect(uncompress(&inflated, &inflatedCount, body, uLong(body.count)) == Z_OK)
            #expect(Int(inflatedCount) == size)
            #expect(RawBlocks.inflate(block) == RawBlocks.Inflated(bytes: inflated, format: .slices))
        }
    }

    /// Damaged blocks and locations read as nil: no trap, no huge allocation.
    @Test func damagedBlocksAndLocationsAreRefused() throws {
        var blocks: [[UInt8]] = []
        let raws = Self.randomRaws(count: 80, seed: 9).filter { $0.utf8.count < 1_000 }
        let locations = RawBlocks.pack(raws, into: &blocks)
        let block = try #require(blocks.first)
        #expect(RawBlocks.inflate(block) != nil)
        for length in 0..<block.count { #expect(RawBlocks.inflate(Array(block.prefix(length))) == nil) }
        var rng = SeededGenerator(seed: 4)
        for _ in 0..<300 {
            var damaged = block
            let position = Int.random(in: 4..<damaged.count, using: &rng)
            damaged[position] ^= UInt8.random(in: 1...255, using: &rng)
            // The stream's Adler-32 refuses a changed stream; a changed byte must never pass as other text.
            if let text = RawBlocks.inflate(damaged) { #expect(text == RawBlocks.inflate(block)) }
        }
        #expect(RawBlocks.inflate([0xFF, 0xFF, 0xFF, 0x7F] + block.dropFirst(4)) == nil, "an unknown format is refused")
        #expect(RawBlocks.inflate(Array(block.prefix(3)) + [2] + block.dropFirst(4)) == nil)
        #expect(RawBlocks.inflate([0, 0, 0, 0] + block.dropFirst(4)) == nil)
        // The length field must be what the stream inflates to: one byte more or less is refused.
        let size = UInt32(block[0]) | UInt32(block[1]) << 8 | UInt32(block[2]) << 16
        for wrong in [size - 1, size + 1] {
            let field = (0..<3).map { UInt8(truncatingIfNeeded: wrong >> (8 * $0)) } + [block[3]]
            #expect(RawBlocks.inflate(field + block.dropFirst(4)) == nil, "length \(wrong) for \(size) bytes")
        }
        let text = try #require(RawBlocks.inflate(block))
        let first = try #require(locations.first ?? nil)
        #expect(RawBlocks.slice(text, RawLocation(block: 0, offset: text.bytes.count, length: 1)) == nil)
        #expect(RawBlocks.slice(text, RawLocation(block: 0, offset: first.offset, length: text.bytes.count + 1)) == nil)
        #expect(RawBlocks.slice(text, RawLocation(block: 0, offset: -1, length: 1)) == nil)
        #expect(RawLocation(block: 0, packed: 5) == nil)
        #expect(RawLocation(block: 3, packed: -1) == nil)
    }

    @Test func searchTextIsStoredOnlyWhereItDiffers() {
        #expect(SearchTextColumn.stored("hello", text: "hello") == "")
        #expect(SearchTextColumn.stored("@alice hi", text: "<@U1> hi") == "@alice hi")
        #expect(SearchTextColumn.stored("", text: "<!subteam^S1>") == " ")
        #expect(SearchTextColumn.stored("", text: "") == "")
        #expect(SearchTextColumn.stored("caf\u{E9}", text: "cafe\u{301}") == "caf\u{E9}", "equivalent, not equal bytes")
        for (search, text) in [("hello", "hello"), ("@alice hi", "<@U1> hi"), ("", ""), ("x", "")] {
            let stored = SearchTextColumn.stored(search, text: text)
            #expect(SearchTextColumn.value(stored: stored, text: text).trimmingCharacters(in: .whitespaces) == search)
        }
    }

    /// Every message of the sample export comes back from the archive as the export's JSON (without the
    /// `user_profile` the user table keeps), compared as JSON values.
    @Test func theArchiveGivesBackEachMessageAsExported() throws {
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.sampleZip)
        let unpacked = try archive.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM message WHERE raw_block IS NULL OR raw != ''")
        }
        #expect(unpacked == 0, "every imported message is packed")
        let folders = try FileManager.default.contentsOfDirectory(atPath: TestSupport.sampleFolder)
            .filter { !$0.hasSuffix(".json") }
        var compared = 0
        for folder in folders {
            let objects = try APIFixture.exportMessages(folder: folder)
            let tss = objects.compactMap { $0["ts"] as? String }
            let unique = Set(tss.filter { ts in tss.filter { $0 == ts }.count == 1 })
            let ids = try Self.messageIDsByTS(in: archive, folder: folder)
            let raws = try archive.store.rawMessages(ids: Array(ids.values))
            for var object in objects {
                guard let ts = object["ts"] as? String, unique.contains(ts), object["subtype"] == nil,
                    let id = ids[ts]
                else { continue }
                object["user_profile"] = nil
                let json = try #require(raws[id]?.json)
                let stored = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? NSDictionary
                #expect(stored == object as NSDictionary, "\(folder)/\(ts)")
                compared += 1
            }
        }
        #expect(compared > 2_000)
    }

    /// Importing the same export again writes no block; an edit stores its JSON inline and is what is read.
    @Test func reimportsWriteNoBlocksAndEditsAreReadInline() throws {
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.sampleZip)
        func blockCount() throws -> Int {
            try archive.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM raw_block") ?? -1 }
        }
        let blocks = try blockCount()
        #expect(blocks > 0)
        let before = try ImportTests.dump(archive)
        _ = try Importer(archive: archive).importExport(at: TestSupport.sampleZip)
        #expect(try blockCount() == blocks)
        #expect(try ImportTests.dump(archive) == before)

        // The sample pages edit messages of the export: those rows keep their new JSON inline.
        _ = Importer(archive: archive).importPaths([TestSupport.samplePages])
        let edited = try archive.pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT id, raw FROM message WHERE raw_block IS NULL AND edited_key > 0 LIMIT 20")
        }
        #expect(!edited.isEmpty)
        let raws = try archive.store.rawMessages(ids: edited.map { $0["id"] })
        for row in edited {
            let raw: String = row["raw"]
            #expect(!raw.isEmpty && raws[row["id"]]?.json == raw)
        }
    }

    /// A newer export that edits a message: its packed copy in the batch is read back for the update, which stores
    /// exactly the new JSON inline (the batch keeps no other copy of it).
    @Test func anEditedMessageStoresItsNewJSONExactly() throws {
        let first = #"{"type":"message","user":"U1","text":"first version","ts":"1700000001.000100"}"#
        let other = #"{"type":"message","user":"U1","text":"unchanged","ts":"1700000002.000100"}"#
        let edited = #"{"type":"message","user":"U1","text":"second version \/ caf\u00e9","ts":"1700000001.000100","#
            + #""edited":{"user":"U1","ts":"1700000050.000000"},"extra":[1,2]}"#
        let archive = try TestSupport.makeArchive()
        let before = try TestSupport.minimalExport(days: ["2023-11-14": "[\(first),\(other)]"])
        _ = try Importer(archive: archive).importExport(at: before.path)
        let after = try TestSupport.minimalExport(days: ["2023-11-14": "[\(edited),\(other)]"])
        let summary = try Importer(archive: archive).importExport(at: after.path)
        #expect(summary.messagesUpdated == 1 && summary.messagesUnchanged == 1, "\(summary)")
        let rows = try archive.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, ts, raw, raw_block FROM message ORDER BY ts_key")
        }
        let raws = try archive.store.rawMessages(ids: rows.map { $0["id"] })
        #expect(rows.count == 2)
        for row in rows {
            let ts: String = row["ts"]
            let json = raws[row["id"]]?.json
            if ts == "1700000001.000100" {
                #expect(json == edited)
                #expect((row["raw"] as String) == edited && (row["raw_block"] as Int64?) == nil, "stored inline")
            } else {
                #expect(json == other)
            }
        }
    }

    /// Pages (sync, dumps) are packed a page at a time; their messages read back as JSON objects.
    @Test func pagesArePackedToo() throws {
        let archive = try TestSupport.makeArchive()
        let summary = Importer(archive: archive).importPaths([TestSupport.samplePages])
        #expect(summary.messagesAdded > 100 && summary.skippedFiles.isEmpty)
        let (packed, total) = try archive.pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM message WHERE raw_block IS NOT NULL AND raw = ''") ?? 0,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM message") ?? 0
            )
        }
        #expect(packed * 10 > total * 8, "\(packed) of \(total) packed (edits applied as updates stay inline)")
        let ids = try archive.pool.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM message LIMIT 400") }
        for (_, raw) in try archive.store.rawMessages(ids: ids) {
            #expect((try? JSONSerialization.jsonObject(with: Data(raw.json.utf8))) is [String: Any])
        }
    }

    /// The row ids of a conversation folder's messages, by ts.
    static func messageIDsByTS(in archive: Archive, folder: String) throws -> [String: Int64] {
        try archive.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT m.id, m.ts FROM message m JOIN conversation c ON c.id = m.conversation_id
                    WHERE c.folder = ?
                    """, arguments: [folder]
            ).reduce(into: [String: Int64]()) { $0[$1["ts"]] = $1["id"] }
        }
    }

    /// Back to the archive as v11 wrote it: JSON inline, `search_text` whole, no blocks, v12 not applied.
    static func downgradeToV11(_ path: String) throws {
        let archive = try Archive(path: path)
        let ids = try archive.pool.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM message") }
        var raws: [Int64: String] = [:]
        for start in stride(from: 0, to: ids.count, by: 500) {
            for (id, raw) in try archive.store.rawMessages(ids: Array(ids[start..<min(start + 500, ids.count)])) {
                raws[id] = raw.json
            }
        }
        try archive.pool.write { db in
            try TestSupport.undoSearchScope(db)
            for (id, raw) in raws {
                try db.execute(sql: "UPDATE message SET raw = ? WHERE id = ?", arguments: [raw, id])
            }
            try db.execute(
                sql: """
                    UPDATE message SET search_text = text WHERE search_text = '';
                    UPDATE message SET search_text = '' WHERE search_text = ' ';
                    ALTER TABLE message DROP COLUMN raw_block;
                    ALTER TABLE message DROP COLUMN raw_at;
                    DROP TABLE raw_block;
                    DELETE FROM grdb_migrations WHERE identifier = 'v12 packed raw JSON';
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
    }

    @Test func theMigrationPacksAnArchiveWrittenBeforeIt() throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("old.sqlite").path
        let before: [String]
        let equalSearchText: Int
        do {
            let archive = try Archive(path: path)
            _ = try Importer(archive: archive).importExport(at: TestSupport.sampleZip)
            _ = Importer(archive: archive).importPaths([TestSupport.samplePages])
            before = try ImportTests.dump(archive)
        }
        try Self.downgradeToV11(path)
        do {
            let old = try DatabaseQueue(path: path)
            equalSearchText = try old.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM message WHERE search_text = text AND text != ''") ?? 0
            }
            let inline = try old.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM message WHERE raw = ''") }
            #expect(equalSearchText > 1_000 && inline == 0)
            try old.close()
        }
        #expect(throws: StoreError.self) { try Archive(path: path, access: .readOnly) }
        let upgraded = try Archive(path: path)
        #expect(try ImportTests.dump(upgraded) == before)
        let (unpacked, elided) = try upgraded.pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM message WHERE raw_block IS NULL") ?? -1,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM message WHERE search_text = '' AND text != ''") ?? -1
            )
        }
        #expect(unpacked == 0, "sync-written rows are packed by the migration too")
        #expect(elided == equalSearchText)
        let pending = try upgraded.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM meta WHERE key = 'packing'")
        }
        #expect(pending == 0)
        let hits = try SearchEngine(archive: upgraded).search("deadlock")
        #expect(!hits.hits.isEmpty)
        #expect(hits.hits.allSatisfy { $0.snippet.lowercased().contains("deadlock") })
        try IndexOracle.expectExact(upgraded)
    }

    /// The rows are packed in transactions of a few thousand rows after the migration: stopped half way, the next
    /// write-open goes on where it stopped; reads give the same messages at every stage.
    @Test func packingAfterTheMigrationResumes() throws {
        let path = TestSupport.temporaryDirectory().appendingPathComponent("old.sqlite").path
        let before: [String]
        do {
            let archive = try Archive(path: path)
            _ = try Importer(archive: archive).importExport(at: TestSupport.sampleZip)
            before = try ImportTests.dump(archive)
        }
        try Self.downgradeToV11(path)
        do {
            // The migration and one transaction of 1,000 rows, then a stop.
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                guard slackindex_register_tokenizer(db.sqliteConnection) == 0 else { throw StoreError.needsUpgrade(path: path) }
            }
            let pool = try DatabasePool(path: path, configuration: configuration)
            try Migrations.migrator.migrate(pool)
            #expect(try Migrations.packPendingRows(pool, rowsPerTransaction: 1_000, transactions: 1))
            let (packed, position) = try pool.read { db in
                (
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM message WHERE raw_block IS NOT NULL") ?? 0,
                    try String.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'packing'")
                )
            }
            #expect(packed > 0 && packed <= 1_000)
            #expect(position.flatMap { Int64($0) } != nil)
            try pool.close()
        }
        #expect(try ImportTests.dump(Archive(path: path, access: .readOnly)) == before)
        let finished = try Archive(path: path)
        #expect(finished.store.upgradedOnOpen)
        #expect(try ImportTests.dump(finished) == before)
        let (unpacked, pending) = try finished.pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM message WHERE raw_block IS NULL") ?? -1,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM meta WHERE key = 'packing'") ?? -1
            )
        }
        #expect(unpacked == 0 && pending == 0)
        #expect(try Archive(path: path).store.upgradedOnOpen == false)
    }

    /// A damaged block is reported as damage (what `serve` turns into an error), never a crash or a wrong message.
    @Test func aDamagedBlockIsReportedNotServed() throws {
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.sampleZip)
        let first = try archive.pool.read { db in try Int64.fetchOne(db, sql: "SELECT min(id) FROM message") }
        let id = try #require(first)
        try archive.pool.write { db in
            try db.execute(
                sql: """
                    UPDATE raw_block SET data = substr(data, 1, 20)
                    WHERE id = (SELECT raw_block FROM message WHERE id = ?)
                    """, arguments: [id])
        }
        #expect(throws: ArchiveDamage.self) { try archive.store.rawMessages(ids: [id]) }
        try archive.pool.write { db in
            try db.execute(sql: "UPDATE message SET raw_at = -5 WHERE id = ?", arguments: [id])
        }
        #expect(throws: ArchiveDamage.self) { try archive.store.rawMessages(ids: [id]) }
        // A packed message whose JSON had its "user" cut, in a row that lost its user: damage, not a guess.
        let other = try archive.pool.read { db in
            try Int64.fetchOne(
                db, sql: "SELECT max(id) FROM message WHERE user_id IS NOT NULL AND raw_block IS NOT NULL")
        }
        let victim = try #require(other)
        #expect(try archive.store.rawMessages(ids: [victim])[victim]?.json.contains("\"user\":") == true)
        try archive.pool.write { db in
            try db.execute(sql: "UPDATE message SET user_id = NULL WHERE id = ?", arguments: [victim])
        }
        #expect(throws: ArchiveDamage.self) { try archive.store.rawMessages(ids: [victim]) }
    }
}
