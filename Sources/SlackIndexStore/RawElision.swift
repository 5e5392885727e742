import CSlackBytes
import Foundation

/// The values a message's row holds that its JSON repeats (`text`, `ts`, `user`, `thread_ts`).
package struct RepeatedFields: Sendable, Equatable {
    var text: String
    var ts: String
    var userID: String?
    var threadTS: String?

    package init(text: String, ts: String, userID: String?, threadTS: String?) {
        self.text = text
        self.ts = ts
        self.userID = userID
        self.threadTS = threadTS
    }
}

/// Packed JSON without what the row already holds: the bytes of `"text":"…"`, `"ts":"…"`, `"user":"…"` and
/// `"thread_ts":"…"` are each replaced by one marker byte when packing, and put back from the row's columns when read.
/// The 1M-message archive's blocks: measured 31% smaller (the text is most of a message's JSON), and less to deflate.
///
/// Byte for byte: a marker stands for exactly the bytes it replaced, rebuilt from the columns (which no write changes
/// while the row points at its block: an update stores its JSON inline). The text is written back escaped the way
/// the JSON had it; four ways are tried (Slack's exports, Slack's API, plain, Go's `encoding/json` as slackdump
/// writes), and text escaped any other way stays in the JSON. Markers are control bytes that JSON never holds
/// unescaped (and not whitespace); JSON that holds one anyway, or fields with a NUL, are stored as they are.
///
/// Text slices (blocks written since 2026-11-26, `RawBlocks.Format.slices`): once the text is cut, any other string
/// value of the JSON whose contents occur in the text as the JSON escaped it is replaced by a slice marker (one per
/// escaping, `Escaping.sliceMarker`) and the contents' offset and length in that escaped text, in decimal
/// (`<marker>12,40`); the string's closing quote follows, so the length's digits always end. Slack's rich-text
/// `blocks` repeat the text in pieces: measured on the 1M-message export, the blocks' deflated bytes 34% smaller.
enum RawElision {
    enum Marker: UInt8, CaseIterable {
        case textSlackExport = 1, textSlackAPI, textPlain, textGo, ts, user, threadTS

        /// How the text a text marker stands for is escaped; nil for the other fields (written as they are).
        var escaping: Escaping? {
            switch self {
            case .textSlackExport: .slackExport
            case .textSlackAPI: .slackAPI
            case .textPlain: .plain
            case .textGo: .go
            case .ts, .user, .threadTS: nil
            }
        }
    }

    /// How a JSON writer escapes a string.
    enum Escaping: CaseIterable {
        /// PHP's and Python's defaults: `\/`, `\uXXXX` for all but ASCII (Slack's exports).
        case slackExport
        /// `\/`, UTF-8 as it is (Slack's Web API answers).
        case slackAPI
        /// UTF-8 as it is, `/` too (JavaScript, Python with `ensure_ascii=False`).
        case plain
        /// Go's `encoding/json`: `<`, `>`, `&`, U+2028 and U+2029 as `\uXXXX` (slackdump).
        case go

        var marker: Marker {
            switch self {
            case .slackExport: .textSlackExport
            case .slackAPI: .textSlackAPI
            case .plain: .textPlain
            case .go: .textGo
            }
        }

        /// The byte that starts a slice of the text as this escaping writes it (14–17: after the field markers,
        /// skipping JSON's whitespace bytes).
        var sliceMarker: UInt8 {
            switch self {
            case .slackExport: 14
            case .slackAPI: 15
            case .plain: 16
            case .go: 17
            }
        }

        init?(sliceMarker byte: UInt8) {
            guard let escaping = Self.allCases.first(where: { $0.sliceMarker == byte }) else { return nil }
            self = escaping
        }
    }

    /// A stretch of the JSON replaced when packing: by a field's marker, or by a slice of the text (`slice`: the
    /// stretch's bytes at this range of the text as `escaping` writes it).
    struct Cut {
        var range: Range<Int>
        var marker: UInt8
        var slice: Range<Int>?
    }

