/// A Slack message timestamp such as `"1612345678.000200"`, kept exact.
///
/// Slack's `ts` is a message's identity within its conversation, so it is never parsed to a `Double`
/// (precision loss breaks equality and ordering). The exact string is kept for output and API calls, and
/// `key` (seconds × 1,000,000 + microseconds) is the sortable integer the store indexes.
package struct SlackTimestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The timestamp exactly as Slack wrote it.
    package let string: String
    /// Microseconds since the Unix epoch; the sort key.
    package let key: Int64

    /// Parses `seconds[.fraction]`; returns nil for anything else (empty, signs, letters, > 6 fraction digits beyond
    /// microseconds are truncated, not rounded).
    package init?(_ string: String) {
        guard let key = SlackTimestamp.parseKey(string) else { return nil }
        self.string = string
        self.key = key
    }

    /// Makes a timestamp from a sort key, formatted the way Slack writes it (`seconds.micros`, 6 digits).
    package init(key: Int64) {
        self.key = key
        let seconds = key / 1_000_000
        let micros = key % 1_000_000
        let fraction = String(micros)
        self.string = "\(seconds)." + String(repeating: "0", count: 6 - fraction.count) + fraction
    }

    /// The most integer digits a ts may have (seconds below 10^11).
    package static let maximumIntegerDigits = 11

    /// Seconds since the Unix epoch.
    package var seconds: Int64 { key / 1_000_000 }

    package var description: String { string }

    package static func < (lhs: SlackTimestamp, rhs: SlackTimestamp) -> Bool { lhs.key < rhs.key }
    package static func == (lhs: SlackTimestamp, rhs: SlackTimestamp) -> Bool { lhs.key == rhs.key }
    package func hash(into hasher: inout Hasher) { hasher.combine(key) }

    /// The sort key of a `ts` string, or nil when it is not `digits[.digits]` with at most 11 integer digits.
    ///
    /// Eleven digits reach the year 5138; the limit keeps keys and ids (`MessageID`, below 2^47) inside `Int64`, so
    /// ids stay time-ordered. A longer ts cannot be a real Slack time and is reported as invalid.
    /// - Complexity: O(n) in the string's length.
    package static func parseKey(_ string: String) -> Int64? {
        // Over the contiguous UTF-8 (iterating `String.UTF8View` was ~1% of the import's reader thread).
        var string = string
        return string.withUTF8(parseKey(bytes:))
    }

    private static func parseKey(bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var seconds: Int64 = 0
        var micros: Int64 = 0
        var fractionDigits = 0
        var seenDot = false
        var integerDigits = 0
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let digit = Int64(byte - UInt8(ascii: "0"))
                if seenDot {
                    if fractionDigits < 6 {
                        micros = micros * 10 + digit
                        fractionDigits += 1
                    }
                } else {
                    integerDigits += 1
                    guard integerDigits <= SlackTimestamp.maximumIntegerDigits else { return nil }
                    seconds = seconds * 10 + digit
                }
            case UInt8(ascii: "."):
                guard !seenDot, integerDigits > 0 else { return nil }
                seenDot = true
            default:
                return nil
            }
        }
        guard integerDigits > 0 else { return nil }
        while fractionDigits < 6 {
            micros *= 10
            fractionDigits += 1
        }
        return seconds * 1_000_000 + micros
    }
}
