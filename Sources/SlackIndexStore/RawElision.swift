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
    }

    /// Cuts the repeated fields out of JSON, reusing its buffers from one message to the next (a pack's worth).
    struct Elider {
        private var literal: [UInt8] = []
        private var cuts: [(range: Range<Int>, marker: Marker)] = []

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
                for escaping in Escaping.allCases where kind.differs(escaping) {
                    literal.removeAll(keepingCapacity: true)
                    _ = RawElision.appendLiteral(escaping.marker, fields, to: &literal)
                    if find(literal, escaping.marker, in: haystack) { break }
                }
                for marker in [Marker.ts, .user, .threadTS] {
                    literal.removeAll(keepingCapacity: true)
                    if RawElision.appendLiteral(marker, fields, to: &literal) { _ = find(literal, marker, in: haystack) }
                }
                cuts.sort { $0.range.lowerBound < $1.range.lowerBound }
                var position = 0
                for cut in cuts {
                    out.append(contentsOf: json[position..<cut.range.lowerBound])
                    out.append(cut.marker.rawValue)
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
            cuts.append((range, marker))
            return true
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
                for byte in bytes {
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

    /// True when `bytes` hold a byte that would read as a marker.
    static func holdsMarker(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.contains { $0 &- 1 < 7 }
    }

    /// Where `needle` first occurs in `haystack` (memchr to each candidate first byte, then memcmp; Glibc's `memmem`
    /// is not visible to Swift).
    static func firstIndex(of needle: [UInt8], in haystack: UnsafeRawBufferPointer) -> Int? {
        guard let first = needle.first, let base = haystack.baseAddress, needle.count <= haystack.count
        else {
            return nil
        }
        let last = haystack.count - needle.count
        var index = 0
        return needle.withUnsafeBytes { needle in
            guard let needleBase = needle.baseAddress else { return nil }
            while index <= last {
                guard let found = memchr(base + index, Int32(first), last - index + 1) else { return nil }
                index = base.distance(to: UnsafeRawPointer(found))
                if memcmp(found, needleBase, needle.count) == 0 { return index }
                index += 1
            }
            return nil
        }
    }

    /// The JSON `packed` stands for, its markers replaced by the fields' bytes; nil when it names a field the row does
    /// not have (a damaged archive).
    ///
    /// - Complexity: O(n) in the bytes returned.
    static func restore(_ packed: ArraySlice<UInt8>, _ fields: RepeatedFields) -> String? {
        guard packed.contains(where: { $0 >= 1 && $0 <= 7 }) else {
            return String(decoding: packed, as: UTF8.self)
        }
        var out: [UInt8] = []
        out.reserveCapacity(packed.count + fields.text.utf8.count * 2 + 64)
        var start = packed.startIndex
        for index in packed.indices {
            let byte = packed[index]
            guard byte >= 1 && byte <= 7 else { continue }
            out.append(contentsOf: packed[start..<index])
            guard let marker = Marker(rawValue: byte), appendLiteral(marker, fields, to: &out) else { return nil }
            start = index + 1
        }
        out.append(contentsOf: packed[start...])
        return String(decoding: out, as: UTF8.self)
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
        var text = text
        text.withUTF8 { bytes in
            var index = 0
            var run = 0
            while index < bytes.count {
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
