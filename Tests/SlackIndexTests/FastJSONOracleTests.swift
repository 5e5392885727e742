import Foundation
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@testable import SlackIndexTestSupport

/// The fast message parser (`MessageRecord(json:)`) checked against the Codable reference it replaced
/// (`ReferenceMessage`, decoded by `JSONDecoder`), field by field, the way `LRUModelTests` checks the cache
/// against a model: on every message of `sample-data/` and on generated cases.
///
/// The rule: for every input `JSONDecoder` accepts as JSON, both decode it to the same fields or both refuse it.
/// The one deliberate difference is for inputs `JSONDecoder` refuses: the fast parser checks only strings and
/// brackets inside values it skips, so it may still read a message there
/// (`fastParserReadsSomeJSONThatJSONDecoderRefuses`).
@Suite struct FastJSONOracleTests {
    // MARK: - Sample data

    @Test func everySampleDayFileMessageMatchesReference() throws {
        let root = URL(fileURLWithPath: TestSupport.sampleFolder)
        var files: [URL] = []
        for folder in try FileManager.default.contentsOfDirectory(at: root, includingPropertiesForKeys: nil) {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue
            else { continue }
            files += try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "json" }
        }
        var checked = 0
        for url in files.sorted(by: { $0.path < $1.path }) {
            let sliced = try Data(contentsOf: url).withUnsafeBytes { JSONSlicer($0) }
            try #require(sliced.isArray && sliced.isComplete, "\(url.path)")
            checked += try Self.checkAll(sliced.elements, of: sliced.bytes, in: url.lastPathComponent)
        }
        #expect(files.count > 1_000)
        #expect(checked == TestSupport.sampleSummary["messages"] as? Int)
    }

    @Test func everySampleSyncPageMessageMatchesReference() throws {
        let root = URL(fileURLWithPath: TestSupport.samplePages)
        let pages = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.lastPathComponent.hasPrefix("page-") }
            .sorted { $0.path < $1.path }
        var checked = 0
        var revisions = 0
        for url in pages {
            let page = try Data(contentsOf: url).withUnsafeBytes { JSONSlicer($0) }
            var elements = page.elements
            if !page.isArray {
                // `{"ok": true, "messages": [...]}`, as `Importer.applyPage` reads it.
                let list = try #require(
                    JSONSlicer.valueRange(ofKey: "messages", in: page.bytes, object: 0..<page.bytes.count))
                elements = page.bytes[list].withUnsafeBytes { JSONSlicer($0) }.elements.map {
                    ($0.lowerBound + list.lowerBound)..<($0.upperBound + list.lowerBound)
                }
            }
            checked += try Self.checkAll(elements, of: page.bytes, in: url.lastPathComponent)
            // Where the importers used to find the inner message again by scanning, the parser's range agrees.
            for element in elements {
                let record = try page.bytes.withUnsafeBufferPointer {
                    try MessageRecord(json: UnsafeBufferPointer(rebasing: $0[element]))
                }
                guard record.subtype == "message_changed" else { continue }
                revisions += 1
                let inner = try #require(record.innerMessageRange)
                let scanned = JSONSlicer.valueRange(ofKey: "message", in: page.bytes, object: element)
                #expect(scanned == (element.lowerBound + inner.lowerBound)..<(element.lowerBound + inner.upperBound))
            }
        }
        // The generator's manifest counts what the pages hold.
        let manifest = try JSONSerialization.jsonObject(
            with: Data(contentsOf: root.appendingPathComponent("manifest.json")))
        let conversations = try #require((manifest as? [String: Any])?["conversations"] as? [[String: Any]])
        func total(_ key: String) -> Int { conversations.reduce(0) { $0 + ($1[key] as? Int ?? 0) } }
        #expect(checked == total("history_messages") + total("delta_events"))
        #expect(revisions == total("delta_edits"))
    }

    /// Decodes each element both ways and expects equal records; returns the number checked.
    private static func checkAll(_ elements: [Range<Int>], of bytes: [UInt8], in file: String) throws -> Int {
        try bytes.withUnsafeBufferPointer { buffer in
            for (index, range) in elements.enumerated() {
                let element = UnsafeBufferPointer(rebasing: buffer[range])
                let reference = try #require(CodableMessageReference.decode(element), "\(file) #\(index)")
                let fast = try #require(try? MessageRecord(json: element), "\(file) #\(index)")
                let problems =
                    differences(fast, reference) + rangeProblems(fast, in: element)
                    + profileProblems(fast, in: Array(element))
                #expect(problems.isEmpty, "\(file) #\(index): \(problems)")
            }
            return elements.count
        }
    }

    // MARK: - Generated cases

    static let seeds: [UInt64] = [1, 2, 3, 4, 5, 6, 7, 8]
    static let casesPerSeed = 2_500

    @Test(arguments: seeds)
    func generatedMessagesMatchReference(seed: UInt64) throws {
        var fuzzer = MessageJSONFuzzer(seed: seed)
        var tally = (decoded: 0, refusedByBoth: 0, notJSON: 0, readAnywayByFast: 0, revisions: 0)
        var failures = 0
        for index in 0..<Self.casesPerSeed {
            let bytes = fuzzer.next()
            let fast = bytes.withUnsafeBufferPointer { try? MessageRecord(json: $0) }
            let reference = CodableMessageReference.decode(bytes)
            let accepted = CodableMessageReference.isAcceptedJSON(bytes)
            var problems: [String] = []
            switch (fast, reference) {
            case (let fast?, let reference?):
                tally.decoded += 1
                if !fast.changedMessage.isEmpty { tally.revisions += 1 }
                problems = Self.differences(fast, reference)
                problems += bytes.withUnsafeBufferPointer { Self.rangeProblems(fast, in: $0) }
                problems += Self.profileProblems(minifying: bytes)
            case (.none, .none):
                tally.refusedByBoth += 1
                if !accepted { tally.notJSON += 1 }
            case (.none, .some):
                problems = ["the fast parser refused what the reference decoded"]
            case (.some, .none):
                // Deliberate: the fast parser does not validate the inside of values it skips. Only for
                // input JSONDecoder refuses as a whole; a JSON document the reference refuses must be refused.
                tally.readAnywayByFast += 1
                if accepted { problems = ["the fast parser read what the reference refused"] }
            }
            if !problems.isEmpty {
                failures += 1
                Issue.record("seed \(seed) case \(index): \(problems) in \(Self.show(bytes))")
                if failures == 5 { return }  // The first few divergences are the useful ones.
            }
        }
        // The generator reaches the outcomes that check something (one that only made garbage would check
        // nothing); input only the fast parser reads is rare and is checked by the next test.
        #expect(tally.decoded > Self.casesPerSeed / 2, "\(tally)")
        #expect(tally.revisions > 100, "\(tally)")
        #expect(tally.refusedByBoth > 50, "\(tally)")
        #expect(tally.notJSON > 50, "\(tally)")
    }

    /// Inputs where the decoders disagree on purpose, and why: `JSONDecoder` refuses them as documents, the fast
    /// parser reads the message because the broken part is inside a value it skips without validating (an unknown
    /// field, or a known one of the wrong type: `JSONCursor.skipValue()` checks only strings and brackets, and
    /// nests to 1024 where `JSONDecoder` stops at 512). The effect on an import: a message whose skipped fields
    /// are broken JSON is kept (with its raw text as it is) where the reference would have dropped it.
    @Test(arguments: [
        #"{"ts":"1.2","x":[1 2]}"#,
        #"{"ts":"1.2","user":[1 2]}"#,
        #"{"ts":"1.2","x":{"a" 1}}"#,
        #"{"ts":"1.2","x":[tru, nul]}"#,
        #"{"ts":"1.2","x":[+1, .5]}"#,
        #"{"ts":"1.2","x":[,,]}"#,
        #"{"ts":"1.2","x":"# + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "}",
    ])
    func fastParserReadsSomeJSONThatJSONDecoderRefuses(_ text: String) throws {
        let bytes = Array(text.utf8)
        #expect(!CodableMessageReference.isAcceptedJSON(bytes))
        #expect(CodableMessageReference.decode(bytes) == nil)
        let fast = try bytes.withUnsafeBufferPointer { try MessageRecord(json: $0) }
        #expect(fast.ts == "1.2")
    }

    /// Breaking the same JSON where the fast parser reads it (not in a skipped value) fails both.
    @Test(arguments: [
        #"{"ts":"1.2","pinned_to":["C1" "C2"]}"#, #"{"ts":tru}"#, #"{"ts":"1.2","reactions":[{"name" "x"}]}"#,
        #"{"ts":"1.2"} x"#, #"{"ts":"1.2""#, #"{"ts":"1.2",,"x":1}"#, #"["ts"]"#, #""#,
    ])
    func brokenFieldsTheFastParserReadsAreRefusedByBoth(_ text: String) {
        let bytes = Array(text.utf8)
        #expect(CodableMessageReference.decode(bytes) == nil)
        #expect(throws: (any Error).self) { try bytes.withUnsafeBufferPointer { try MessageRecord(json: $0) } }
    }

    // MARK: - The inner message's range

    @Test func innerMessageRangeCoversTheDecodedRevision() throws {
        // Whitespace, an escaped key, and a revision of a revision; the first `message` key wins.
        let text = #"""
            { "subtype" : "message_changed", "ts": "2.0",
              "mess\u0061ge" :  {"subtype":"message_changed","ts":"1.5","message":{"ts":"1.0","text":"v3"}} ,
              "message": {"ts": "9.9"} }
            """#
        let bytes = Array(text.utf8)
        let record = try bytes.withUnsafeBufferPointer { try MessageRecord(json: $0) }
        let range = try #require(record.innerMessageRange)
        #expect(String(decoding: bytes[range], as: UTF8.self).hasPrefix(#"{"subtype":"message_changed","ts":"1.5""#))
        #expect(bytes[range.upperBound - 1] == UInt8(ascii: "}"))
        #expect(record.changedMessage.first?.changedMessage.first?.text == "v3")
        #expect(bytes.withUnsafeBufferPointer { Self.rangeProblems(record, in: $0) } == [])
        let reference = try #require(CodableMessageReference.decode(bytes))
        #expect(Self.differences(record, reference) == [])

        // The byte scan the importers used before looked for a literal key, and found another object.
        let minified = Array(#"{"subtype":"message_changed","mess\u0061ge":{"ts":"1.0"},"message":{"ts":"9.9"}}"#.utf8)
        let decoded = try minified.withUnsafeBufferPointer { try MessageRecord(json: $0) }
        #expect(decoded.changedMessage.first?.ts == "1.0")
        #expect(CodableMessageReference.decode(minified)?.changedMessage.first?.ts == "1.0")
        let slice = { (range: Range<Int>?) in range.map { String(decoding: minified[$0], as: UTF8.self) } }
        let scanned = JSONSlicer.valueRange(ofKey: "message", in: minified, object: 0..<minified.count)
        #expect(slice(decoded.innerMessageRange) == #"{"ts":"1.0"}"#)
        #expect(slice(scanned) == #"{"ts":"9.9"}"#)

        // No range without a revision: another subtype, a message that is not an object, or one that cannot decode.
        for text in [
            #"{"subtype":"bot_message","message":{"ts":"1.0"}}"#, #"{"subtype":"message_changed","message":"x"}"#,
            #"{"subtype":"message_changed","message":{"\ud800":1}}"#,
        ] {
            let record = try Array(text.utf8).withUnsafeBufferPointer { try MessageRecord(json: $0) }
            #expect(record.innerMessageRange == nil, "\(text)")
            #expect(record.changedMessage.isEmpty, "\(text)")
        }
    }

    // MARK: - Comparison

    /// `MessageRecord`'s optional string fields, by name.
    static let messageStrings: [(String, any KeyPath<MessageRecord, String?> & Sendable)] = [
        ("type", \.type), ("subtype", \.subtype), ("ts", \.ts), ("user", \.user), ("botID", \.botID),
        ("username", \.username), ("threadTS", \.threadTS), ("editedTS", \.editedTS), ("editedUser", \.editedUser),
        ("blockText", \.blockText), ("deletedTS", \.deletedTS), ("channel", \.channel),
        ("profileHandle", \.profileHandle), ("profileRealName", \.profileRealName),
        ("profileDisplayName", \.profileDisplayName),
    ]
    /// `MessageRecord`'s other fields, compared one by one (`innerMessageRange` by `rangeProblems`, `profileMember`
    /// by `profileProblems`).
    static let otherMessageFields = [
        "text", "textRepaired", "replyCount", "isPinned", "reactions", "files", "attachments", "changedMessage", "innerMessageRange",
        "profileMember",
    ]
    /// `PreparedFile`'s optional string fields, by name (`size` is the other one).
    static let fileStrings: [(String, any KeyPath<PreparedFile, String?> & Sendable)] = [
        ("id", \.id), ("name", \.name), ("title", \.title), ("mimetype", \.mimetype), ("filetype", \.filetype),
        ("mode", \.mode), ("urlPrivate", \.urlPrivate), ("urlPrivateDownload", \.urlPrivateDownload),
        ("permalink", \.permalink),
    ]

    /// A field added to the records fails here until `differences` compares it.
    @Test func comparisonCoversEveryField() {
        let message = MessageRecord(
            text: "", reactions: [], files: [], attachments: [], isPinned: false, changedMessage: [])
        let messageFields = Mirror(reflecting: message).children.compactMap(\.label)
        #expect(Set(messageFields) == Set(Self.messageStrings.map(\.0) + Self.otherMessageFields))
        #expect(messageFields.count == Self.messageStrings.count + Self.otherMessageFields.count)
        let fileFields = Mirror(reflecting: PreparedFile()).children.compactMap(\.label)
        #expect(Set(fileFields) == Set(Self.fileStrings.map(\.0) + ["size"]))
        #expect(Mirror(reflecting: ReactionRecord(name: "", count: 0, users: [])).children.count == 3)
        #expect(Mirror(reflecting: AttachmentRecord(pieces: [], hasLink: false)).children.count == 2)
    }

    /// The fields where `fast` differs from `reference`, strings compared by their UTF-8 bytes (Swift's `==`
    /// treats canonically equivalent strings as equal; the archive stores bytes).
    static func differences(_ fast: MessageRecord, _ reference: MessageRecord, path: String = "") -> [String] {
        var out: [String] = []
        func string(_ name: String, _ a: String?, _ b: String?) {
            if a.map({ Array($0.utf8) }) != b.map({ Array($0.utf8) }) {
                out.append("\(path)\(name): \(String(reflecting: a)) ≠ reference \(String(reflecting: b))")
            }
        }
        func strings(_ name: String, _ a: [String], _ b: [String]) {
            if a.map({ Array($0.utf8) }) != b.map({ Array($0.utf8) }) {
                out.append("\(path)\(name): \(a) ≠ reference \(b)")
            }
        }
        func value<T: Equatable>(_ name: String, _ a: T, _ b: T) {
            if a != b { out.append("\(path)\(name): \(a) ≠ reference \(b)") }
        }
        // A repaired text is not empty, so its blocks are not read for text where the reference's empty one was.
        let textKeptOnlyByFast = fast.textRepaired && reference.text.isEmpty
        for (name, field) in messageStrings where !(textKeptOnlyByFast && name == "blockText") {
            string(name, fast[keyPath: field], reference[keyPath: field])
        }
        if fast.textRepaired {
            // Deliberate: where the reference reads a text JSONDecoder refuses as absent (stored empty), the fast
            // parser keeps it repaired (`readMessageText`), and it replaces the NUL JSONDecoder keeps; the repair
            // itself is checked byte for byte by `ReliabilityTests.undecodableTextIsKeptWithReplacementCharacters`.
            if !reference.text.isEmpty {
                let replaced = String(
                    String.UnicodeScalarView(reference.text.unicodeScalars.map { $0 == "\0" ? "\u{FFFD}" : $0 }))
                string("text (NUL replaced)", fast.text, replaced)
            }
            if fast.text.unicodeScalars.contains("\0") { out.append("\(path)text: a repaired text holds NUL") }
        } else {
            string("text", fast.text, reference.text)
        }
        value("replyCount", fast.replyCount, reference.replyCount)
        value("isPinned", fast.isPinned, reference.isPinned)
        value("reactions.count", fast.reactions.count, reference.reactions.count)
        for (k, (a, b)) in zip(fast.reactions, reference.reactions).enumerated() {
            string("reactions[\(k)].name", a.name, b.name)
            value("reactions[\(k)].count", a.count, b.count)
            strings("reactions[\(k)].users", a.users, b.users)
        }
        value("files.count", fast.files.count, reference.files.count)
        for (k, (a, b)) in zip(fast.files, reference.files).enumerated() {
            for (name, field) in fileStrings { string("files[\(k)].\(name)", a[keyPath: field], b[keyPath: field]) }
            value("files[\(k)].size", a.size, b.size)
        }
        value("attachments.count", fast.attachments.count, reference.attachments.count)
        for (k, (a, b)) in zip(fast.attachments, reference.attachments).enumerated() {
            strings("attachments[\(k)].pieces", a.pieces, b.pieces)
            value("attachments[\(k)].hasLink", a.hasLink, b.hasLink)
        }
        value("changedMessage.count", fast.changedMessage.count, reference.changedMessage.count)
        for (a, b) in zip(fast.changedMessage, reference.changedMessage) {
            out += differences(a, b, path: path + "changedMessage.")
        }
        return out
    }

    /// What is wrong with `record.innerMessageRange` in `bytes` (the buffer `record` was decoded from): it must be
    /// set exactly when `changedMessage` is, and the bytes it covers must decode, alone, to `changedMessage[0]`
    /// with both decoders; the same down the chain of revisions.
    /// The JSON the archive keeps, with `user_profile` cut where the decoder found it, is what scanning the stored
    /// object for the member gives (`bytes` minified, as the importers pass them).
    static func profileProblems(_ record: MessageRecord, in bytes: [UInt8]) -> [String] {
        var object = 0..<bytes.count
        if record.subtype == "message_changed", let inner = record.innerMessageRange { object = inner }
        let scanned = JSONSlicer.text(of: object, in: bytes, removing: "user_profile")
        let stored = JSONSlicer.storedText(of: record, at: 0..<bytes.count, in: bytes)
        guard stored != scanned else { return [] }
        return ["stored JSON \(stored.debugDescription) ≠ scanned \(scanned.debugDescription)"]
    }

    /// `profileProblems` of the case minified as the importers minify day files (generated cases hold whitespace).
    static func profileProblems(minifying bytes: [UInt8]) -> [String] {
        let sliced = ([UInt8(ascii: "[")] + bytes + [UInt8(ascii: "]")]).withUnsafeBytes { JSONSlicer($0) }
        guard sliced.isComplete, sliced.elements.count == 1, let element = sliced.elements.first else { return [] }
        let minified = Array(sliced.bytes[element])
        guard let record = try? minified.withUnsafeBufferPointer({ try MessageRecord(json: $0) }) else { return [] }
        return profileProblems(record, in: minified)
    }

    static func rangeProblems(_ record: MessageRecord, in bytes: UnsafeBufferPointer<UInt8>) -> [String] {
        guard let inner = record.changedMessage.first else {
            return record.innerMessageRange == nil ? [] : ["innerMessageRange without a changed message"]
        }
        guard let range = record.innerMessageRange else { return ["no innerMessageRange for the changed message"] }
        guard range.lowerBound >= 0, range.upperBound <= bytes.count, range.count >= 2 else {
            return ["innerMessageRange \(range) outside the \(bytes.count) bytes"]
        }
        let slice = UnsafeBufferPointer(rebasing: bytes[range])
        guard slice.first == UInt8(ascii: "{"), slice.last == UInt8(ascii: "}") else {
            return ["innerMessageRange \(range) is not an object: \(show(Array(slice)))"]
        }
        guard let again = try? MessageRecord(json: slice) else { return ["innerMessageRange \(range) does not decode"] }
        var problems = differences(again, inner, path: "at innerMessageRange: ")
        if let reference = CodableMessageReference.decode(slice) {
            problems += differences(inner, reference, path: "reference at innerMessageRange: ")
        } else {
            problems.append("the reference refuses the bytes at innerMessageRange")
        }
        let shifted = again.innerMessageRange.map {
            ($0.lowerBound + range.lowerBound)..<($0.upperBound + range.lowerBound)
        }
        if shifted != inner.innerMessageRange {
            problems.append("nested innerMessageRange \(inner.innerMessageRange as Any) ≠ \(shifted as Any)")
        }
        return problems + rangeProblems(inner, in: bytes)
    }

    /// The bytes as text for a failure message (invalid UTF-8 shown as U+FFFD).
    static func show(_ bytes: [UInt8]) -> String {
        String(reflecting: String(decoding: bytes, as: UTF8.self))
    }
}

/// The one-pass scanners of a page (`JSONSlicer.members`, `elements(ofArray:)`) against what they replaced: a
/// `valueRange(ofKey:)` per key and a second `JSONSlicer` over the `messages` array.
extension FastJSONOracleTests {
    @Test func onePassScansAgreeWithTheLookupsTheyReplaced() throws {
        let root = URL(fileURLWithPath: TestSupport.samplePages)
        let pages = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil))
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "json" }
        var tricky = [
            #"{"a": "x\\\"y", "b\\\"": [1, "]", {"c": "\\\\"}], "messages": [{"ts": "1", "t": "\"]}"}, 2, "s", [3], null], "z": true}"#,
            #"{"messages": [], "ok": false}"#, #"{"messages": 5}"#, #"[{"ts": "1"}, {"ts": "2"}]"#,
        ]
        tricky += try pages.map { try String(contentsOf: $0, encoding: .utf8) }
        #expect(tricky.count > 10)
        for text in tricky {
            let page = Data(text.utf8).withUnsafeBytes { JSONSlicer($0) }
            let whole = 0..<page.bytes.count
            let members = JSONSlicer.members(of: whole, in: page.bytes)
            for key in ["a", "b\\\"", "messages", "ok", "z", "response_metadata", "missing", "c"] {
                #expect(
                    JSONSlicer.value(key, in: members) == JSONSlicer.valueRange(ofKey: key, in: page.bytes, object: whole),
                    "\(key) in \(text.prefix(80))")
            }
            guard let list = JSONSlicer.value("messages", in: members) else { continue }
            let inner = page.bytes[list].withUnsafeBytes { JSONSlicer($0) }
            let expected = inner.isArray ? inner.elements.map { ($0.lowerBound + list.lowerBound)..<($0.upperBound + list.lowerBound) } : nil
            #expect(JSONSlicer.elements(ofArray: list, in: page.bytes) == expected, "\(text.prefix(80))")
        }
    }
}
