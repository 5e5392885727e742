/// A message's row id in the archive: globally time-ordered, `ts` in microseconds × 64 plus a tie-breaker (0–63)
/// for messages of different conversations that share a ts. It is also the search index's rowid, so the index
/// returns the newest matches first and a time range is a rowid range. A 65th message at one microsecond takes the
/// next free id (`MessageWriter.upsert`), a few microseconds ahead; ts beyond 11 integer digits are refused
/// (`SlackTimestamp.parseKey`), so `tsKey × 64` never overflows.
///
/// The one place that knows the arithmetic: every other layer asks this type.
package struct MessageID: Hashable, Comparable, Sendable {
    /// How many messages may share one ts (the tie-breaker's range).
    package static let tieBreakers: Int64 = 64

    package var rawValue: Int64

    package init(rawValue: Int64) { self.rawValue = rawValue }

    /// The id of the `tieBreaker`-th message at `tsKey` (µs).
    package init(tsKey: Int64, tieBreaker: Int64) {
        rawValue = tsKey &* Self.tieBreakers &+ tieBreaker
    }

    /// The message's time (µs), its `ts_key`.
    package var tsKey: Int64 { rawValue >> 6 }

    /// The smallest id of a message at or after `tsKey` (µs); `Int64.min` for nil.
    package static func lowerBound(atOrAfter tsKey: Int64?) -> Int64 {
        tsKey.map { $0 &* tieBreakers } ?? Int64.min
    }

    /// The smallest id of a message at or after `tsKey` (µs), as an exclusive upper bound; `Int64.max` for nil.
    package static func upperBound(before tsKey: Int64?) -> Int64 {
        tsKey.map { $0 &* tieBreakers } ?? Int64.max
    }

    package static func < (lhs: MessageID, rhs: MessageID) -> Bool { lhs.rawValue < rhs.rawValue }
}
