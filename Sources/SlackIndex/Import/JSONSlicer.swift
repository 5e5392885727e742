import Foundation

/// Minifies a JSON document and finds the byte ranges of the elements of its top-level array.
///
/// Day files are pretty-printed (Slack writes 4-space indentation), so decoding the minified bytes is faster and
/// each element's minified bytes are the compact raw JSON the archive keeps. One pass, no allocation per element.
/// It does not validate JSON: the decoder does that on the minified buffer.
struct JSONSlicer {
    /// The minified document.
    var bytes: [UInt8]
    /// The ranges of the top-level array's elements in `bytes` (empty when the document is not an array).
    var elements: [Range<Int>]
    /// True when the document's first value is an array.
    var isArray: Bool
    /// True when brackets and quotes balance (a truncated file does not) and nothing follows the first value (JSON
    /// lines, or pages concatenated into one file, are not one document).
    var isComplete: Bool

    /// Minifies `input` and records the top-level array's elements.
    ///
    /// - Complexity: O(n) in the input's length.
    /// Over 60 lines: a byte-level state machine on the import's hottest path (memchr to each closing quote,
    /// indentation skipped in runs); its state lives in registers only while it stays in one function.
    init(_ input: UnsafeRawBufferPointer) {
        var elements: [Range<Int>] = []
        var depth = 0
        var inString = false
        var elementStart = -1
        var sawFirst = false
        var trailing = false
        var isArray = false
        let n = input.count
        // Written through a pointer and whole string runs copied at once: appending byte by byte measured
        // ~500 MB/s, a fifth of the reader thread's time on the 1M-message import.
        let out = [UInt8](unsafeUninitializedCapacity: n) { buffer, count in
            guard n > 0, let src = input.baseAddress?.assumingMemoryBound(to: UInt8.self),
                let dst = buffer.baseAddress
            else {
                count = 0
                return
            }
            var o = 0
            var i = 0
            // Skip a UTF-8 byte order mark.
            if n >= 3, src[0] == 0xEF, src[1] == 0xBB, src[2] == 0xBF { i = 3 }
            while i < n {
                if inString {
                    // Copy up to and including the closing quote: memchr finds each quote, and a quote after an
                    // odd run of backslashes is escaped.
                    let runStart = i
                    while true {
                        guard let found = memchr(src + i, Int32(UInt8(ascii: "\"")), n - i) else {
                            i = n
                            break
                        }
                        let quote = src.distance(to: found.assumingMemoryBound(to: UInt8.self))
                        var backslashes = 0
                        while quote - backslashes - 1 >= runStart && src[quote - backslashes - 1] == 0x5C {
                            backslashes += 1
                        }
                        i = quote + 1
                        if backslashes % 2 == 0 {
                            inString = false
                            break
                        }
                    }
                    (dst + o).update(from: src + runStart, count: i - runStart)
                    o += i - runStart
                    continue
                }
                let byte = src[i]
                i += 1
                switch byte {
                case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
                    // Indentation, eight bytes at a time (callgrind, 100k import: this loop 1.12 -> 0.91 G).
                    while i &+ 8 <= n {
                        let word = UInt64(littleEndian: UnsafeRawPointer(src + i).loadUnaligned(as: UInt64.self))
                        let other = word ^ 0x2020_2020_2020_2020
                        guard other == 0 else {
                            i &+= other.trailingZeroBitCount / 8
                            break
                        }
                        i &+= 8
                    }
                    while i < n && src[i] == UInt8(ascii: " ") { i += 1 }
                    continue
                case UInt8(ascii: "\""):
                    if depth == 1 && isArray && elementStart < 0 { elementStart = o }
                    if depth == 0 { trailing = trailing || sawFirst }
                    sawFirst = true
                    inString = true
                case UInt8(ascii: "["), UInt8(ascii: "{"):
                    if !sawFirst {
                        sawFirst = true
                        isArray = byte == UInt8(ascii: "[")
                    } else if depth == 0 {
                        trailing = true
                    } else if depth == 1 && isArray && elementStart < 0 {
                        elementStart = o
                    }
                    depth += 1
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    if depth == 1 && isArray && elementStart >= 0 {
                        elements.append(elementStart..<o)
                        elementStart = -1
                    }
                    depth -= 1
                case UInt8(ascii: ","):
                    if depth == 1 && isArray && elementStart >= 0 {
                        elements.append(elementStart..<o)
                        elementStart = -1
                    }
                default:
                    if !sawFirst { sawFirst = true }
                    if depth == 1 && isArray && elementStart < 0 { elementStart = o }
                }
                dst[o] = byte
                o += 1
            }
            count = o
        }
        self.bytes = out
        self.elements = elements
        self.isArray = isArray
        self.isComplete = depth == 0 && !inString && sawFirst && !trailing
    }
}

