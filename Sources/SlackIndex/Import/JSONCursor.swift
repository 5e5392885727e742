import CSlackBytes

/// Why a `JSONCursor` gave up, and where.
struct JSONCursorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    enum Reason: Sendable, Equatable {
        /// The input ended inside a value.
        case unexpectedEnd
        /// A byte that cannot start or continue the expected token.
        case unexpectedByte(UInt8)
        /// `true`, `false` or `null` misspelt.
        case invalidLiteral
        /// Arrays and objects nested deeper than `JSONCursor.maxDepth`.
        case tooDeep
    }

    /// What went wrong.
    var reason: Reason
    /// The byte offset in the cursor's buffer where it went wrong.
    var offset: Int

    init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    var description: String { "JSON error \(reason) at byte \(offset)" }
}

/// A string token as it sits in the buffer: the bytes between its quotes and what they contain.
///
/// Reading one allocates nothing; `JSONCursor.string(_:)` / `repairedString(_:)` turn it into a `String`.
struct JSONRawString: Sendable, Equatable {
    /// Index of the first byte after the opening quote.
    var start: Int
    /// Index of the closing quote.
    var end: Int
    /// A backslash occurs in the contents.
    var hasEscapes: Bool
    /// A byte ≥ 0x80 occurs in the contents (so UTF-8 must be validated).
    var hasNonASCII: Bool
    /// An unescaped control byte (< 0x20) occurs in the contents.
    var hasControl: Bool

    /// Plain ASCII without escapes or control bytes: decodes to its bytes as they are.
    @inline(__always) var isPlain: Bool { !hasEscapes && !hasNonASCII && !hasControl }

    /// The number of raw bytes between the quotes.
    @inline(__always) var count: Int { end - start }
}

/// A forward-only reader over the bytes of one JSON document (UTF-8), allocation-free except for kept strings.
///
/// Structure follows what Foundation's `JSONDecoder` accepts when it scans a document (it also accepts a trailing
/// comma before `]` / `}`); values are read the way its containers read them: a string whose contents `JSONDecoder`
/// refuses to decode (bad escape, lone surrogate, raw control byte, invalid UTF-8) reads as nil from
/// `string(_:)`, and a number's grammar is only checked when the number is converted. Never traps on any input.
struct JSONCursor {
    /// The document.
    let bytes: UnsafeBufferPointer<UInt8>
    /// The offset of the next byte to read.
    var index: Int

    /// Deepest nesting of arrays and objects `skipValue()` accepts (`JSONDecoder` stops at 512).
    static let maxDepth = 1024

    /// A cursor at `index` in `bytes`.
    init(_ bytes: UnsafeBufferPointer<UInt8>, index: Int = 0) {
        self.bytes = bytes
        self.index = index
    }

    /// True when only whitespace remains.
    mutating func isAtEnd() -> Bool {
        skipWhitespace()
        return index >= bytes.count
    }

    // MARK: - Bytes

    @inline(__always) private func byte(at i: Int) -> UInt8 {
        // Callers check `i < bytes.count`; the base address is non-nil whenever count > 0.
        bytes[i]
    }

    @inline(__always) private func error(_ reason: JSONCursorError.Reason, at offset: Int? = nil) -> JSONCursorError {
        JSONCursorError(reason, at: offset ?? index)
    }