    /// Cuts the repeated fields out of JSON, reusing its buffers from one message to the next (a pack's worth).
    struct Elider {
        private var literal: [UInt8] = []
        private var cuts: [Cut] = []
        /// The text's contents as the JSON escaped it (the cut text literal without `"text":"` and the last quote).
        private var textBody: [UInt8] = []

        /// Appends `raw` to `out` with the repeated fields it holds replaced by markers; false (nothing appended) when
        /// `raw` holds a marker byte itself: such JSON (never valid) must stay unpacked, as a marker in a block is
        /// always read as one.
        ///
        /// - Complexity: O(n · m) in the worst case for n bytes of JSON and a field of m bytes; in practice O(n) per
        ///   field tried (one or two for the text, one each for the others).
        mutating func elide(_ raw: String, _ fields: RepeatedFields, into out: inout [UInt8]) -> Bool {
            var raw = raw
            return raw.withUTF8 { json in
                guard !RawElision.holdsMarker(json) else { return false }
                let kind = TextKind(fields.text)
                guard !kind.nul, !fields.containsNUL else {
                    out.append(contentsOf: json)
                    return true
                }
                let haystack = UnsafeRawBufferPointer(json)
                cuts.removeAll(keepingCapacity: true)
                var textEscaping: Escaping?
                for escaping in Escaping.allCases where kind.differs(escaping) {
                    literal.removeAll(keepingCapacity: true)
                    _ = RawElision.appendLiteral(escaping.marker, fields, to: &literal)
                    if find(literal, escaping.marker, in: haystack) {
                        textEscaping = escaping
                        // `"text":"` and the closing quote around the escaped text.
                        textBody.removeAll(keepingCapacity: true)
                        textBody.append(contentsOf: literal[RawElision.textKeyCount..<(literal.count - 1)])
                        break
                    }
                }
                for marker in [Marker.ts, .user, .threadTS] {
                    literal.removeAll(keepingCapacity: true)
                    if RawElision.appendLiteral(marker, fields, to: &literal) { _ = find(literal, marker, in: haystack) }
                }
                if let textEscaping { findSlices(of: textEscaping, in: json) }
                cuts.sort { $0.range.lowerBound < $1.range.lowerBound }
                var position = 0
                for cut in cuts {
                    out.append(contentsOf: json[position..<cut.range.lowerBound])
                    out.append(cut.marker)
                    if let slice = cut.slice {
                        RawElision.appendDecimal(slice.lowerBound, to: &out)
                        out.append(UInt8(ascii: ","))
                        RawElision.appendDecimal(slice.count, to: &out)
                    }
                    position = cut.range.upperBound
                }
                out.append(contentsOf: json[position...])
                return true
            }
        }

        /// Records the first occurrence of `literal` as a cut, unless it overlaps one already made.
        private mutating func find(
            _ literal: [UInt8], _ marker: Marker, in haystack: UnsafeRawBufferPointer
        ) -> Bool {
            guard let start = RawElision.firstIndex(of: literal, in: haystack) else { return false }
            let range = start..<(start + literal.count)
            guard !cuts.contains(where: { $0.range.overlaps(range) }) else { return false }
            cuts.append(Cut(range: range, marker: marker.rawValue))
            return true
        }