extension JSONSlicer {
    /// The range of the value stored under `key` directly inside the minified object at `object`, or nil.
    ///
    /// - Complexity: O(n) in the object's length.
    static func valueRange(ofKey key: String, in bytes: [UInt8], object: Range<Int>) -> Range<Int>? {
        member(key, in: bytes, object: object)?.value
    }

    /// The compact text of the object at `object` without the member `key` (and its comma).
    ///
    /// - Complexity: O(n) in the object's length.
    static func text(of object: Range<Int>, in bytes: [UInt8], removing key: String) -> String {
        let found = member(key, in: bytes, object: object)
        return text(of: object, in: bytes, removingMember: found.map { $0.key..<$0.value.upperBound })
    }

    /// The compact text of the object at `object` without `member` (from its key's quote to its value's end, inside
    /// `object`, as `MessageRecord.profileMember` gives it) and its comma; the whole object when `member` is nil.
    ///
    /// - Complexity: O(n) in the object's length.
    static func text(of object: Range<Int>, in bytes: [UInt8], removingMember member: Range<Int>?) -> String {
        guard let member, object.lowerBound < member.lowerBound, member.upperBound <= object.upperBound else {
            return String(decoding: bytes[object], as: UTF8.self)
        }
        var start = member.lowerBound
        var end = member.upperBound
        if end < object.upperBound, bytes[end] == UInt8(ascii: ",") {
            end += 1
        } else if start > object.lowerBound + 1, bytes[start - 1] == UInt8(ascii: ",") {
            start -= 1
        }
        var out = [UInt8]()
        out.reserveCapacity(object.count - (end - start))
        out.append(contentsOf: bytes[object.lowerBound..<start])
        out.append(contentsOf: bytes[end..<object.upperBound])
        return String(decoding: out, as: UTF8.self)
    }

    /// The JSON the archive keeps of the message `record` decoded from `bytes[element]`: the object whose text is
    /// stored (a `message_changed` record's revision) without its `user_profile` member.
    ///
    /// The member's place comes from the decoder (scanning the object again for it was ~6% of the reader thread).
    /// - Complexity: O(n) in the object's length.
    static func storedText(of record: MessageRecord, at element: Range<Int>, in bytes: [UInt8]) -> String {
        let object = storedObject(of: record, at: element)
        // A revision's member was recorded by its own decoder, in the same element's coordinates.
        let member = object == element ? record.profileMember : record.changedMessage.first?.profileMember
        let shifted = member.map { (element.lowerBound + $0.lowerBound)..<(element.lowerBound + $0.upperBound) }
        return text(of: object, in: bytes, removingMember: shifted)
    }

    /// Where in `bytes` lies the object whose text the archive stores for the message `record` decoded from
    /// `bytes[element]`: a `message_changed` record's revision (its `message`), else the element itself.
    static func storedObject(of record: MessageRecord, at element: Range<Int>) -> Range<Int> {
        guard record.subtype == "message_changed", let inner = record.innerMessageRange else { return element }
        return (element.lowerBound + inner.lowerBound)..<(element.lowerBound + inner.upperBound)
    }

    /// The members directly inside the minified object at `object`, in order, in one pass: each key's bytes (as
    /// written, without quotes) and its value's range. Stops at the first malformed member (what came before it
    /// is returned); empty when `object` is not an object.
    ///
    /// One pass for several lookups: each `valueRange(ofKey:)` on a page scanned its whole `messages` array.
    /// - Complexity: O(n) in the object's length.
    static func members(of object: Range<Int>, in bytes: [UInt8]) -> [(key: ArraySlice<UInt8>, value: Range<Int>)] {
        var found: [(key: ArraySlice<UInt8>, value: Range<Int>)] = []
        var i = object.lowerBound
        guard i < object.upperBound, bytes[i] == UInt8(ascii: "{") else { return found }
        i += 1
        while i < object.upperBound, bytes[i] == UInt8(ascii: "\""),
            let keyEnd = stringEnd(bytes, from: i, limit: object.upperBound), keyEnd < object.upperBound,
            bytes[keyEnd] == UInt8(ascii: ":"),
            let valueEnd = valueEnd(bytes, from: keyEnd + 1, limit: object.upperBound)
        {
            found.append((bytes[(i + 1)..<(keyEnd - 1)], (keyEnd + 1)..<valueEnd))
            i = valueEnd
            guard i < object.upperBound, bytes[i] == UInt8(ascii: ",") else { break }
            i += 1
        }
        return found
    }