    /// Skips JSON whitespace (space, tab, line feed, carriage return).
    @inline(__always) mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index &+= 1
            default: return
            }
        }
    }

    /// The next non-whitespace byte, not consumed.
    ///
    /// - Throws: `unexpectedEnd` when only whitespace remains.
    @inline(__always) mutating func peek() throws(JSONCursorError) -> UInt8 {
        if index < bytes.count {
            let b = bytes[index]
            if b > 0x20 { return b }
        }
        skipWhitespace()
        guard index < bytes.count else { throw error(.unexpectedEnd) }
        return bytes[index]
    }

    /// Consumes `expected` (after whitespace).
    @inline(__always) mutating func expect(_ expected: UInt8) throws(JSONCursorError) {
        let b = try peek()
        guard b == expected else { throw error(.unexpectedByte(b)) }
        index &+= 1
    }

    // MARK: - Containers

    /// Consumes the `{` that opens an object; iterate its members with `nextKey(first:)`.
    @inline(__always) mutating func beginObject() throws(JSONCursorError) {
        try expect(UInt8(ascii: "{"))
    }

    /// The next key of the object being read, with the cursor left on its value; nil after consuming the `}`.
    ///
    /// `first` is true before the first key (start with `var first = true`). The caller must read or skip each
    /// value before asking for the next key.
    /// - Complexity: O(key length).
    @inline(__always)
    mutating func nextKey(first: inout Bool) throws(JSONCursorError) -> JSONRawString? {
        var b = try peek()
        if first {
            first = false
            if b == UInt8(ascii: "}") {
                index &+= 1
                return nil
            }
        } else if b == UInt8(ascii: ",") {
            index &+= 1
            b = try peek()
            if b == UInt8(ascii: "}") {  // JSONDecoder accepts a trailing comma.
                index &+= 1
                return nil
            }
        } else if b == UInt8(ascii: "}") {
            index &+= 1
            return nil
        } else {
            throw error(.unexpectedByte(b))
        }
        guard b == UInt8(ascii: "\"") else { throw error(.unexpectedByte(b)) }
        let key = try readRawString()
        if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
            index &+= 1
        } else {
            try expect(UInt8(ascii: ":"))
        }
        return key
    }

    /// Consumes the `[` that opens an array; iterate its elements with `nextElement(first:)`.
    @inline(__always) mutating func beginArray() throws(JSONCursorError) {
        try expect(UInt8(ascii: "["))
    }

    /// True with the cursor on the next element of the array being read; false after consuming the `]`.
    ///
    /// `first` is true before the first element. The caller must read or skip each element.
    @inline(__always) mutating func nextElement(first: inout Bool) throws(JSONCursorError) -> Bool {
        let b = try peek()
        if first {
            first = false
            if b == UInt8(ascii: "]") {
                index &+= 1
                return false
            }
            return true
        }
        if b == UInt8(ascii: ",") {
            index &+= 1
            if try peek() == UInt8(ascii: "]") {  // JSONDecoder accepts a trailing comma.
                index &+= 1
                return false
            }
            return true
        }
        if b == UInt8(ascii: "]") {
            index &+= 1
            return false
        }
        throw error(.unexpectedByte(b))
    }

    // MARK: - Strings

    /// True when a byte of `w` is a quote, a backslash or a control byte (exact, no false negatives).
    @inline(__always) private static func hasSpecial(_ w: UInt64) -> Bool {
        slack_bytes_highs(slack_bytes_json_special(w)) != 0
    }

    /// True when a byte of `w` is a quote or a backslash.
    @inline(__always) private static func hasQuoteOrBackslash(_ w: UInt64) -> Bool {
        slack_bytes_highs(slack_bytes_quote_or_backslash(w)) != 0
    }

    /// The bytes an escape at `i` spans for JSONDecoder's scanner: `\uXXXX` takes six whatever the X are (they are
    /// validated when the string is decoded), any other escape two.
    @inline(__always) private static func escapeLength(_ base: UnsafePointer<UInt8>, _ i: Int, _ n: Int) -> Int {
        i &+ 1 < n && base[i &+ 1] == UInt8(ascii: "u") ? 6 : 2
    }

    /// Reads the string token at the cursor (after whitespace) without decoding it.
    ///
    /// - Complexity: O(n) in the token's length, eight bytes per step where nothing needs attention.
    mutating func readRawString() throws(JSONCursorError) -> JSONRawString {
        let open = try peek()
        guard open == UInt8(ascii: "\"") else { throw error(.unexpectedByte(open)) }
        let n = bytes.count
        guard let base = bytes.baseAddress else { throw error(.unexpectedEnd) }
        let start = index &+ 1
        var i = start
        var or: UInt64 = 0
        var escapes = false
        var control = false
        while true {
            while i &+ 8 <= n {
                let w = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                if Self.hasSpecial(w) { break }
                or |= w
                i &+= 8
            }
            guard i < n else { throw error(.unexpectedEnd, at: n) }
            let b = base[i]
            if b == UInt8(ascii: "\"") { break }
            if b == UInt8(ascii: "\\") {
                escapes = true
                i &+= Self.escapeLength(base, i, n)
                continue
            }
            if b < 0x20 { control = true }
            or |= UInt64(b)
            i &+= 1
        }
        index = i &+ 1
        return JSONRawString(start: start, end: i, hasEscapes: escapes, hasNonASCII: slack_bytes_highs(or) != 0,
                             hasControl: control)
    }

    /// Skips the string token at `index` (which holds its opening quote).
    @inline(__always) private mutating func skipString(base: UnsafePointer<UInt8>) throws(JSONCursorError) {
        let n = bytes.count
        var i = index &+ 1
        while true {
            while i &+ 8 <= n {
                let w = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                if Self.hasQuoteOrBackslash(w) { break }
                i &+= 8
            }
            guard i < n else { throw error(.unexpectedEnd, at: n) }
            let b = base[i]
            if b == UInt8(ascii: "\"") { break }
            i &+= b == UInt8(ascii: "\\") ? Self.escapeLength(base, i, n) : 1
        }
        index = i &+ 1
    }

    /// The raw bytes of `raw` (valid while the buffer is).
    @inline(__always) func contents(of raw: JSONRawString) -> UnsafeBufferPointer<UInt8> {
        guard let base = bytes.baseAddress, raw.start <= raw.end, raw.end <= bytes.count else {
            return UnsafeBufferPointer(start: nil, count: 0)
        }
        return UnsafeBufferPointer(start: base + raw.start, count: raw.end - raw.start)
    }

    /// True when `raw` holds exactly `literal`'s bytes with no escapes (for key comparison; no allocation).
    @inline(__always) func rawEquals(_ raw: JSONRawString, _ literal: StaticString) -> Bool {
        guard !raw.hasEscapes, raw.count == literal.utf8CodeUnitCount else { return false }
        let a = contents(of: raw)
        let b = literal.utf8Start
        for k in 0..<a.count where a[k] != b[k] { return false }
        return true
    }

    /// The string `raw` decodes to exactly as `JSONDecoder` decodes it, or nil where `JSONDecoder` refuses it.
    ///
    /// `JSONDecoder` refuses unescaped control bytes, unknown escapes, malformed `\u` escapes, lone or unpaired
    /// UTF-16 surrogates, and invalid UTF-8.
    /// - Complexity: O(n) in the token's length.
    func string(_ raw: JSONRawString) -> String? {
        if raw.hasControl { return nil }
        let buffer = contents(of: raw)
        if raw.hasNonASCII, !UTF8Check.isValid(buffer) { return nil }
        if !raw.hasEscapes { return String(decoding: buffer, as: UTF8.self) }
        return Self.unescape(buffer, strict: true)
    }

    /// True when `string(_:)` decodes `raw` (`JSONDecoder` refuses to open an object with an undecodable key).
    @inline(__always) func isDecodable(_ raw: JSONRawString) -> Bool {
        raw.isPlain || string(raw) != nil
    }

    /// The string `raw` decodes to, repairing what `string(_:)` refuses: invalid UTF-8, lone surrogates and
    /// malformed escapes become U+FFFD; control bytes are kept.
    ///
    /// - Complexity: O(n) in the token's length.
    func repairedString(_ raw: JSONRawString) -> String {
        let buffer = contents(of: raw)
        if !raw.hasEscapes { return String(decoding: buffer, as: UTF8.self) }
        return Self.unescape(buffer, strict: false) ?? ""
    }

    /// Reads the string at the cursor, repaired as `repairedString(_:)` does.
    mutating func readString() throws(JSONCursorError) -> String {
        repairedString(try readRawString())
    }

    /// The value of the four hex digits at `p[i..<i+4]`, or nil.
    @inline(__always)
    private static func hex4(_ p: UnsafeBufferPointer<UInt8>, _ i: Int) -> UInt32? {
        guard i >= 0, i &+ 4 <= p.count else { return nil }
        var value: UInt32 = 0
        for k in i..<(i &+ 4) {
            let c = p[k]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c &- UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c &- UInt8(ascii: "a") &+ 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c &- UInt8(ascii: "A") &+ 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Decodes the escapes of `p`; nil (strict mode only) where `JSONDecoder` would refuse the string.
    /// Over 60 lines: one loop over JSON string escapes (including surrogate pairs) that writes as it reads.
    private static func unescape(_ p: UnsafeBufferPointer<UInt8>, strict: Bool) -> String? {
        let n = p.count
        var failed = false
        // Every escape shrinks or keeps its size, except a repaired unknown escape (2 bytes → 3).
        let capacity = strict ? n : n + n / 2 + 4
        let result = String(unsafeUninitializedCapacity: capacity) { out -> Int in
            var i = 0
            var o = 0
            @inline(__always) func put(_ scalar: UInt32) {
                switch scalar {
                case 0..<0x80:
                    out[o] = UInt8(truncatingIfNeeded: scalar)
                    o &+= 1
                case 0x80..<0x800:
                    out[o] = UInt8(truncatingIfNeeded: 0xC0 | scalar >> 6)
                    out[o &+ 1] = UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F)
                    o &+= 2
                case 0x800..<0x10000:
                    out[o] = UInt8(truncatingIfNeeded: 0xE0 | scalar >> 12)
                    out[o &+ 1] = UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F)
                    out[o &+ 2] = UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F)
                    o &+= 3
                default:
                    out[o] = UInt8(truncatingIfNeeded: 0xF0 | scalar >> 18)
                    out[o &+ 1] = UInt8(truncatingIfNeeded: 0x80 | scalar >> 12 & 0x3F)
                    out[o &+ 2] = UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F)
                    out[o &+ 3] = UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F)
                    o &+= 4
                }
            }
            while i < n {
                let b = p[i]
                if b != UInt8(ascii: "\\") {
                    out[o] = b
                    o &+= 1
                    i &+= 1
                    continue
                }
                guard i &+ 1 < n else {
                    if strict { failed = true; return 0 }
                    put(0xFFFD)
                    break
                }
                let e = p[i &+ 1]
                i &+= 2
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): put(UInt32(e))
                case UInt8(ascii: "b"): put(0x08)
                case UInt8(ascii: "f"): put(0x0C)
                case UInt8(ascii: "n"): put(0x0A)
                case UInt8(ascii: "r"): put(0x0D)
                case UInt8(ascii: "t"): put(0x09)
                case UInt8(ascii: "u"):
                    guard let unit = hex4(p, i) else {
                        if strict { failed = true; return 0 }
                        put(0xFFFD)
                        continue
                    }
                    i &+= 4
                    switch unit {
                    case 0xD800...0xDBFF:
                        if i &+ 6 <= n, p[i] == UInt8(ascii: "\\"), p[i &+ 1] == UInt8(ascii: "u"),
                           let low = hex4(p, i &+ 2), (0xDC00...0xDFFF).contains(low) {
                            i &+= 6
                            put(0x10000 &+ ((unit &- 0xD800) << 10) &+ (low &- 0xDC00))
                        } else {
                            if strict { failed = true; return 0 }
                            put(0xFFFD)
                        }
                    case 0xDC00...0xDFFF:
                        if strict { failed = true; return 0 }
                        put(0xFFFD)
                    default:
                        put(unit)
                    }
                default:
                    if strict { failed = true; return 0 }
                    put(0xFFFD)
                }
            }
            return o
        }
        return failed ? nil : result
    }

    // MARK: - Numbers and literals

    /// True for the bytes `JSONDecoder`'s scanner takes into a number token.
    @inline(__always) private static func isNumberByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
            UInt8(ascii: "e"), UInt8(ascii: "E"):
            return true
        default:
            return false
        }
    }

    /// Reads a number token (digits, signs, dots, exponents) at the cursor; its grammar is checked on conversion.
    ///
    /// - Returns: The token's bytes, valid while the buffer is.
    mutating func readNumberToken() throws(JSONCursorError) -> UnsafeBufferPointer<UInt8> {
        let first = try peek()
        guard first == UInt8(ascii: "-") || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")) else {
            throw error(.unexpectedByte(first))
        }
        let start = index
        index &+= 1
        while index < bytes.count, Self.isNumberByte(bytes[index]) { index &+= 1 }
        guard let base = bytes.baseAddress else { throw error(.unexpectedEnd) }
        return UnsafeBufferPointer(start: base + start, count: index - start)
    }

    /// Reads a number as `JSONDecoder` decodes an `Int64`: nil when not integral, out of range or malformed.
    mutating func readInt64() throws(JSONCursorError) -> Int64? {
        JSONNumber.int64(try readNumberToken())
    }

    /// Reads a number as `JSONDecoder` decodes a `Double`: nil when malformed or not representable.
    mutating func readDouble() throws(JSONCursorError) -> Double? {
        JSONNumber.double(try readNumberToken())
    }

    /// Consumes `literal` (whose first byte is at the cursor).
    @inline(__always) private mutating func consume(_ literal: StaticString) throws(JSONCursorError) {
        let n = literal.utf8CodeUnitCount
        guard index &+ n <= bytes.count else { throw error(.unexpectedEnd) }
        let p = literal.utf8Start
        for k in 0..<n where bytes[index &+ k] != p[k] { throw error(.invalidLiteral) }
        index &+= n
    }

    /// Reads `true` or `false`.
    mutating func readBool() throws(JSONCursorError) -> Bool {
        switch try peek() {
        case UInt8(ascii: "t"):
            try consume("true")
            return true
        case UInt8(ascii: "f"):
            try consume("false")
            return false
        case let b:
            throw error(.unexpectedByte(b))
        }
    }

    /// Consumes `null` if it is next; true when it was.
    mutating func readNull() throws(JSONCursorError) -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try consume("null")
        return true
    }

    // MARK: - Skipping

    /// Skips one value of any kind, without building anything and without recursion.
    ///
    /// Brackets must match; nesting deeper than `maxDepth` throws `tooDeep`. Inside containers only strings and
    /// brackets are checked: a document `JSONDecoder` accepts is always skipped correctly.
    /// - Complexity: O(n) in the value's length.
    mutating func skipValue() throws(JSONCursorError) {
        let first = try peek()
        guard let base = bytes.baseAddress else { throw error(.unexpectedEnd) }
        switch first {
        case UInt8(ascii: "\""):
            try skipString(base: base)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            try skipContainer(base: base)
        case UInt8(ascii: "t"):
            try consume("true")
        case UInt8(ascii: "f"):
            try consume("false")
        case UInt8(ascii: "n"):
            try consume("null")
        default:
            _ = try readNumberToken()
        }
    }

    /// Skips the array or object whose opening bracket is at `index`.
    private mutating func skipContainer(base: UnsafePointer<UInt8>) throws(JSONCursorError) {
        let n = bytes.count
        var depth = 0
        // Bit k set: level k is an object. Levels ≥ 64 spill into `deep`.
        var shallow: UInt64 = 0
        var deep: [UInt64] = []
        var i = index
        while i < n {
            let b = base[i]
            switch b {
            case UInt8(ascii: "\""):
                index = i
                try skipString(base: base)
                i = index
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard depth < Self.maxDepth else { throw error(.tooDeep, at: i) }
                let isObject: UInt64 = b == UInt8(ascii: "{") ? 1 : 0
                if depth < 64 {
                    shallow = shallow & ~(1 << UInt64(depth)) | isObject << UInt64(depth)
                } else {
                    let word = (depth - 64) >> 6
                    let bit = UInt64((depth - 64) & 63)
                    if word >= deep.count { deep.append(0) }
                    deep[word] = deep[word] & ~(1 << bit) | isObject << bit
                }
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard depth > 0 else { throw error(.unexpectedByte(b), at: i) }
                depth -= 1
                let isObject: UInt64
                if depth < 64 {
                    isObject = shallow >> UInt64(depth) & 1
                } else {
                    let word = (depth - 64) >> 6
                    isObject = word < deep.count ? deep[word] >> UInt64((depth - 64) & 63) & 1 : 0
                }
                guard (isObject == 1) == (b == UInt8(ascii: "}")) else { throw error(.unexpectedByte(b), at: i) }
                if depth == 0 {
                    index = i &+ 1
                    return
                }
            default:
                break
            }
            i &+= 1
        }
        throw error(.unexpectedEnd, at: n)
    }
}

