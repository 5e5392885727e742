/// A message's row id in the archive: globally time-ordered, the second of its `ts` × 1,024 plus a slot (0–1,023)
/// from its fraction, about a millisecond each. It is also the search index's rowid, so the index returns the newest
/// matches first and a time range is a rowid range.
///
/// Ids are that coarse for the index's size: FTS5 stores each word's documents as rowid deltas, and microsecond ids
/// (`ts` × 64, before archive migration v13) made each delta three bytes longer: the 1M-message archive's index was
/// 193 MB. A message whose slot is taken (another message in the same millisecond, e.g. the same ts in another
/// conversation) takes the next free slot of its second, else the first free one of its second, else the first free
/// id after it (over 1,024 messages in one second): so the order within one second is approximate, and a date bound
/// on whole seconds stays exact unless a second overflows. Timelines order by `ts_key`, which is exact.
/// `SlackTimestamp.parseKey` refuses ts beyond 11 integer digits, so ids stay below 2^47.
///
/// The one place that knows the arithmetic: every other layer asks this type.
package struct MessageID: Hashable, Comparable, Sendable {
    /// Ids per second of ts.
    package static let perSecond: Int64 = 1024
    private static let microsecondsPerSecond: Int64 = 1_000_000

    package var rawValue: Int64

    package init(rawValue: Int64) { self.rawValue = rawValue }

    /// The id a message at `tsKey` (µs) takes when no other message holds it: its second's first id plus its
    /// fraction scaled to 1,024 slots.
    package init(preferredFor tsKey: Int64) {
        let (seconds, micros) = tsKey.quotientAndRemainder(dividingBy: Self.microsecondsPerSecond)
        rawValue = seconds &* Self.perSecond &+ micros &* Self.perSecond / Self.microsecondsPerSecond
    }

    /// The ids of the second holding `tsKey` (µs).
    package static func second(of tsKey: Int64) -> ClosedRange<Int64> {
        let first = tsKey / microsecondsPerSecond &* perSecond
        return first...(first &+ perSecond &- 1)
    }

    /// The message's time (µs) to within its slot (~1 ms), further when its slot was taken; its `ts_key` is exact.
    package var tsKey: Int64 {
        let (seconds, slot) = rawValue.quotientAndRemainder(dividingBy: Self.perSecond)
        return seconds &* Self.microsecondsPerSecond &+ slot &* Self.microsecondsPerSecond / Self.perSecond
    }

    /// The smallest id of a message at or after `tsKey` (µs); `Int64.min` for nil. Exact for whole seconds.
    package static func lowerBound(atOrAfter tsKey: Int64?) -> Int64 {
        tsKey.map { MessageID(preferredFor: $0).rawValue } ?? Int64.min
    }

    /// The smallest id of a message at or after `tsKey` (µs), as an exclusive upper bound; `Int64.max` for nil.
    package static func upperBound(before tsKey: Int64?) -> Int64 {
        tsKey.map { MessageID(preferredFor: $0).rawValue } ?? Int64.max
    }

    /// The SQL expression of the first id of the second holding the integer column `tsKey` (`second(of:)`).
    static func secondSQL(_ tsKey: String) -> String {
        "(\(tsKey) / \(microsecondsPerSecond)) * \(perSecond)"
    }

    /// The SQL expression of `init(preferredFor:)` over the integer column `tsKey`.
    static func preferredSQL(_ tsKey: String) -> String {
        let micros = microsecondsPerSecond
        return "\(secondSQL(tsKey)) + (\(tsKey) % \(micros)) * \(perSecond) / \(micros)"
    }

    package static func < (lhs: MessageID, rhs: MessageID) -> Bool { lhs.rawValue < rhs.rawValue }
}
