import Foundation
import GRDB
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore

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
        #expect(RawElision.restore(member[...], Self.fields) == raw)
    }

    /// The model: for any JSON-like string and any fields (literals present once, twice, nowhere, overlapping,
    /// marker bytes and NULs included), restoring what was packed gives back the same bytes.
    @Test(arguments: [1, 2, 3, 4]) func restoringAlwaysGivesBackTheSameBytes(seed: UInt64) throws {
        var rng = SeededGenerator(seed: seed)
        let texts = ["", "hi", "a/b", "é", "<x>", "\"", "\\", "\u{0}", "\u{1}", "\u{7}", "😀", "\n", "\u{2029}", "ts"]
        let values = ["1.2", "U1", "", "\u{3}", "1656893510.000290", "\"", "a\"b"]
        var cut = 0
        var unpacked = 0
        for _ in 0..<3_000 {
            let text = (0..<Int.random(in: 0..<4, using: &rng)).map { _ in texts.randomElement(using: &rng) ?? "" }
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
                pieces.append(String(decoding: RawElision.literal(escaping.marker, fields) ?? [], as: UTF8.self))
            }
            let raw = (0..<Int.random(in: 0..<12, using: &rng)).map { _ in pieces.randomElement(using: &rng) ?? "" }
                .joined()
            guard let member = Self.member(raw, fields) else {
                #expect(raw.utf8.contains { (1...7).contains($0) }, "only JSON holding a marker byte stays unpacked")
                unpacked += 1
                continue
            }
            if member.count < raw.utf8.count { cut += 1 }
            #expect(RawElision.restore(member[...], fields) == raw, "\(raw.debugDescription) \(fields)")
        }
        #expect(cut > 600, "fields were cut in many of them")
        #expect(unpacked > 100)
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
        #expect(RawElision.restore([UInt8(ascii: "{"), 6, UInt8(ascii: "}")][...], fields) == nil)
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
            let raws = try archive.rawMessages(ids: Array(ids.values))
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
        let (members, textCut, tsCut) = try archive.pool.read { db in
            var members = 0
            var textCut = 0
            var tsCut = 0
            for row in try Row.fetchAll(db, sql: "SELECT raw_block, raw_at FROM message WHERE text != ''") {
                let block = try #require(try Data.fetchOne(
                    db, sql: "SELECT data FROM raw_block WHERE id = ?", arguments: [row["raw_block"] as Int64]))
                let text = try #require(RawBlocks.inflate([UInt8](block)))
                let location = try #require(RawLocation(block: row["raw_block"], packed: row["raw_at"]))
                let member = try #require(RawBlocks.member(text, location))
                members += 1
                if member.contains(where: { (1...4).contains($0) }) { textCut += 1 }
                if member.contains(5) { tsCut += 1 }
            }
            return (members, textCut, tsCut)
        }
        #expect(members > 2_500)
        #expect(Double(textCut) >= Double(members) * 0.99, "\(textCut) of \(members) texts cut")
        #expect(tsCut == members)
    }
}