/// Conversions of number tokens with `JSONDecoder`'s rules (checked against it by `FastJSONOracleTests`, through
/// the message fields that read numbers).
enum JSONNumber {
    /// True when `p` matches JSON's number grammar `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    ///
    /// - Returns: nil when malformed, else whether the token has a fraction or an exponent.
    static func grammar(_ p: UnsafeBufferPointer<UInt8>) -> (isValid: Bool, isPlainInteger: Bool) {
        let n = p.count
        var i = 0
        @inline(__always) func isDigit(_ k: Int) -> Bool {
            k < n && p[k] >= UInt8(ascii: "0") && p[k] <= UInt8(ascii: "9")
        }
        if i < n, p[i] == UInt8(ascii: "-") { i += 1 }
        guard isDigit(i) else { return (false, false) }
        if p[i] == UInt8(ascii: "0") {
            i += 1
            if isDigit(i) { return (false, false) }
        } else {
            while isDigit(i) { i += 1 }
        }
        var plain = true
        if i < n, p[i] == UInt8(ascii: ".") {
            plain = false
            i += 1
            guard isDigit(i) else { return (false, false) }
            while isDigit(i) { i += 1 }
        }
        if i < n, p[i] == UInt8(ascii: "e") || p[i] == UInt8(ascii: "E") {
            plain = false
            i += 1
            if i < n, p[i] == UInt8(ascii: "+") || p[i] == UInt8(ascii: "-") { i += 1 }
            guard isDigit(i) else { return (false, false) }
            while isDigit(i) { i += 1 }
        }
        return (i == n, plain)
    }

