/// FNV-1a 64-bit: a hash that is the same in every process (Swift's `Hasher` is seeded per process), used to tell
/// an unchanged message from an updated one across imports, and (in `slackindex mcp`) a search cursor's query.
package struct StableHash {
    package init() {}

    package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    /// Mixes in a string, then a separator byte so ("ab", "c") and ("a", "bc") differ.
    ///
    /// - Complexity: O(n) in the string's UTF-8 length.
    package mutating func combine(_ string: String?) {
        if var string {
            string.withUTF8 { bytes in
                for byte in bytes {
                    value ^= UInt64(byte)
                    value = value &* 0x100_0000_01b3
                }
            }
        }
        value ^= 0xff
        value = value &* 0x100_0000_01b3
    }

    /// Mixes in an integer.
    package mutating func combine(_ int: Int64) {
        var v = UInt64(bitPattern: int)
        for _ in 0..<8 {
            value ^= v & 0xff
            value = value &* 0x100_0000_01b3
            v >>= 8
        }
    }

    /// The hash as a signed integer, the way SQLite stores it.
    package var signed: Int64 { Int64(bitPattern: value) }
}
