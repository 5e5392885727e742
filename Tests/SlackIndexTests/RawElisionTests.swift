import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// Packed JSON without the fields its row repeats (`RawElision`): what is read back must be byte for byte what was
/// packed, whatever the JSON and the fields are, and the fields must actually be cut where a known writer wrote them.
@Suite struct RawElisionTests {
    static let fields = RepeatedFields(
        text: "Café/😀 \"q\" \\ <a&b>\n\u{1}\u{2028}", ts: "1656893510.000290", userID: "U0GRUR77DFB",
        threadTS: "1656893000.000100")

    /// The text as four writers escape it, written out by hand (the oracle is not the code under test).
    static let escapedText: [(RawElision.Escaping, String)] = [
        (.slackExport, #""text":"Caf\u00e9\/\ud83d\ude00 \"q\" \\ <a&b>\n\u0001\u2028""#),
        (.slackAPI, #""text":"Café\/😀 \"q\" \\ <a&b>\n\u0001"# + "\u{2028}\""),
        (.plain, #""text":"Café/😀 \"q\" \\ <a&b>\n\u0001"# + "\u{2028}\""),
        (.go, #""text":"Café/😀 \"q\" \\ \u003ca\u0026b\u003e\n\u0001\u2028""#),
    ]

    /// What a block holds for `raw`; nil when it stays unpacked.
    static func member(_ raw: String, _ fields: RepeatedFields) -> [UInt8]? {
        var elider = RawElision.Elider()
        var out: [UInt8] = []
        return elider.elide(raw, fields, into: &out) ? out : nil
    }

    /// Each writer's escaping of the text is recognised and cut, as are `ts`, `user` and `thread_ts`; reading puts
    /// back the same bytes.
    @Test(arguments: 0..<4) func eachWritersJSONIsCutAndRestored(writer: Int) throws {
        let (escaping, text) = Self.escapedText[writer]
        let raw = #"{"type":"message",\#(text),"user":"U0GRUR77DFB","ts":"1656893510.000290","#
            + #""thread_ts":"1656893000.000100","reactions":[{"name":"+1","users":["U0GRUR77DFB"]}]}"#
        #expect(RawElision.literal(escaping.marker, Self.fields) == Array(text.utf8))
        let member = try #require(Self.member(raw, Self.fields))
        let markers = member.filter { (1...7).contains($0) }
        #expect(markers.sorted() == [escaping.marker.rawValue, 5, 6, 7], "text, ts, user and thread_ts cut")
        #expect(!String(decoding: member, as: UTF8.self).contains("1656893510.000290"))
        #expect(RawElision.restore(member[...], Self.fields, slices: true) == raw)
    }

    /// Slack's rich-text blocks repeat the text in pieces: each piece longer than its slice is cut (as the JSON escaped
    /// the text), keys and short strings stay, and reading the member puts the same bytes back; read as a block
    /// written before slices, the same member is not the JSON (the format decides how a member is read).
    @Test(arguments: 0..<4) func blockPiecesOfTheTextAreSliced(writer: Int) throws {
        let (escaping, text) = Self.escapedText[writer]
        // The escaped text's pieces as a rich_text block holds them: the text before the quote, and the rest.
        let body = String(text.dropFirst(8).dropLast())
        let split = try #require(body.range(of: #" \"q\""#))
        let (head, tail) = (String(body[..<split.lowerBound]), String(body[split.lowerBound...]))
        let raw = #"{"type":"message",\#(text),"ts":"1656893510.000290","blocks":[{"type":"rich_text","#
            + #""block_id":"Q25BU","elements":[{"type":"rich_text_section","elements":[{"type":"text","text":"#
            + #""\#(head)"},{"type":"text","text":"\#(tail)"},{"type":"user","user_id":"U0GRUR77DFB"}]}]}]}"#
        let member = try #require(Self.member(raw, Self.fields))
        let packed = String(decoding: member, as: UTF8.self)
        #expect(member.filter { $0 == escaping.sliceMarker }.count == 2, "\(packed.debugDescription)")
        #expect(!member.contains { (14...17).contains($0) && $0 != escaping.sliceMarker })
        #expect(packed.contains(#""type":"rich_text_section""#) && packed.contains(#""block_id":"Q25BU""#))
        #expect(!packed.contains(head) && !packed.contains(tail))
        #expect(RawElision.restore(member[...], Self.fields, slices: true) == raw)
        #expect(RawElision.restore(member[...], Self.fields, slices: false) != raw)
        // Without the text cut (here: the row's text differs) nothing is sliced.
        var other = Self.fields
        other.text = "something else entirely"
        let unsliced = try #require(Self.member(raw, other))
        #expect(!unsliced.contains { (14...17).contains($0) })
        #expect(RawElision.restore(unsliced[...], other, slices: true) == raw)
    }

    /// A slice that does not fit the row's text, or is not written whole, is damage (nil), never other bytes; in a
    /// block written before slices, bytes 14–17 are the JSON's own.
    @Test func damagedSlicesAreRefusedAndOldBlocksReadTheirBytes() throws {
        let fields = RepeatedFields(text: "hello there, world", ts: "1.2", userID: nil, threadTS: nil)
        func restore(_ member: String, slices: Bool = true) -> String? {
            RawElision.restore(Array(member.utf8)[...], fields, slices: slices)
        }
        #expect(restore("[\"\u{10}6,5\"]") == "[\"there\"]")
        #expect(restore("[\"\u{10}0,18\"]") == "[\"hello there, world\"]")
        for damaged in ["\u{10}0,19", "\u{10}19,0", "\u{10}6", "\u{10}6,", "\u{10},5", "\u{10}", "\u{10}6;5",
            "\u{10}99999999999,1", "\u{10}0,0000000005"] {
            #expect(restore("[\"" + damaged + "\"]") == nil, "\(damaged.debugDescription)")
        }
        // After the text's own marker (plain escaping, as the slices): the same answers.
        #expect(restore("{\u{3},\"x\":\"\u{10}6,5\"}") == #"{"text":"hello there, world","x":"there"}"#)
        #expect(restore("{\u{3},\"x\":\"\u{10}6,5\",\"y\":\"\u{10}0,19\"}") == nil)
        let quoted = RepeatedFields(text: #"say "hi" now"#, ts: "1.2", userID: nil, threadTS: nil)
        #expect(
            RawElision.restore(Array("{\u{3},\"x\":\"\u{10}4,6\"}".utf8)[...], quoted, slices: true)
                == #"{"text":"say \"hi\" now","x":"\"hi\""}"#)
        // A slice in another escaping than the text's marker: its own escaping's bytes (Slack's exports write `\/`).
        let slashed = RepeatedFields(text: "a/b é", ts: "1.2", userID: nil, threadTS: nil)
        #expect(
            RawElision.restore(Array("{\u{1},\"x\":\"\u{10}0,3\"}".utf8)[...], slashed, slices: true)
                == #"{"text":"a\/b \u00e9","x":"a/b"}"#)
        let old = "[\"\u{10}6,5\u{E}\"]"
        #expect(restore(old, slices: false) == old)
        // Keys and strings no longer than their slice stay as they are.
        let kept = #"{"text":"hello there, world","x":{"hello there":"there"}}"#
        #expect(Self.member(kept, fields) == Array("{\u{1},\"x\":{\"hello there\":\"there\"}}".utf8))
        let block = RawBlocks.Inflated(bytes: Array(old.utf8), format: .fields)
        #expect(RawBlocks.slice(block, RawLocation(block: 1, offset: 0, length: old.utf8.count), fields: fields) == old)
        // Such JSON is not packed any more: in a new block those bytes would read as slices.
        #expect(Self.member(old, fields) == nil)
    }

    /// The model: for any JSON-like string and any fields (literals present once, twice, nowhere, overlapping,
    /// marker bytes and NULs included), restoring what was packed gives back the same bytes.
    @Test(arguments: [1, 2, 3, 4]) func restoringAlwaysGivesBackTheSameBytes(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        let texts = ["", "hi", "a/b", "é", "<x>", "\"", "\\", "\u{0}", "\u{1}", "\u{7}", "😀", "\n", "\u{2029}", "ts"]
        let values = ["1.2", "U1", "", "\u{3}", "1656893510.000290", "\"", "a\"b"]
        var cut = 0
        var sliced = 0
        var unpacked = 0
        for _ in 0..<3_000 {
            let text = (0..<Int.random(in: 0..<8, using: &rng)).map { _ in texts.randomElement(using: &rng) ?? "" }
                .joined()
            let fields = RepeatedFields(
                text: text, ts: values.randomElement(using: &rng) ?? "",
                userID: Bool.random(using: &rng) ? nil : values.randomElement(using: &rng),
                threadTS: Bool.random(using: &rng) ? nil : values.randomElement(using: &rng))
            var pieces = [
                "{", "}", ",", "\"type\":\"message\"", "\"ts\":\"\(fields.ts)\"", "\"user\":\"\(fields.userID ?? "U9")\"",
                "\"thread_ts\":\"\(fields.threadTS ?? "")\"", "\u{1}", "\u{5}", "\u{0}", "\"x\":[", "]", "é",
            ]
            for escaping in RawElision.Escaping.allCases {
                let literal = RawElision.literal(escaping.marker, fields) ?? []
                pieces.append(String(decoding: literal, as: UTF8.self))
                // A string holding a stretch of the escaped text (a slice, when long enough), or a key holding it.
                let body = literal.dropFirst(8).dropLast()
                let start = Int.random(in: 0...body.count, using: &rng)
                let length = Int.random(in: 0...40, using: &rng)
                let piece = String(decoding: body.dropFirst(start).prefix(length), as: UTF8.self)
                pieces += ["\"" + piece + "\"", Bool.random(using: &rng) ? "\"" + piece + "\":" : "\"" + piece]
            }
            pieces.append(["\u{E}", "\u{11}", "7,", "\\"].randomElement(using: &rng) ?? "")
            let raw = (0..<Int.random(in: 0..<12, using: &rng)).map { _ in pieces.randomElement(using: &rng) ?? "" }
                .joined()
            guard let member = Self.member(raw, fields) else {
                #expect(
                    raw.utf8.contains { (1...7).contains($0) || (14...17).contains($0) },
                    "only JSON holding a marker byte stays unpacked")
                unpacked += 1
                continue
            }
            if member.count < raw.utf8.count { cut += 1 }
            if member.contains(where: { (14...17).contains($0) }) { sliced += 1 }
            #expect(RawElision.restore(member[...], fields, slices: true) == raw, "\(raw.debugDescription) \(fields)")
        }
        #expect(cut > 600, "fields were cut in many of them")
        #expect(sliced > 100, "strings were sliced in many of them")
        #expect(unpacked > 100)
    }

    /// Slice offsets and lengths are written in decimal after what the buffer holds.
    @Test func decimalsAreAppendedAsWritten() {
        for value in Array(0...1_100) + [9_999, 10_000, 123_456_789, Int(Int32.max), Int.max] {
            var out: [UInt8] = [7, 8]
            RawElision.appendDecimal(value, to: &out)
            #expect(out == [7, 8] + Array(String(value).utf8), "\(value)")
            #expect(RawElision.decimalCount(value) == String(value).count)
        }
    }

    /// The word-at-a-time check agrees with a byte-at-a-time one for every byte value at every position.
    @Test func markerBytesAreFoundAtAnyPosition() {
        for length in 1...24 {
            for position in 0..<length {
                for value in 0...255 {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = UInt8(value)
                    let expected = (1...7).contains(value) || (14...17).contains(value)
                    let found = bytes.withUnsafeBufferPointer { RawElision.holdsMarker($0) }
                    #expect(found == expected, "\(value) at \(position) of \(length)")
                }
            }
        }
        #expect([UInt8]().withUnsafeBufferPointer { RawElision.holdsMarker($0) } == false)
    }

    /// A text's kind (which escapings write it differently) as a byte-at-a-time reading gives it, for texts whose
    /// special bytes fall anywhere in or across the eight-byte words the check passes over.
    @Test(arguments: [1, 2] as [UInt64]) func textKindsMatchAByteAtATimeReading(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        let pieces = ["a", "a", "a", "a", "a", "a", "/", "<", ">", "&", "é", "\u{2028}", "\u{0}", "😀", "\n"]
        for _ in 0..<3_000 {
            let text = (0..<Int.random(in: 0..<30, using: &rng)).map { _ in pieces.randomElement(using: &rng) ?? "" }
                .joined()
            let kind = RawElision.TextKind(text)
            let bytes = Array(text.utf8)
            #expect(kind.nul == bytes.contains(0), "\(text.debugDescription)")
            #expect(kind.slash == bytes.contains(UInt8(ascii: "/")), "\(text.debugDescription)")
            #expect(kind.nonASCII == bytes.contains { $0 >= 0x80 }, "\(text.debugDescription)")
            let goSpecial = bytes.contains { "<>&".utf8.contains($0) || $0 == 0xE2 }
            #expect(kind.goSpecial == goSpecial, "\(text.debugDescription)")
        }
    }

    /// A string closes at the first quote after an even run of backslashes, as a walk that skips each escaped byte
    /// finds it.
    @Test(arguments: [1, 2] as [UInt64]) func stringsCloseWhereAWalkEndsThem(seed: UInt64) {
        var rng = SeededGenerator(seed: seed)
        for _ in 0..<2_000 {
            // Mostly plain bytes, so that runs of eight without a quote or backslash occur too.
            let alphabet: [UInt8] =
                [UInt8(ascii: "\""), UInt8(ascii: "\\")] + Array(repeating: UInt8(ascii: "a"), count: 10)
            let json: [UInt8] = [UInt8(ascii: "\"")] + (0..<Int.random(in: 0..<40, using: &rng)).map { _ in
                alphabet.randomElement(using: &rng) ?? 0
            }
            var walk: Int? = 1
            while let end = walk, end < json.count, json[end] != UInt8(ascii: "\"") {
                walk = end + (json[end] == UInt8(ascii: "\\") ? 2 : 1)
            }
            let expected = walk.flatMap { $0 < json.count ? $0 : nil }
            #expect(json.withUnsafeBufferPointer { RawElision.closingQuote(in: $0, after: 0) } == expected, "\(json)")
        }
    }

    /// JSON that holds a marker byte stays unpacked; with fields holding a NUL, it is packed as it is.
    @Test func markersAndNULsLeaveTheJSONAsItIs() {
        let raw = #"{"text":"hi","ts":"1.2"}"#
        let fields = RepeatedFields(text: "hi", ts: "1.2", userID: nil, threadTS: nil)
        #expect((Self.member(raw, fields)?.count ?? .max) < raw.utf8.count)
        #expect(Self.member(raw + "\u{3}", fields) == nil)
        var blocks: [[UInt8]] = []
        let packed = RawBlocks.pack([(raw + "\u{3}", fields), (raw, nil), (raw + "\u{7}", nil)], into: &blocks)
        #expect(packed.map { $0 == nil } == [true, false, true], "JSON holding a marker byte stays unpacked")
        var nul = fields
        nul.ts = "1.2\u{0}"
        #expect(Self.member(raw, nul) == Array(raw.utf8))
        // A marker naming a field the row lacks is damage, not a guess.
        #expect(RawElision.restore([UInt8(ascii: "{"), 6, UInt8(ascii: "}")][...], fields, slices: true) == nil)
    }

    /// The sample export's and sync pages' messages come back from the archive byte for byte as the importer
    /// minified them, and nearly all of them had their text, ts and user cut.
    @Test func theArchiveGivesBackTheImportersBytes() throws {
        let archive = try TestSupport.makeArchive()
        _ = try Importer(archive: archive).importExport(at: TestSupport.sampleZip)
        let folders = try FileManager.default.contentsOfDirectory(atPath: TestSupport.sampleFolder)
            .filter { !$0.hasSuffix(".json") }
        var compared = 0
        for folder in folders {
            let ids = try RawBlocksTests.messageIDsByTS(in: archive, folder: folder)
            let raws = try archive.store.rawMessages(ids: Array(ids.values))
            let directory = TestSupport.sampleFolder + "/" + folder
            for day in try FileManager.default.contentsOfDirectory(atPath: directory) where day.hasSuffix(".json") {
                let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/" + day)))
                let sliced = data.withUnsafeBytes { JSONSlicer($0) }
                for range in sliced.elements {
                    let raw = JSONSlicer.text(of: range, in: sliced.bytes, removing: "user_profile")
                    let object = try JSONSerialization.jsonObject(with: Data(raw.utf8)) as? [String: Any]
                    guard let ts = object?["ts"] as? String, let id = ids[ts], let stored = raws[id]?.json,
                        object?["subtype"] == nil
                    else { continue }
                    #expect(stored == raw, "\(folder)/\(day) \(ts)")
                    compared += 1
                }
            }
        }
        #expect(compared > 2_000)
        let (members, textCut, tsCut, sliced) = try archive.pool.read { db in
            var members = 0
            var textCut = 0
            var tsCut = 0
            var sliced = 0
            for row in try Row.fetchAll(db, sql: "SELECT raw_block, raw_at FROM message WHERE text != ''") {
                let block = try #require(try Data.fetchOne(
                    db, sql: "SELECT data FROM raw_block WHERE id = ?", arguments: [row["raw_block"] as Int64]))
                let text = try #require(RawBlocks.inflate([UInt8](block)))
                let location = try #require(RawLocation(block: row["raw_block"], packed: row["raw_at"]))
                let member = try #require(RawBlocks.member(text.bytes, location))
                members += 1
                if member.contains(where: { (1...4).contains($0) }) { textCut += 1 }
                if member.contains(5) { tsCut += 1 }
                if member.contains(where: { (14...17).contains($0) }) { sliced += 1 }
            }
            return (members, textCut, tsCut, sliced)
        }
        #expect(members > 2_500)
        #expect(Double(textCut) >= Double(members) * 0.99, "\(textCut) of \(members) texts cut")
        #expect(tsCut == members)
        // Messages with rich-text blocks (2,102 of the sample's) repeat their text there: 2,024 of 2,968 were sliced.
        #expect(Double(sliced) >= Double(members) * 0.6, "\(sliced) of \(members) members hold a slice")
    }
}
