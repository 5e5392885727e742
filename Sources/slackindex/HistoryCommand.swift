import ArgumentParser
import Foundation
import SlackIndex

/// Options shared by `history` and `thread`.
struct PageOptions: ParsableArguments {
    @Option(help: "How many messages per page.")
    var limit = 50

    @Option(help: ArgumentHelp("Continue from a cursor printed by an earlier page.", valueName: "cursor"))
    var cursor: String?

    @Flag(help: "Show deleted messages too.")
    var includeDeleted = false

    @Flag(help: "One JSON object per message line; the last line holds the cursors.")
    var json = false

    @Flag(help: "Print the page cache's counters to stderr.")
    var stats = false

    @Option(help: ArgumentHelp("Time zone for dates (default: the system's).", valueName: "zone"))
    var tz: String?

    var timeZone: TimeZone { tz.flatMap(TimeZone.init(identifier:)) ?? .current }

    func validate() throws {
        guard limit > 0 && limit <= 10_000 else { throw ValidationError("--limit must be between 1 and 10000.") }
        if let tz, TimeZone(identifier: tz) == nil {
            throw ValidationError("--tz '\(tz)' is not a time zone; use a name such as Europe/Paris or UTC.")
        }
        if let cursor, (try? TimelineCursor(parsing: cursor)) == nil {
            throw ValidationError("--cursor '\(cursor)' is not a cursor printed by slackindex.")
        }
    }
}

struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show a page of a conversation: top-level messages and thread broadcasts, oldest to newest.",
        discussion: """
            Without a position it shows the newest page. Positions are a Slack ts, a permalink,
            CONVERSATION/TS as search hits print them, or a date: 2024-05-01, 2024-05-01T14:30, yesterday,
            monday, may, "last week", "3 days ago" (the start of what it names, in --tz). Each page ends with
            cursors for the previous (older) and next (newer) page: pass one to --cursor.

            Examples:
              slackindex history '#general'
              slackindex history general --before 2024-05-01 --limit 20
              slackindex history general --around 1714000000.000100
              slackindex history https://acme.slack.com/archives/C0123ABCD/p1714000000000100
              slackindex history --cursor djEgQzAxMjM… --json
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var page: PageOptions

    @Argument(help: "The conversation: #name, name, id, or a permalink (opens the page around it).")
    var conversation: String?

    @Option(help: ArgumentHelp("Messages before this point.", valueName: "point"))
    var before: String?

    @Option(help: ArgumentHelp("Messages at or after this point.", valueName: "point"))
    var after: String?

    @Option(help: ArgumentHelp("Messages around this point, centred on it.", valueName: "point"))
    var around: String?

    @Flag(help: "The newest page (the default).")
    var newest = false

    @Flag(help: "The oldest page.")
    var oldest = false

    func validate() throws {
        let positions = [before != nil, after != nil, around != nil, newest, oldest, page.cursor != nil]
        guard positions.filter({ $0 }).count <= 1 else {
            throw ValidationError("Give at most one of --before, --after, --around, --newest, --oldest, --cursor.")
        }
        guard conversation != nil || page.cursor != nil else {
            throw ValidationError("Name a conversation (e.g. '#general') or pass --cursor.")
        }
        for (flag, value) in [("--before", before), ("--after", after), ("--around", around)] {
            if let value, TimelinePoint.parse(value, timeZone: page.timeZone) == nil {
                throw ValidationError(
                    "\(flag) '\(value)' is not a point in time. It takes a ts (1714000000.000100), a permalink, "
                        + DateExpression.acceptedForms + ".")
            }
        }
    }

    func run() throws {
        let archive = try global.openArchive(.readOnly)
        try page.show(in: archive, title: { $0.conversation.displayName }) { timeline in
            var name = conversation ?? ""
            var anchor: TimelineAnchor = oldest ? .oldest : .newest
            let zone = page.timeZone
            if let point = TimelinePoint.parse(name, timeZone: zone), let id = point.conversationID {
                name = id
                anchor = .around(point.tsKey)
            }
            if let point = before.flatMap({ TimelinePoint.parse($0, timeZone: zone) }) { anchor = .before(point.tsKey) }
            if let point = after.flatMap({ TimelinePoint.parse($0, timeZone: zone) }) { anchor = .after(point.tsKey) }
            if let point = around.flatMap({ TimelinePoint.parse($0, timeZone: zone) }) { anchor = .around(point.tsKey) }
            let target = try archive.conversation(named: name)
            return try timeline.history(target, at: anchor, limit: page.limit, includeDeleted: page.includeDeleted)
        }
    }
}

struct ThreadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thread",
        abstract: "Show a thread: the parent message and its replies in order.",
        discussion: """
            Examples:
              slackindex thread '#general' 1714000000.000100
              slackindex thread https://acme.slack.com/archives/C0123ABCD/p1714000000000100
              slackindex thread --cursor djEgQzAxMjM… --json
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var page: PageOptions

    @Argument(help: "The conversation (#name, name, id), or a permalink / CONVERSATION/TS.")
    var conversation: String?

    @Argument(help: "The ts of the parent or of any reply.")
    var ts: String?

    func validate() throws {
        guard page.cursor != nil || conversation != nil else {
            throw ValidationError("Give a conversation and a ts, a permalink, or --cursor.")
        }
        if let ts, SlackTimestamp.parseKey(ts) == nil {
            throw ValidationError("'\(ts)' is not a Slack ts (like 1714000000.000100).")
        }
    }

    func run() throws {
        let archive = try global.openArchive(.readOnly)
        try page.show(in: archive, title: { "thread in \($0.conversation.displayName)" }) { timeline in
            var name = conversation ?? ""
            var threadTS = ts
            if threadTS == nil, let point = TimelinePoint.parse(name, timeZone: page.timeZone),
                let id = point.conversationID
            {
                name = id
                threadTS = point.ts
            }
            guard let threadTS else {
                throw ValidationError("Give the thread's ts after the conversation, or a permalink.")
            }
            let target = try archive.conversation(named: name)
            return try timeline.thread(
                target, threadTS: threadTS, limit: page.limit, includeDeleted: page.includeDeleted)
        }
    }
}

