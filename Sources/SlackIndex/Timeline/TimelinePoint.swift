import Foundation

/// A point in time as people write it on the command line: a ts, a permalink, `CONVERSATION/TS` (as search hits
/// print them), or any date ``DateExpression`` reads (a date, a date and time, `yesterday`, `last week`…: the
/// start of what it names).
package struct TimelinePoint: Sendable, Equatable {
    /// The conversation the text named (permalinks and `C…/ts`), if any.
    package var conversationID: String?
    /// The exact ts when the text named a message.
    package var ts: String?
    /// The time, µs since the epoch.
    package var tsKey: Int64

    /// Parses `text`; dates and times are read in `timeZone`, relative ones (`yesterday`) from `now`.
    ///
    /// A bare number is a ts only when it looks like one (9 to 11 digits before an optional fraction), so `2024`
    /// is the year, not a second in 1970.
    /// - Complexity: O(n).
    package static func parse(_ text: String, timeZone: TimeZone, now: Date = Date()) -> TimelinePoint? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if looksLikeTS(trimmed), let key = SlackTimestamp.parseKey(trimmed) {
            return TimelinePoint(conversationID: nil, ts: trimmed, tsKey: key)
        }
        if let range = trimmed.range(of: "/archives/") {
            // https://acme.slack.com/archives/C123/p1714000000000100?thread_ts=…
            let rest = trimmed[range.upperBound...]
            let parts = rest.split(separator: "/", maxSplits: 1)
            guard parts.count == 2, parts[1].hasPrefix("p") else { return nil }
            let digits = parts[1].dropFirst().prefix { $0.isNumber }
            guard digits.count > 6 else { return nil }
            let ts = String(digits.dropLast(6)) + "." + String(digits.suffix(6))
            guard let key = SlackTimestamp.parseKey(ts) else { return nil }
            return TimelinePoint(conversationID: String(parts[0]), ts: ts, tsKey: key)
        }
        if let slash = trimmed.lastIndex(of: "/"), case let ts = String(trimmed[trimmed.index(after: slash)...]),
            looksLikeTS(ts), let key = SlackTimestamp.parseKey(ts)
        {
            let conversation = String(trimmed[..<slash])
            guard !conversation.isEmpty else { return nil }
            return TimelinePoint(conversationID: conversation, ts: ts, tsKey: key)
        }
        guard let date = DateExpression.parse(trimmed, today: Day.today(in: timeZone, now: now)) else { return nil }
        return TimelinePoint(conversationID: nil, ts: nil, tsKey: date.startMicros(in: timeZone))
    }

    /// 9 to 11 digits, then optionally `.` and up to 6 digits: `1714000000.000100`.
    static func looksLikeTS(_ text: String) -> Bool {
        let parts = text.utf8.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
        let isDigits = { (part: Substring.UTF8View.SubSequence) in
            part.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        }
        guard let whole = parts.first, (9...11).contains(whole.count), isDigits(whole) else { return false }
        return parts.count == 1 || ((1...6).contains(parts[1].count) && isDigits(parts[1]))
    }
}

extension Message {
    /// `#general/1715023066.053223` for a channel, `D0123ABCD/1715023066.053223` for a DM (whose name has spaces):
    /// how search hits name a message, and what `TimelinePoint.parse` reads back to open it in context.
    package var handle: String {
        let usable = conversation.hasPrefix("#") && !conversation.contains(where: { $0.isWhitespace || $0 == "/" })
        return "\(usable ? conversation : conversationID)/\(ts)"
    }
}