    /// The token as `JSONDecoder` decodes an `Int64`: integers exactly; other numbers when their `Double` value
    /// is integral and in range; nil otherwise.
    ///
    /// - Complexity: O(n) in the token's length.
    static func int64(_ p: UnsafeBufferPointer<UInt8>) -> Int64? {
        let (valid, plain) = grammar(p)
        guard valid else { return nil }
        if plain {
            let negative = p[0] == UInt8(ascii: "-")
            var value: Int64 = 0
            var overflow = false
            for k in (negative ? 1 : 0)..<p.count {
                let digit = Int64(p[k] &- UInt8(ascii: "0"))
                let (times, o1) = value.multipliedReportingOverflow(by: 10)
                let (next, o2) = negative ? times.subtractingReportingOverflow(digit)
                    : times.addingReportingOverflow(digit)
                if o1 || o2 {
                    overflow = true
                    break
                }
                value = next
            }
            if !overflow { return value }
        }
        // JSONDecoder's slow path: through Double when below 2^53, else through Decimal (truncating).
        let text = String(decoding: p, as: UTF8.self)
        guard let d = Double(text), let value = Int64(exactly: d) else { return nil }
        if d.magnitude < 0x1p53 { return value }
        return decimalInt64(p)
    }

    /// What `FixedWidthInteger.init?(_: Decimal)` in swift-foundation's JSONDecoder gives for the token parsed as a
    /// `Decimal`: the significant digits without trailing zeros must fit in a UInt64, a negative exponent divides
    /// (truncating), a positive one multiplies. Exact for tokens of up to 38 significant digits (`Decimal`'s
    /// precision); only reached for magnitudes ≥ 2^53 written with a fraction or an exponent.
    private static func decimalInt64(_ p: UnsafeBufferPointer<UInt8>) -> Int64? {
        var digits: [UInt8] = []
        var exponent = 0
        var negative = false
        var k = 0
        if k < p.count, p[k] == UInt8(ascii: "-") {
            negative = true
            k += 1
        }
        var inFraction = false
        while k < p.count {
            let b = p[k]
            if b == UInt8(ascii: ".") {
                inFraction = true
            } else if b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") {
                if !(digits.isEmpty && b == UInt8(ascii: "0")) { digits.append(b &- UInt8(ascii: "0")) }
                if inFraction { exponent -= 1 }
            } else {
                break
            }
            k += 1
        }
        if k < p.count {  // The exponent (the grammar was checked).
            k += 1
            var expNegative = false
            if k < p.count, p[k] == UInt8(ascii: "-") || p[k] == UInt8(ascii: "+") {
                expNegative = p[k] == UInt8(ascii: "-")
                k += 1
            }
            var e = 0
            while k < p.count {
                e = min(e * 10 + Int(p[k] &- UInt8(ascii: "0")), 1_000_000)
                k += 1
            }
            exponent += expNegative ? -e : e
        }
        while let last = digits.last, last == 0 {
            digits.removeLast()
            exponent += 1
        }
        var d: UInt64 = 0
        for digit in digits {
            let (times, o1) = d.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(UInt64(digit))
            if o1 || o2 { return nil }
            d = sum
        }
        if exponent < 0 {
            for _ in 0..<min(-exponent, 40) { d /= 10 }
        } else {
            for _ in 0..<min(exponent, 40) {
                let (times, overflow) = d.multipliedReportingOverflow(by: 10)
                if overflow { return nil }
                d = times
            }
        }
        guard let magnitude = Int64(exactly: d) else { return nil }
        return negative ? -magnitude : magnitude
    }

    /// The token as `JSONDecoder` decodes a `Double`: nil when malformed, infinite, or rounded to zero from a
    /// token with a non-zero digit (even in its exponent, as `JSONDecoder` does).
    static func double(_ p: UnsafeBufferPointer<UInt8>) -> Double? {
        guard grammar(p).isValid, let d = Double(String(decoding: p, as: UTF8.self)), d.isFinite else { return nil }
        if d == 0, p.contains(where: { $0 >= UInt8(ascii: "1") && $0 <= UInt8(ascii: "9") }) { return nil }
        return d
    }

    /// The token as the importer's lenient string reads it: the `Int64`'s text, else the `Double`'s text, else nil.
    static func lenientText(_ p: UnsafeBufferPointer<UInt8>) -> String? {
        if let int = int64(p) { return String(int) }
        if let double = double(p) { return String(double) }
        return nil
    }

    /// `Int64(d)` where that conversion is defined (the reference traps outside it).
    @inline(__always) static func truncating(_ d: Double) -> Int64? {
        guard d.isFinite, d >= -0x1p63, d < 0x1p63 else { return nil }
        return Int64(d)
    }
}