    /// The value of the first member called `key` among `members`.
    static func value(
        _ key: String, in members: [(key: ArraySlice<UInt8>, value: Range<Int>)]
    ) -> Range<Int>? {
        members.first { $0.key.elementsEqual(key.utf8) }?.value
    }

    /// The ranges of the elements of the minified array at `array`, without copying it (a second `JSONSlicer`
    /// over a page's `messages` minified it again); nil when `array` is not an array or is malformed.
    ///
    /// - Complexity: O(n) in the array's length.
    static func elements(ofArray array: Range<Int>, in bytes: [UInt8]) -> [Range<Int>]? {
        var i = array.lowerBound
        guard i < array.upperBound, bytes[i] == UInt8(ascii: "[") else { return nil }
        i += 1
        var found: [Range<Int>] = []
        if i < array.upperBound, bytes[i] == UInt8(ascii: "]") { return found }
        while i < array.upperBound, let end = valueEnd(bytes, from: i, limit: array.upperBound), end > i {
            found.append(i..<end)
            i = end
            guard i < array.upperBound else { return nil }
            if bytes[i] == UInt8(ascii: "]") { return found }
            guard bytes[i] == UInt8(ascii: ",") else { return nil }
            i += 1
        }
        return nil
    }

    /// Where the member `key` of the minified object at `object` starts (its key's quote) and its value's range.
    /// Over 60 lines: a scanner over one minified object (strings, nesting) that stops at the key; its cursor
    /// state is local to the loop.
    private static func member(_ key: String, in bytes: [UInt8], object: Range<Int>) -> (key: Int, value: Range<Int>)? {
        let keyBytes = Array(key.utf8)
        var i = object.lowerBound
        guard i < object.upperBound, bytes[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        while i < object.upperBound {
            // At a key (depth 1).
            guard bytes[i] == UInt8(ascii: "\"") else { return nil }
            let keyQuote = i
            let keyStart = i + 1
            guard let keyEnd = stringEnd(bytes, from: i, limit: object.upperBound) else { return nil }
            let matches = bytes[keyStart..<(keyEnd - 1)].elementsEqual(keyBytes)
            i = keyEnd
            guard i < object.upperBound, bytes[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            let valueStart = i
            guard let valueEnd = valueEnd(bytes, from: i, limit: object.upperBound) else { return nil }
            if matches { return (keyQuote, valueStart..<valueEnd) }
            i = valueEnd
            guard i < object.upperBound, bytes[i] == UInt8(ascii: ",") else { return nil }
            i += 1
        }
        return nil
    }

    /// The index just past the string starting at `start` (which holds a quote).
    ///
    /// memchr to each quote, as `init` does (a byte loop here was the dump import's hottest function: 9% of its
    /// samples); a quote after an odd run of backslashes is escaped.
    private static func stringEnd(_ bytes: [UInt8], from start: Int, limit: Int) -> Int? {
        bytes.withUnsafeBufferPointer { buffer -> Int? in
            guard let base = buffer.baseAddress, limit <= buffer.count else { return nil }
            var i = start + 1
            while i < limit {
                guard let found = memchr(base + i, Int32(UInt8(ascii: "\"")), limit - i) else { return nil }
                let quote = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                var backslashes = 0
                while quote - backslashes - 1 > start && base[quote - backslashes - 1] == 0x5C { backslashes += 1 }
                if backslashes % 2 == 0 { return quote + 1 }
                i = quote + 1
            }
            return nil
        }
    }

    /// The index just past the value starting at `start`.
    private static func valueEnd(_ bytes: [UInt8], from start: Int, limit: Int) -> Int? {
        guard start < limit else { return nil }
        switch bytes[start] {
        case UInt8(ascii: "\""):
            return stringEnd(bytes, from: start, limit: limit)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var i = start
            while i < limit {
                switch bytes[i] {
                case UInt8(ascii: "\""):
                    guard let end = stringEnd(bytes, from: i, limit: limit) else { return nil }
                    i = end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return i + 1 }
                default: break
                }
                i += 1
            }
            return nil
        default:
            var i = start
            while i < limit, bytes[i] != UInt8(ascii: ","), bytes[i] != UInt8(ascii: "}"), bytes[i] != UInt8(ascii: "]") {
                i += 1
            }
            return i
        }
    }
}
