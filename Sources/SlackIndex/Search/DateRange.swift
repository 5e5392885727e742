import Foundation

/// A calendar day in the proleptic Gregorian calendar, with no time zone attached.
///
/// Slack's date modifiers name days in the searching user's time zone; convert a `Day` to an instant range
/// with ``epochMicrosRange(in:)``.
public struct Day: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The year, 1...9999 for days made through the failable initializer.
    public let year: Int
    /// The month, 1...12.
    public let month: Int
    /// The day of the month, 1...31.
    public let day: Int

    /// Creates a day if the components name a real date between 0001-01-01 and 9999-12-31.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month),
              (1...Day.daysIn(month: month, year: year)).contains(day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Creates a day without validation; only for values produced by the civil-date arithmetic below.
    private init(unchecked year: Int, _ month: Int, _ day: Int) {
        self.year = year
        self.month = month
        self.day = day
    }

    /// The earliest representable day, 0001-01-01.
    public static let earliest = Day(unchecked: 1, 1, 1)
    /// The latest representable day, 9999-12-31.
    public static let latest = Day(unchecked: 9999, 12, 31)

    /// The day as `YYYY-MM-DD`.
    public var description: String {
        "\(Day.pad(year, 4))-\(Day.pad(month, 2))-\(Day.pad(day, 2))"
    }

    public static func < (lhs: Day, rhs: Day) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    /// The day `days` later (or earlier when negative), clamped to ``earliest``...``latest``.
    public func adding(days: Int) -> Day {
        let clampedDelta = max(-4_000_000, min(4_000_000, days))
        let serial = Day.serial(year: year, month: month, day: day) + clampedDelta
        let result = Day.civil(fromSerial: serial)
        return min(max(result, Day.earliest), Day.latest)
    }

    /// `2024-05-06 19:37`: the minute `seconds` (since 1970, UTC) falls in, in `timeZone`, by arithmetic (the
    /// zone's offset at that instant, then the civil date): a `DateFormatter` made per line cost ICU's formatter
    /// set-up, a tenth of a short `search`. Times outside 0001…9999 are clamped to those years.
    /// - Complexity: O(1).
    package static func localMinute(_ seconds: Int64, in timeZone: TimeZone) -> String {
        let clamped = max(-62_135_596_800, min(253_402_300_799, seconds))
        let local = clamped + Int64(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(clamped))))
        let days = local >= 0 ? local / 86_400 : (local - 86_399) / 86_400
        let second = Int(local - days * 86_400)
        let day = Day(unchecked: 1970, 1, 1).adding(days: Int(days))
        return "\(day) \(Day.pad(second / 3_600, 2)):\(Day.pad(second % 3_600 / 60, 2))"
    }

    /// The calendar day that contains `now` in time zone `timeZone`.
    public static func today(in timeZone: TimeZone, now: Date = Date()) -> Day {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: now)
        return Day(year: parts.year ?? 1970, month: parts.month ?? 1, day: parts.day ?? 1) ?? Day.earliest
    }

    /// The half-open range `[start of this day, start of the next day)` in UTC microseconds since 1970.
    ///
    /// Days are interpreted in `timeZone`, so a DST transition day spans 23 or 25 hours.
    /// - Complexity: O(1).
    public func epochMicrosRange(in timeZone: TimeZone) -> (lower: Int64, upper: Int64) {
        let calendar = Day.calendar(timeZone)
        return (Day.startMicros(of: self, calendar), Day.startMicros(of: nextUnclamped, calendar))
    }

    /// The start of this day in `timeZone`, in UTC microseconds since 1970.
    /// - Complexity: O(1).
    public func startEpochMicros(in timeZone: TimeZone) -> Int64 {
        Day.startMicros(of: self, Day.calendar(timeZone))
    }

    /// The following day, allowed to step past 9999-12-31 so that it can serve as an exclusive upper bound.
    var nextUnclamped: Day {
        Day.civil(fromSerial: Day.serial(year: year, month: month, day: day) + 1)
    }

    /// Number of days in `month` of `year`.
    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2:
            let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
            return leap ? 29 : 28
        case 4, 6, 9, 11:
            return 30
        default:
            return 31
        }
    }

    /// Days since 1970-01-01 (Howard Hinnant's `days_from_civil`).
    static func serial(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The civil date for a day count since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    private static func civil(fromSerial serial: Int) -> Day {
        let z = serial + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return Day(unchecked: year, month, day)
    }

    private static func calendar(_ timeZone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }

    /// Local midnight of `day` (or the first instant of the day when midnight is skipped by DST).
    private static func startMicros(of day: Day, _ calendar: Calendar) -> Int64 {
        var parts = DateComponents()
        parts.year = day.year
        parts.month = day.month
        parts.day = day.day
        parts.hour = 0
        if let date = calendar.date(from: parts) {
            let start = calendar.startOfDay(for: date)
            return Int64((start.timeIntervalSince1970 * 1_000_000).rounded())
        }
        // Fallback (not expected): UTC midnight shifted by the zone's current offset.
        let seconds = Int64(serial(year: day.year, month: day.month, day: day.day)) * 86_400
            - Int64(calendar.timeZone.secondsFromGMT())
        return seconds * 1_000_000
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}

/// An inclusive range of calendar days, `first...last`.
public struct DayRange: Sendable, Hashable, CustomStringConvertible {
    /// The first day in the range.
    public let first: Day
    /// The last day in the range (inclusive).
    public let last: Day

    /// Creates a range if `first <= last`.
    public init?(first: Day, last: Day) {
        guard first <= last else { return nil }
        self.first = first
        self.last = last
    }

    /// A range holding exactly one day.
    public init(single day: Day) {
        first = day
        last = day
    }

    /// The whole of `month` in `year`, or nil for an invalid month or year.
    public static func month(_ month: Int, of year: Int) -> DayRange? {
        guard let first = Day(year: year, month: month, day: 1),
              let last = Day(year: year, month: month, day: Day.daysIn(month: month, year: year)) else { return nil }
        return DayRange(first: first, last: last)
    }

    /// The whole of `year`, or nil outside 1...9999.
    public static func year(_ year: Int) -> DayRange? {
        guard let first = Day(year: year, month: 1, day: 1), let last = Day(year: year, month: 12, day: 31) else {
            return nil
        }
        return DayRange(first: first, last: last)
    }

    /// `first...last` in ISO form.
    public var description: String { "\(first)...\(last)" }

    /// The half-open range `[start of first, start of the day after last)` in UTC microseconds since 1970.
    /// - Complexity: O(1).
    public func epochMicrosRange(in timeZone: TimeZone) -> (lower: Int64, upper: Int64) {
        (first.startEpochMicros(in: timeZone), last.nextUnclamped.startEpochMicros(in: timeZone))
    }
}

/// Half-open bounds `[lower, upper)` on a message timestamp, in UTC microseconds since 1970.
public struct TimeBounds: Sendable, Hashable {
    /// Inclusive lower bound, or nil when unbounded below.
    public var lower: Int64?
    /// Exclusive upper bound, or nil when unbounded above.
    public var upper: Int64?

    /// Creates bounds; nil means unbounded on that side.
    public init(lower: Int64? = nil, upper: Int64? = nil) {
        self.lower = lower
        self.upper = upper
    }

    /// True when the filters contradict each other, so no timestamp can match.
    public var isEmpty: Bool {
        guard let lower, let upper else { return false }
        return lower >= upper
    }

    /// True when neither side is bounded.
    public var isUnbounded: Bool { lower == nil && upper == nil }

    /// Whether `micros` lies inside the bounds.
    public func contains(_ micros: Int64) -> Bool {
        if let lower, micros < lower { return false }
        if let upper, micros >= upper { return false }
        return true
    }

    /// The intersection of two bounds (may be empty).
    public func intersection(_ other: TimeBounds) -> TimeBounds {
        TimeBounds(lower: TimeBounds.pick(lower, other.lower, max), upper: TimeBounds.pick(upper, other.upper, min))
    }

    private static func pick(_ a: Int64?, _ b: Int64?, _ choose: (Int64, Int64) -> Int64) -> Int64? {
        switch (a, b) {
        case let (.some(x), .some(y)): return choose(x, y)
        case let (.some(x), .none): return x
        case let (.none, .some(y)): return y
        case (.none, .none): return nil
        }
    }
}

extension SearchQuery.Filter {
    /// The timestamp bounds this filter imposes, or nil for filters that are not about dates.
    ///
    /// `before:D` is `ts < start(D)`; `after:D` is `ts >= start(D + 1)` (Slack's `after:` excludes the day
    /// itself); `on:D` is the local day; `during:` is the whole range. Days are local to `timeZone`.
    /// - Complexity: O(1).
    public func timeBounds(in timeZone: TimeZone) -> TimeBounds? {
        switch self {
        case .before(let day):
            return TimeBounds(upper: day.startEpochMicros(in: timeZone))
        case .after(let day):
            return TimeBounds(lower: day.nextUnclamped.startEpochMicros(in: timeZone))
        case .on(let day):
            let range = day.epochMicrosRange(in: timeZone)
            return TimeBounds(lower: range.lower, upper: range.upper)
        case .during(let days):
            let range = days.epochMicrosRange(in: timeZone)
            return TimeBounds(lower: range.lower, upper: range.upper)
        case .inConversation, .from, .to, .with, .has, .isThread:
            return nil
        }
    }
}

extension SearchQuery {
    /// The intersection of all date filters as half-open UTC microsecond bounds in the user's time zone.
    ///
    /// Unbounded sides are nil. Contradictory filters (e.g. `before:2024-01-01 after:2024-02-01`) give bounds
    /// whose ``TimeBounds/isEmpty`` is true; the caller should return no results.
    /// - Complexity: O(number of filters).
    public func timeBounds(in timeZone: TimeZone) -> TimeBounds {
        filters.reduce(TimeBounds()) { bounds, filter in
            guard let extra = filter.timeBounds(in: timeZone) else { return bounds }
            return bounds.intersection(extra)
        }
    }
}
