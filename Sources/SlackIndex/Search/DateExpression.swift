import Foundation

/// A date or time as people type it, read the same way by every command: `search`'s `before:`/`after:`/`on:`/
/// `during:` and its `--before`/`--after` flags, and `history`'s `--before`/`--after`/`--around`.
///
/// A value is a range of whole days (`2024-05-01`, `may`, `last week`) or a time on a day (`2024-05-01T14:30`).
/// Anything else is nil, and callers show ``acceptedForms``: `03/15/2024` is refused (month or day first?) rather
/// than guessed.
package enum DateExpression: Equatable, Sendable {
    /// Whole days: one (`2024-05-01`, `today`, `monday`) or more (`2024-05`, `may`, `last week`, `2024`).
    case days(DayRange)
    /// A time of day on a day, in seconds after midnight, in the reader's time zone.
    case time(Day, secondsIntoDay: Int)

    /// The forms ``parse(_:today:)`` reads, for error messages.
    package static let acceptedForms =
        "a date (2024-05-01), a date and time (2024-05-01T14:30 or \"2024-05-01 14:30:05\"), a month (2024-05, "
        + "may, \"may 2024\"), a year (2024), today, yesterday, a weekday (monday: the latest one, today "
        + "included), \"this week\", \"last week\", \"this month\", \"last month\", \"this year\", \"last year\", "
        + "or \"3 days ago\""

    /// The days this expression covers (a time covers its day).
    package var dayRange: DayRange {
        switch self {
        case .days(let range): return range
        case .time(let day, _): return DayRange(single: day)
        }
    }

    /// The first instant it names, in µs since 1970: the start of its first day, or the time itself.
    package func startMicros(in timeZone: TimeZone) -> Int64 {
        switch self {
        case .days(let range): return range.first.startEpochMicros(in: timeZone)
        case .time(let day, let seconds):
            // Local midnight plus the seconds: right except across a DST change on that very day (off by the
            // change, which a point on the command line tolerates).
            return day.startEpochMicros(in: timeZone) + Int64(seconds) * 1_000_000
        }
    }

    /// Reads `text` (case and repeated spaces do not matter); `today` resolves the relative forms.
    ///
    /// - Complexity: O(n).
    package static func parse(_ text: String, today: Day) -> DateExpression? {
        let words = text.lowercased().split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard !words.isEmpty, words.count <= 3 else { return nil }
        if words.count == 1, let single = word(words[0], today: today) { return single }
        if let relative = relative(words, today: today) { return .days(relative) }
        if words.count == 2, let day = isoDay(words[0]), let seconds = timeOfDay(words[1]) {
            return .time(day, secondsIntoDay: seconds)
        }
        if words.count == 2, let month = monthNames[words[0]] ?? monthNames[words[1]] {
            let yearWord = monthNames[words[0]] != nil ? words[1] : words[0]
            guard yearWord.count == 4, let year = Int(yearWord), let range = DayRange.month(month, of: year) else {
                return nil
            }
            return .days(range)
        }
        return nil
    }

    /// One word: an ISO date, date-time, month or year; today, yesterday; a month or weekday name.
    private static func word(_ word: String, today: Day) -> DateExpression? {
        switch word {
        case "today": return .days(DayRange(single: today))
        case "yesterday": return .days(DayRange(single: today.adding(days: -1)))
        default: break
        }
        if let month = monthNames[word] {
            // The latest such month that has started: this year's if it is this month or earlier.
            return DayRange.month(month, of: month <= today.month ? today.year : today.year - 1).map { .days($0) }
        }
        if let weekday = weekdayNames[word] {
            return .days(DayRange(single: today.adding(days: -((weekdayIndex(today) - weekday + 7) % 7))))
        }
        if let split = word.firstIndex(of: "t"), let day = isoDay(String(word[..<split])),
            let seconds = timeOfDay(String(word[word.index(after: split)...]))
        {
            return .time(day, secondsIntoDay: seconds)
        }
        if let day = isoDay(word) { return .days(DayRange(single: day)) }
        let parts = numericParts(word)
        switch parts.count {
        case 1 where parts[0].digits == 4: return DayRange.year(parts[0].value).map { .days($0) }
        case 2 where parts[0].digits == 4 && parts[1].digits <= 2:
            return DayRange.month(parts[1].value, of: parts[0].value).map { .days($0) }
        default: return nil
        }
    }

    /// `this week`, `last week` (Monday to Sunday), `this|last month`, `this|last year`, `N days|weeks ago`.
    private static func relative(_ words: [String], today: Day) -> DayRange? {
        if words.count == 3, words[2] == "ago", let count = Int(words[0]), (0...100_000).contains(count) {
            switch words[1] {
            case "day", "days": return DayRange(single: today.adding(days: -count))
            case "week", "weeks": return DayRange(single: today.adding(days: -7 * count))
            default: return nil
            }
        }
        guard words.count == 2, words[0] == "this" || words[0] == "last" else { return nil }
        let back = words[0] == "last"
        switch words[1] {
        case "week":
            let monday = today.adding(days: -weekdayIndex(today) - (back ? 7 : 0))
            return DayRange(first: monday, last: back ? monday.adding(days: 6) : today)
        case "month":
            let month = back ? (today.month == 1 ? 12 : today.month - 1) : today.month
            let year = back && today.month == 1 ? today.year - 1 : today.year
            return DayRange.month(month, of: year)
        case "year":
            return DayRange.year(back ? today.year - 1 : today.year)
        default: return nil
        }
    }

    /// `2024-05-01` (a four-digit year, a real date).
    private static func isoDay(_ word: String) -> Day? {
        let parts = numericParts(word)
        guard parts.count == 3, parts[0].digits == 4, parts[1].digits <= 2, parts[2].digits <= 2 else { return nil }
        return Day(year: parts[0].value, month: parts[1].value, day: parts[2].value)
    }

    /// `14:30` or `14:30:05` (24-hour), as seconds after midnight.
    private static func timeOfDay(_ word: String) -> Int? {
        let parts = word.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count), parts.allSatisfy({ (1...2).contains($0.count) && $0.allSatisfy(\.isASCII) }),
            let hour = Int(parts[0]), let minute = Int(parts[1]), (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        let second = parts.count == 3 ? Int(parts[2]) : 0
        guard let second, (0...59).contains(second) else { return nil }
        return hour * 3600 + minute * 60 + second
    }

    /// Monday 0 … Sunday 6 (1970-01-01 was a Thursday).
    private static func weekdayIndex(_ day: Day) -> Int {
        let serial = Day.serial(year: day.year, month: day.month, day: day.day)
        return ((serial + 3) % 7 + 7) % 7
    }

    /// Splits `2024-05-01` into numbers with their digit counts; empty unless every part is 1–4 ASCII digits.
    private static func numericParts(_ value: String) -> [(value: Int, digits: Int)] {
        var parts: [(value: Int, digits: Int)] = []
        for part in value.utf8.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false) {
            guard (1...4).contains(part.count), part.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
            else { return [] }
            parts.append((part.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }, part.count))
            if parts.count > 3 { return [] }
        }
        return parts
    }

    package static let monthNames: [String: Int] = {
        let names = [
            "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
            "november", "december",
        ]
        var table: [String: Int] = ["sept": 9]
        for (offset, name) in names.enumerated() {
            table[name] = offset + 1
            table[String(name.prefix(3))] = offset + 1
        }
        return table
    }()

    private static let weekdayNames: [String: Int] = {
        let names = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        var table: [String: Int] = ["tues": 1, "thur": 3, "thurs": 3]
        for (offset, name) in names.enumerated() {
            table[name] = offset
            table[String(name.prefix(3))] = offset
        }
        return table
    }()
}