extension PageOptions {
    /// Reads the page `--cursor` names, or else the one `first` opens, and prints it (and the cache counters).
    func show(
        in archive: Archive, title: (TimelinePage) -> String, first: (Timeline) throws -> TimelinePage
    ) throws {
        let timeline = Timeline(archive: archive)
        let result =
            try cursor.map {
                try timeline.page(try TimelineCursor(parsing: $0), limit: limit, includeDeleted: includeDeleted)
            } ?? first(timeline)
        try PagePrinter(archive: archive, options: self).print(result, title: title(result))
        if stats { PagePrinter.printStats(timeline.stats()) }
    }
}

/// Prints timeline pages as text or JSON lines.
struct PagePrinter {
    var archive: Archive
    var options: PageOptions

    func print(_ page: TimelinePage, title: String) throws {
        if options.json {
            let details = try archive.details(of: page.messages.map(\.rowID))
            for m in page.messages {
                Output.json(MessageJSON(message: m, details: details[m.rowID] ?? MessageDetails()))
            }
            Output.json(CursorsJSON(previous: page.previous?.description, next: page.next?.description))
            return
        }
        Output.line(Output.bold(title) + (page.conversation.topic.map { "  " + Output.dim($0) } ?? ""))
        if page.messages.isEmpty { Output.line(Output.dim("(no messages)")) }
        for m in page.messages {
            let thread = m.replyCount > 0 ? Output.dim("  [\(m.replyCount) replies]") : ""
            let edited = m.editedTS != nil ? Output.dim(" (edited)") : ""
            let deleted = m.isDeleted ? Output.dim(" (deleted)") : ""
            Output.line(
                "\(Output.dim(Output.localTime(m.seconds, timeZone: options.timeZone)))  "
                    + "\(Output.bold(m.user ?? "unknown"))  " + Output.oneLine(m.plainText, width: 300) + edited
                    + deleted + thread)
        }
        Output.line(Output.dim("previous: \(page.previous?.description ?? "none (oldest)")"))
        Output.line(Output.dim("next:     \(page.next?.description ?? "none (newest)")"))
    }

    static func printStats(_ s: CacheStats) {
        Output.error(
            "cache: \(s.hits) hits, \(s.misses) misses, \(s.evictions) evictions, \(s.count) pages, "
                + "\(Output.bytes(Int64(s.totalCost)))")
    }
}

/// The last JSON line of a page: `{"cursors": {"previous": …, "next": …}}`.
struct CursorsJSON: Encodable {
    var previous: String?
    var next: String?

    private enum Keys: String, CodingKey { case cursors }
    private enum Inner: String, CodingKey { case previous, next }

    func encode(to encoder: any Encoder) throws {
        var outer = encoder.container(keyedBy: Keys.self)
        var inner = outer.nestedContainer(keyedBy: Inner.self, forKey: .cursors)
        try inner.encode(previous, forKey: .previous)
        try inner.encode(next, forKey: .next)
    }
}
