import Foundation
import Testing

@_spi(Benchmarks) @testable import SlackIndex
@_spi(Benchmarks) @testable import SlackIndexStore
@testable import SlackIndexTestSupport

/// Microseconds since 1970 for a UTC wall-clock time.
private func utcMicros(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0) -> Int64 {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC") ?? TimeZone.current
    let date = calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour)) ?? Date()
    return Int64(date.timeIntervalSince1970) * 1_000_000
}

private func zone(_ identifier: String) -> TimeZone {
    TimeZone(identifier: identifier) ?? TimeZone.current
}

private func day(_ year: Int, _ month: Int, _ dayOfMonth: Int) -> Day {
    Day(year: year, month: month, day: dayOfMonth) ?? Day.earliest
}

private let losAngeles = zone("America/Los_Angeles")
private let tokyo = zone("Asia/Tokyo")
private let hour: Int64 = 3_600_000_000

@Suite struct QueryDateTests {
    @Test func dayValidationAndArithmetic() {
        #expect(Day(year: 2023, month: 2, day: 29) == nil)
        #expect(Day(year: 2024, month: 2, day: 29) != nil)
        #expect(Day(year: 1900, month: 2, day: 29) == nil)
        #expect(Day(year: 2000, month: 2, day: 29) != nil)
        #expect(Day(year: 2024, month: 4, day: 31) == nil)
        #expect(Day(year: 0, month: 1, day: 1) == nil)
        #expect(day(2024, 3, 1).adding(days: -1) == day(2024, 2, 29))
        #expect(day(2023, 12, 31).adding(days: 1) == day(2024, 1, 1))
        #expect(day(2024, 1, 1).adding(days: 366) == day(2025, 1, 1))
        #expect(Day.earliest.adding(days: -5) == Day.earliest)
        #expect(Day.latest.adding(days: 5) == Day.latest)
        #expect(day(2024, 1, 31) < day(2024, 2, 1))
        #expect(day(2024, 5, 1).description == "2024-05-01")
    }

    @Test func todayDependsOnTimeZone() {
        let instant = Date(timeIntervalSince1970: TimeInterval(utcMicros(2024, 5, 1, 3) / 1_000_000))
        #expect(Day.today(in: losAngeles, now: instant) == day(2024, 4, 30))
        #expect(Day.today(in: tokyo, now: instant) == day(2024, 5, 1))
    }

    @Test func dayBoundariesInTwoZones() {
        // Los Angeles is UTC-7 in May (PDT); Tokyo is always UTC+9.
        let la = day(2024, 5, 1).epochMicrosRange(in: losAngeles)
        #expect(la.lower == utcMicros(2024, 5, 1, 7))
        #expect(la.upper == utcMicros(2024, 5, 2, 7))
        let tk = day(2024, 5, 1).epochMicrosRange(in: tokyo)
        #expect(tk.lower == utcMicros(2024, 4, 30, 15))
        #expect(tk.upper == utcMicros(2024, 5, 1, 15))
    }

    @Test func dstTransitionDays() {
        // Spring forward: 2024-03-10 in Los Angeles has 23 hours; fall back: 2024-11-03 has 25.
        let spring = day(2024, 3, 10).epochMicrosRange(in: losAngeles)
        #expect(spring.lower == utcMicros(2024, 3, 10, 8))
        #expect(spring.upper == utcMicros(2024, 3, 11, 7))
        #expect(spring.upper - spring.lower == 23 * hour)
        let fall = day(2024, 11, 3).epochMicrosRange(in: losAngeles)
        #expect(fall.lower == utcMicros(2024, 11, 3, 7))
        #expect(fall.upper - fall.lower == 25 * hour)
        let tokyoSame = day(2024, 3, 10).epochMicrosRange(in: tokyo)
        #expect(tokyoSame.upper - tokyoSame.lower == 24 * hour)
    }

    @Test func midnightSkippedByDST() {
        // São Paulo skipped 2018-11-04 00:00 (clocks went to 01:00, UTC-2): the day starts at 03:00 UTC.
        let range = day(2018, 11, 4).epochMicrosRange(in: zone("America/Sao_Paulo"))
        #expect(range.lower == utcMicros(2018, 11, 4, 3))
        #expect(range.upper - range.lower == 23 * hour)
    }

    @Test func filterSemantics() {
        let query = QueryParser.parse("before:2024-05-01", today: queryTestToday)
        #expect(query.timeBounds(in: losAngeles) == TimeBounds(lower: nil, upper: utcMicros(2024, 5, 1, 7)))

        // Slack's after: excludes the named day, so the bound is the start of the next local day.
        let after = QueryParser.parse("after:2024-05-01", today: queryTestToday)
        #expect(after.timeBounds(in: tokyo) == TimeBounds(lower: utcMicros(2024, 5, 1, 15), upper: nil))
        #expect(after.timeBounds(in: losAngeles) == TimeBounds(lower: utcMicros(2024, 5, 2, 7), upper: nil))

        let on = QueryParser.parse("on:2024-03-10", today: queryTestToday).timeBounds(in: losAngeles)
        #expect(on == TimeBounds(lower: utcMicros(2024, 3, 10, 8), upper: utcMicros(2024, 3, 11, 7)))

        let during = QueryParser.parse("during:2024-03", today: queryTestToday).timeBounds(in: losAngeles)
        #expect(during == TimeBounds(lower: utcMicros(2024, 3, 1, 8), upper: utcMicros(2024, 4, 1, 7)))

        let year = QueryParser.parse("during:2024", today: queryTestToday).timeBounds(in: tokyo)
        #expect(year == TimeBounds(lower: utcMicros(2023, 12, 31, 15), upper: utcMicros(2024, 12, 31, 15)))
    }

    @Test func boundsIntersectAndDetectContradictions() {
        let both = QueryParser.parse("after:2024-05-01 before:2024-05-10 during:2024-05", today: queryTestToday)
        let bounds = both.timeBounds(in: tokyo)
        #expect(bounds == TimeBounds(lower: utcMicros(2024, 5, 1, 15), upper: utcMicros(2024, 5, 9, 15)))
        #expect(!bounds.isEmpty)
        #expect(bounds.contains(utcMicros(2024, 5, 1, 15)))
        #expect(!bounds.contains(utcMicros(2024, 5, 9, 15)))

        let contradictory = QueryParser.parse("after:2024-05-01 before:2024-05-02", today: queryTestToday)
        #expect(contradictory.timeBounds(in: losAngeles).isEmpty)
        #expect(QueryParser.parse("on:2024-01-01 on:2024-01-02", today: queryTestToday).timeBounds(in: tokyo).isEmpty)

        let none = QueryParser.parse("hello from:me", today: queryTestToday).timeBounds(in: tokyo)
        #expect(none.isUnbounded && !none.isEmpty)
    }

    @Test func extremeDaysDoNotTrap() {
        let last = Day.latest.epochMicrosRange(in: tokyo)
        #expect(last.upper - last.lower == 24 * hour)
        let first = Day.earliest.epochMicrosRange(in: losAngeles)
        #expect(first.upper > first.lower)
        let query = QueryParser.parse("before:0001-01-01 after:9999-12-31 during:yesterday", today: Day.earliest)
        #expect(query.timeBounds(in: losAngeles).isEmpty)
    }
}
