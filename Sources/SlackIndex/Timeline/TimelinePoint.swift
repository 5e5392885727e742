import Foundation

/// A point in time as people write it on the command line: a ts, a date, a date and time, a permalink, or
/// `CONVERSATION/TS` (as search hits print them).
package struct TimelinePoint: Sendable, Equatable {
    /// The conversation the text named (permalinks and `C…/ts`), if any.
    package var conversationID: String?
    /// The exact ts when the text named a message.
    package var ts: String?
    /// The time, µs since the epoch.
    package var tsKey: Int64

    /// Parses `text`; dates and times without a zone are read in `timeZone`.
    ///
    /// - Complexity: O(n).
    package static func parse(_ text: String, timeZone: TimeZone) -> TimelinePoint? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let key = SlackTimestamp.parseKey(trimmed) {
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
        if let slash = trimmed.lastIndex(of: "/"), let key = SlackTimestamp.parseKey(String(trimmed[trimmed.index(after: slash)...])) {
            let conversation = String(trimmed[..<slash])
            guard !conversation.isEmpty else { return nil }
            return TimelinePoint(conversationID: conversation, ts: String(trimmed[trimmed.index(after: slash)...]), tsKey: key)
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let separators = CharacterSet(charactersIn: "-T: ")
        let numbers = trimmed.components(separatedBy: separators).filter { !$0.isEmpty }.map { Int($0) }
        guard numbers.count >= 3, numbers.count <= 6, numbers.allSatisfy({ $0 != nil }) else { return nil }
        let n = numbers.compactMap { $0 }
        var components = DateComponents(year: n[0], month: n[1], day: n[2])
        if n.count > 3 { components.hour = n[3] }
        if n.count > 4 { components.minute = n[4] }
        if n.count > 5 { components.second = n[5] }
        guard (1...12).contains(n[1]), (1...31).contains(n[2]), let date = calendar.date(from: components) else {
            return nil
        }
        return TimelinePoint(conversationID: nil, ts: nil, tsKey: Int64(date.timeIntervalSince1970 * 1_000_000))
    }
}