/// UTF-8 validation with the rules Swift's `String` applies (no overlongs, surrogates or values past U+10FFFF).
enum UTF8Check {
    /// True when `p` is well-formed UTF-8.
    ///
    /// - Complexity: O(n).
    static func isValid(_ p: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = p.count
        var i = 0
        @inline(__always) func isContinuation(_ k: Int) -> Bool { k < n && p[k] & 0xC0 == 0x80 }
        while i < n {
            let b = p[i]
            if b < 0x80 {
                i &+= 1
                continue
            }
            switch b {
            case 0xC2...0xDF:
                guard isContinuation(i &+ 1) else { return false }
                i &+= 2
            case 0xE0...0xEF:
                guard i &+ 2 < n else { return false }
                let b1 = p[i &+ 1]
                switch b {
                case 0xE0: guard b1 >= 0xA0 && b1 <= 0xBF else { return false }
                case 0xED: guard b1 >= 0x80 && b1 <= 0x9F else { return false }
                default: guard b1 & 0xC0 == 0x80 else { return false }
                }
                guard isContinuation(i &+ 2) else { return false }
                i &+= 3
            case 0xF0...0xF4:
                guard i &+ 3 < n else { return false }
                let b1 = p[i &+ 1]
                switch b {
                case 0xF0: guard b1 >= 0x90 && b1 <= 0xBF else { return false }
                case 0xF4: guard b1 >= 0x80 && b1 <= 0x8F else { return false }
                default: guard b1 & 0xC0 == 0x80 else { return false }
                }
                guard isContinuation(i &+ 2), isContinuation(i &+ 3) else { return false }
                i &+= 4
            default:
                return false
            }
        }
        return true
    }
}
