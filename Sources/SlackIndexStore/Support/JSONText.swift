import Foundation

/// Writing JSON text by hand where building `Encodable` values would cost more than the text itself.
package enum JSONText {
    /// A JSON array of strings.
    package static func array(_ strings: [String]) -> String {
        var out = "["
        for (index, string) in strings.enumerated() {
            if index > 0 { out += "," }
            appendQuoted(string, to: &out)
        }
        return out + "]"
    }

    /// Appends `string` as a quoted JSON string: `"` and `\` escaped, `\n` `\r` `\t` by name, other control
    /// characters as `\u00XX`; everything else as is (UTF-8, no `\u` escapes).
    /// - Complexity: O(n) in the string's scalars.
    package static func appendQuoted(_ string: String, to out: inout String) {
        out += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    /// A JSON array of strings read back, nil when the text is not one: what `array` writes (no escapes, no
    /// spaces) by a scan of its bytes, anything else through `JSONDecoder`.
    ///
    /// Conversations keep their members this way and reactions their users, and every history page reads them: a
    /// 2,002-member channel's list took ~1.3 ms a page through `JSONDecoder` (the generated 10M export's busiest
    /// channel; a large organisation's `#general` has tens of thousands).
    /// - Complexity: O(n) in the text's bytes.
    package static func strings(_ text: String) -> [String]? {
        if let plain = plainStrings(text) { return plain }
        return try? JSONDecoder().decode([String].self, from: Data(text.utf8))
    }

    /// `["a","b"]` with nothing escaped and nothing between the values, or nil.
    static func plainStrings(_ text: String) -> [String]? {
        var text = text
        return text.withUTF8(plainStrings)
    }

    private static func plainStrings(_ bytes: UnsafeBufferPointer<UInt8>) -> [String]? {
        let quote = UInt8(ascii: "\""), end = bytes.count - 1
        guard end >= 1, bytes[0] == UInt8(ascii: "["), bytes[end] == UInt8(ascii: "]") else { return nil }
        var strings: [String] = []
        var index = 1
        while index < end {
            if !strings.isEmpty {
                guard bytes[index] == UInt8(ascii: ","), index + 1 < end else { return nil }
                index += 1
            }
            guard bytes[index] == quote else { return nil }
            let start = index + 1
            var close = start
            while close < end, bytes[close] != quote {
                // An escape or a raw control character (which JSON refuses): the decoder's work.
                guard bytes[close] != UInt8(ascii: "\\"), bytes[close] >= 0x20 else { return nil }
                close += 1
            }
            guard close < end else { return nil }
            strings.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<close]), as: UTF8.self))
            index = close + 1
        }
        return strings
    }
}
