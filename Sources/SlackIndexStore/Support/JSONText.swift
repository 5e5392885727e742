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
}