        /// Records as slices the string values of `json` (not keys, not inside a field's cut) whose contents occur in
        /// the escaped text and are longer than the slice that stands for them.
        ///
        /// Strings are found by their quotes and backslashes alone, so JSON that is not valid still round-trips: a
        /// slice covers the bytes from a quote to the next unescaped one, whatever they are.
        /// - Complexity: O(n · m) for n bytes of JSON and m of text at worst (each string searched in the text); in
        ///   practice a `memchr` and a few `memcmp`s per string value.
        private mutating func findSlices(of escaping: Escaping, in json: UnsafeBufferPointer<UInt8>) {
            let fieldCuts = cuts.count
            // The fields' cuts in order: the scan moves forward, so only the first one not behind it (`nextCut`) can
            // hold a quote it reaches or overlap a string it reads (cuts do not overlap one another).
            cuts.sort { $0.range.lowerBound < $1.range.lowerBound }
            var nextCut = 0
            let quote = UInt8(ascii: "\"")
            textBody.withUnsafeBytes { text in
                // Eight bytes at a time to each quote (a byte at a time was ~6% of the reader thread; a `memchr` per
                // quote measured about the same as this); a backslash outside a string is not JSON and is passed over.
                var index = 0
                while let next = RawElision.quoteOrBackslash(in: json, from: index) {
                    index = next
                    guard json[index] == quote else {
                        index += 1
                        continue
                    }
                    while nextCut < fieldCuts && cuts[nextCut].range.upperBound <= index { nextCut += 1 }
                    if nextCut < fieldCuts && cuts[nextCut].range.contains(index) {
                        index = cuts[nextCut].range.upperBound
                        continue
                    }
                    guard let end = RawElision.closingQuote(in: json, after: index) else { return }
                    let contents = (index + 1)..<end
                    index = end + 1
                    // Short strings cost more as a slice; keys (a colon follows) are field names, not text.
                    guard contents.count >= RawElision.shortestSlice, !RawElision.isKey(endingAt: end, in: json),
                        !(nextCut < fieldCuts && cuts[nextCut].range.overlaps(contents))
                    else { continue }
                    let needle = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: json[contents]))
                    guard let start = RawElision.firstIndex(of: needle, in: text) else { continue }
                    let slice = start..<(start + contents.count)
                    guard RawElision.decimalCount(start) + RawElision.decimalCount(contents.count) + 2 < contents.count
                    else { continue }
                    cuts.append(Cut(range: contents, marker: escaping.sliceMarker, slice: slice))
                }
            }
        }
    }

    /// The first position at or after `start` that holds a quote or a backslash, or nil; eight bytes at a time.
    @inline(__always) static func quoteOrBackslash(in json: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = json.baseAddress else { return nil }
        var index = start
        while index &+ 8 <= json.count {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self))
            // The lowest flag is exact (a borrow only flags bytes above a match): the first byte in memory order.
            let found = slack_bytes_highs(slack_bytes_quote_or_backslash(word))
            if found != 0 { return index &+ found.trailingZeroBitCount / 8 }
            index &+= 8
        }
        while index < json.count {
            if json[index] == UInt8(ascii: "\"") || json[index] == UInt8(ascii: "\\") { return index }
            index &+= 1
        }
        return nil
    }

    /// The position of the quote that closes the string opened at `open` (a backslash escapes the byte after it);
    /// nil when the string does not close.
    static func closingQuote(in json: UnsafeBufferPointer<UInt8>, after open: Int) -> Int? {
        var from = open + 1
        while let found = quoteOrBackslash(in: json, from: from) {
            if json[found] == UInt8(ascii: "\"") { return found }
            from = found + 2
        }
        return nil
    }

    /// The fewest bytes of a string's contents replaced by a slice.
    static let shortestSlice = 6

    /// True when the string whose closing quote is at `end` is followed by a colon (whitespace skipped): a key.
    static func isKey(endingAt end: Int, in json: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = end + 1
        while index < json.count {
            switch json[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            case UInt8(ascii: ":"): return true
            default: return false
            }
        }
        return false
    }

    /// How many decimal digits `value` (≥ 0) takes.
    static func decimalCount(_ value: Int) -> Int {
        var count = 1
        var rest = value / 10
        while rest > 0 {
            count += 1
            rest /= 10
        }
        return count
    }

    /// Appends `value` (≥ 0) in decimal.
    static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
        // Digits written from the last into room made for them (appending and reversing the slice was ~550
        // instructions a number, 1% of the import's reader thread).
        out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: decimalCount(value)))
        out.withUnsafeMutableBufferPointer { buffer in
            var rest = value
            var index = buffer.count - 1
            repeat {
                buffer[index] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
                index -= 1
            } while rest > 0
        }
    }

    /// Which escapings write a text differently (each is tried only where it differs from those before it), and
    /// whether it holds a NUL.
    struct TextKind {
        var slash = false
        var nonASCII = false
        /// `<`, `>`, `&`, U+2028, U+2029: Go escapes them.
        var goSpecial = false
        var nul = false

        init(_ text: String) {
            var text = text
            text.withUTF8 { bytes in
                // Words of eight bytes that hold none of the bytes looked for are passed over whole.
                var start = 0
                if let base = bytes.baseAddress {
                    while start &+ 8 <= bytes.count {
                        let word = UnsafeRawPointer(base + start).loadUnaligned(as: UInt64.self)
                        // `word` itself flags the bytes of 0x80 and more.
                        let flags =
                            slack_bytes_equal(word, 0) | slack_bytes_equal(word, UInt8(ascii: "/"))
                            | slack_bytes_equal(word, UInt8(ascii: "<")) | slack_bytes_equal(word, UInt8(ascii: ">"))
                            | slack_bytes_equal(word, UInt8(ascii: "&")) | word
                        if slack_bytes_highs(flags) != 0 { break }
                        start &+= 8
                    }
                }
                for byte in UnsafeBufferPointer(rebasing: bytes[start...]) {
                    switch byte {
                    case 0: nul = true
                    case UInt8(ascii: "/"): slash = true
                    case UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"): goSpecial = true
                    case 0xE2:  // U+2028 and U+2029 start with it: Go may write the text differently
                        nonASCII = true
                        goSpecial = true
                    case 0x80...: nonASCII = true
                    default: break
                    }
                }
            }
        }

        /// True when `escaping` writes the text differently from every escaping before it in `Escaping.allCases`.
        func differs(_ escaping: Escaping) -> Bool {
            switch escaping {
            case .slackExport: true
            case .slackAPI: nonASCII
            case .plain: slash
            case .go: goSpecial
            }
        }
    }

    /// True when `bytes` hold a byte that would read as a marker (a field's or a slice's).
    ///
    /// Eight bytes at a time: a word with no byte below 18 holds no marker (JSON holds such bytes only where it is
    /// not valid), and only other words are checked byte by byte. A byte at a time was ~4% of the reader thread.
    static func holdsMarker(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        var index = 0
        while index &+ 8 <= bytes.count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            if slack_bytes_highs(slack_bytes_below(word, 18)) != 0,
                UnsafeBufferPointer(start: base + index, count: 8).contains(where: { isMarker($0, slices: true) })
            {
                return true
            }
            index &+= 8
        }
        return UnsafeBufferPointer(rebasing: bytes[index...]).contains { isMarker($0, slices: true) }
    }

    /// True when `byte` is a field's marker (1–7) or, where blocks hold slices, a slice's (14–17).
    @inline(__always) static func isMarker(_ byte: UInt8, slices: Bool) -> Bool {
        byte &- 1 < 7 || (slices && byte &- 14 < 4)
    }

    /// Where `needle` first occurs in `haystack` (memchr to each candidate first byte, then memcmp; Glibc's `memmem`
    /// is not visible to Swift).
    static func firstIndex(of needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Int? {
        needle.withUnsafeBytes { firstIndex(of: $0, in: haystack) }
    }

    static func firstIndex(of needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer) -> Int? {
        guard let first = needle.first, let base = haystack.baseAddress, let needleBase = needle.baseAddress,
            needle.count <= haystack.count
        else {
            return nil
        }
        let last = haystack.count - needle.count
        var index = 0
        while index <= last {
            guard let found = memchr(base + index, Int32(first), last - index + 1) else { return nil }
            index = base.distance(to: UnsafeRawPointer(found))
            if memcmp(found, needleBase, needle.count) == 0 { return index }
            index += 1
        }
        return nil
    }

    /// The JSON `packed` stands for, its markers replaced by the fields' bytes; nil when it names a field the row does
    /// not have or a slice outside the text (a damaged archive).
    ///
    /// - Parameter slices: whether the block may hold text slices (`RawBlocks.Format.slices`); in older blocks bytes
    ///   14–17 are the JSON's own.
    /// - Complexity: O(n) in the bytes returned.
    static func restore(_ packed: ArraySlice<UInt8>, _ fields: RepeatedFields, slices: Bool) -> String? {
        guard packed.contains(where: { isMarker($0, slices: slices) }) else {
            return String(decoding: packed, as: UTF8.self)
        }
        var out: [UInt8] = []
        out.reserveCapacity(packed.count + fields.text.utf8.count * 2 + 64)
        // The text as the slices' escaping writes it, made at the first slice (a member's slices share one): copied
        // from where the text's marker wrote it when the escaping is the same (escaping it again was 1.4% of `serve`'s
        // CPU on history pages), escaped otherwise.
        var body: (escaping: Escaping, bytes: [UInt8])?
        var written: (escaping: Escaping, range: Range<Int>)?
        var start = packed.startIndex
        var index = packed.startIndex
        while index < packed.endIndex {
            let byte = packed[index]
            guard isMarker(byte, slices: slices) else {
                index += 1
                continue
            }
            out.append(contentsOf: packed[start..<index])
            index += 1
            if let marker = Marker(rawValue: byte) {
                let before = out.count
                guard appendLiteral(marker, fields, to: &out) else { return nil }
                // `"text":"` before the escaped text, `"` after it.
                if let escaping = marker.escaping {
                    written = (escaping, (before + textKeyCount)..<(out.count - 1))
                }
            } else {
                guard let escaping = Escaping(sliceMarker: byte), let offset = readDecimal(packed, at: &index),
                    index < packed.endIndex, packed[index] == UInt8(ascii: ",")
                else { return nil }
                index += 1
                guard let length = readDecimal(packed, at: &index) else { return nil }
                if body?.escaping != escaping {
                    if let written, written.escaping == escaping {
                        body = (escaping, Array(out[written.range]))
                    } else {
                        var bytes: [UInt8] = []
                        escape(fields.text, escaping, into: &bytes)
                        body = (escaping, bytes)
                    }
                }
                guard let text = body?.bytes, offset <= text.count, length <= text.count - offset else { return nil }
                out.append(contentsOf: text[offset..<(offset + length)])
            }
            start = index
        }
        out.append(contentsOf: packed[start...])
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of `"text":"`, which a text marker's literal starts with.
    static let textKeyCount = #""text":""#.utf8.count

    /// The decimal number at `index`, `index` moved past it; nil without a digit or with more than 9 (a block holds
    /// less: damage, not a number to read in part).
    private static func readDecimal(_ bytes: ArraySlice<UInt8>, at index: inout Int) -> Int? {
        var value = 0
        var digits = 0
        while index < bytes.endIndex, bytes[index] &- UInt8(ascii: "0") < 10 {
            guard digits < 9 else { return nil }
            value = value * 10 + Int(bytes[index] &- UInt8(ascii: "0"))
            digits += 1
            index += 1
        }
        return digits > 0 ? value : nil
    }

    /// The bytes `marker` stands for; nil when the row has no such field.
    static func literal(_ marker: Marker, _ fields: RepeatedFields) -> [UInt8]? {
        var out: [UInt8] = []
        return appendLiteral(marker, fields, to: &out) ? out : nil
    }

    /// Appends the bytes `marker` stands for (`"key":"value"`, the text escaped as its marker says); false, with
    /// nothing appended, when the row has no such field.
    static func appendLiteral(_ marker: Marker, _ fields: RepeatedFields, to out: inout [UInt8]) -> Bool {
        let key: StaticString
        let value: String?
        switch marker {
        case .textSlackExport, .textSlackAPI, .textPlain, .textGo: (key, value) = ("text", fields.text)
        case .ts: (key, value) = ("ts", fields.ts)
        case .user: (key, value) = ("user", fields.userID)
        case .threadTS: (key, value) = ("thread_ts", fields.threadTS)
        }
        guard let value else { return false }
        out.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { out.append(contentsOf: $0) }
        out.append(contentsOf: #"":""#.utf8)
        if let escaping = marker.escaping {
            escape(value, escaping, into: &out)
        } else {
            out.append(contentsOf: value.utf8)
        }
        out.append(UInt8(ascii: "\""))
        return true
    }

    /// Appends the JSON string body of `text` as `escaping` writes it.
    ///
    /// Runs of bytes written as they are go in one copy; only Slack's export style decodes non-ASCII (to write its
    /// UTF-16 units as `\uXXXX`). A first cut, per scalar with a `String` each, was most of the cost of packing.
    static func escape(_ text: String, _ escaping: Escaping, into out: inout [UInt8]) {
        func unicodeEscape(_ unit: UInt16) {
            out.append(UInt8(ascii: "\\"))
            out.append(UInt8(ascii: "u"))
            for shift in stride(from: 12, through: 0, by: -4) {
                let digit = UInt8(truncatingIfNeeded: unit >> UInt16(shift)) & 0xF
                out.append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
            }
        }
        func escaped(_ byte: UInt8) {
            out.append(UInt8(ascii: "\\"))
            out.append(byte)
        }
        let slash = escaping == .slackExport || escaping == .slackAPI
        let go = escaping == .go
        let ascii = escaping == .slackExport
        // Flags the bytes of a word that `escaping` writes escaped (Go's U+2028 and U+2029 by their first byte).
        @inline(__always) func special(_ word: UInt64) -> Bool {
            var flags = slack_bytes_json_special(word)
            if slash { flags |= slack_bytes_equal(word, UInt8(ascii: "/")) }
            if ascii { flags |= word }
            if go {
                flags |= slack_bytes_equal(word, UInt8(ascii: "<")) | slack_bytes_equal(word, UInt8(ascii: ">"))
                    | slack_bytes_equal(word, UInt8(ascii: "&")) | slack_bytes_equal(word, 0xE2)
            }
            return slack_bytes_highs(flags) != 0
        }
        var text = text
        text.withUTF8 { bytes in
            var index = 0
            var run = 0
            while index < bytes.count {
                // Eight bytes at a time while none needs escaping (a byte at a time was ~2.5% of the reader thread).
                if index &+ 8 <= bytes.count, let base = bytes.baseAddress {
                    let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                    if !special(word) {
                        index &+= 8
                        continue
                    }
                }
                let byte = bytes[index]
                let special =
                    byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
                    || (slash && byte == UInt8(ascii: "/")) || (ascii && byte >= 0x80)
                    || (go
                        && (byte == UInt8(ascii: "<") || byte == UInt8(ascii: ">") || byte == UInt8(ascii: "&")
                            || byte == 0xE2))
                guard special else {
                    index += 1
                    continue
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
                index += 1
                switch byte {
                case 0x0A: escaped(UInt8(ascii: "n"))
                case 0x0D: escaped(UInt8(ascii: "r"))
                case 0x09: escaped(UInt8(ascii: "t"))
                case 0x08: escaped(UInt8(ascii: "b"))
                case 0x0C: escaped(UInt8(ascii: "f"))
                case 0..<0x20, UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"): unicodeEscape(UInt16(byte))
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): escaped(byte)
                case 0xE2 where go:
                    // U+2028 and U+2029 (E2 80 A8/A9) as Go writes them; any other scalar as it is.
                    if index + 1 < bytes.count && bytes[index] == 0x80
                        && (bytes[index + 1] == 0xA8 || bytes[index + 1] == 0xA9)
                    {
                        unicodeEscape(bytes[index + 1] == 0xA8 ? 0x2028 : 0x2029)
                        index += 2
                    } else {
                        out.append(byte)
                    }
                default:
                    // Slack's export style: a valid UTF-8 sequence (a Swift string's) as one or two UTF-16 units.
                    let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2
                    var value = UInt32(byte) & (length == 4 ? 0x07 : length == 3 ? 0x0F : 0x1F)
                    for _ in 1..<length where index < bytes.count {
                        value = value << 6 | UInt32(bytes[index] & 0x3F)
                        index += 1
                    }
                    if value >= 0x10000 {
                        let offset = value - 0x10000
                        unicodeEscape(UInt16(0xD800 + (offset >> 10)))
                        unicodeEscape(UInt16(0xDC00 + (offset & 0x3FF)))
                    } else {
                        unicodeEscape(UInt16(value))
                    }
                }
                run = index
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<bytes.count]))
        }
    }
}

extension RepeatedFields {
    /// A NUL would not survive the columns' round trip (text is read up to its first NUL); the text is checked with
    /// its escaping (`TextKind`).
    fileprivate var containsNUL: Bool {
        ts.utf8Contains(0) || userID?.utf8Contains(0) == true || threadTS?.utf8Contains(0) == true
    }
}
