import ArgumentParser
import Foundation
import SlackIndex

/// Options shared by `history` and `thread`.
struct PageOptions: ParsableArguments {
    @Option(help: "How many messages per page (default 50, or what the --cursor's page had).")
    var limit: Int?

    @Option(help: ArgumentHelp("Continue from a cursor printed by an earlier page.", valueName: "cursor"))
    var cursor: String?

    @Flag(help: "Show deleted messages too.")
    var includeDeleted = false

    @Flag(help: "One line per message, cut at 300 characters (default: whole messages, wrapped).")
    var compact = false

    @Flag(help: "One JSON object per message line; the last line holds the cursors.")
    var json = false

    @Flag(help: "Print the page cache's counters to stderr.")
    var stats = false

    @Option(help: ArgumentHelp("Time zone for dates (default: the system's).", valueName: "zone"))
    var tz: String?

    var timeZone: TimeZone { tz.flatMap(TimeZone.init(identifier:)) ?? .current }

    func validate() throws {
        if let limit, !(1...Timeline.maximumLimit).contains(limit) {
            throw ValidationError("--limit must be between 1 and \(Timeline.maximumLimit).")
        }
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
            Without a position it shows the newest page. Positions are a Slack ts, a permalink, \
            CONVERSATION/TS as search hits print them, or a date: 2024-05-01, 2024-05-01T14:30, yesterday, \
            monday, may, "last week", "3 days ago" (the start of what it names, in --tz). Each page ends with \
            cursors for the previous (older) and next (newer) page: pass one to --cursor. A conversation can be \
            named by the start of its name (gen for #general) when no other name starts so; a name that \
            matches nothing lists the closest ones. With --workspace, names are that workspace's: \
            history general --workspace globex is globex's #general when other workspaces hold one too.

            Examples:
              slackindex history '#general'
              slackindex history general --before 2024-05-01 --limit 20
              slackindex history general --around 1714000000.000100
              slackindex history https://acme.slack.com/archives/C0123ABCD/p1714000000000100
              slackindex history --cursor djEgQzAxMjM… --json
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var page: PageOptions
    @OptionGroup var workspace: WorkspaceOption

    @Argument(
        help: """
            The conversation: #name, name, workspace/#name, a unique start of a name, id, or a permalink (opens the \
            page around it).
            """)
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
        guard conversation != nil || page.cursor != nil || pointConversation != nil else {
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

    /// The conversation a `--before`, `--after` or `--around` point names, when it is a hit's handle
    /// (`#dev/1714146569.016512`) or a permalink and no conversation is given.
    private var pointConversation: String? {
        [before, after, around].lazy.compactMap { $0 }
            .compactMap { TimelinePoint.parse($0, timeZone: page.timeZone)?.conversationID }.first
    }

    func run() throws {
        let archive = try global.openArchive(.readOnly)
        let conversation = conversation ?? pointConversation
        let filter = try workspace.filter(in: archive)
        try page.show(in: archive, conversation: conversation) { timeline in
            var name = conversation ?? ""
            var anchor: TimelineAnchor = oldest ? .oldest : .newest
            let zone = page.timeZone
            var target: TimelinePoint?
            if let point = TimelinePoint.parse(name, timeZone: zone), let id = point.conversationID {
                name = id
                anchor = .around(point.tsKey)
                target = point
            }
            if let point = before.flatMap({ TimelinePoint.parse($0, timeZone: zone) }) { anchor = .before(point.tsKey) }
            if let point = after.flatMap({ TimelinePoint.parse($0, timeZone: zone) }) { anchor = .after(point.tsKey) }
            if let point = around.flatMap({ TimelinePoint.parse($0, timeZone: zone) }) {
                anchor = .around(point.tsKey)
                target = point
            }
            let conversation =
                try filter?.conversation(named: name, in: archive.store)
                ?? archive.conversation(named: name, allowingPrefix: true)
            // A message named by its ts is marked; a thread reply (not in the channel view) opens its thread.
            let marked = try target.flatMap { $0.ts == nil ? nil : try archive.store.message(conversation: conversation, tsKey: $0.tsKey) }
            if let marked, !marked.flags.contains(.topLevel), let threadTS = marked.threadTS {
                Output.error("note: \(marked.ts) is a reply in a thread; showing the thread around it.")
                let thread = try timeline.thread(
                    conversation, threadTS: threadTS, at: .around(marked.tsKey), limit: page.pageSize,
                    includeDeleted: page.includeDeleted)
                return OpenedPage(page: thread, marked: marked.tsKey, isThread: true)
            }
            let history = try timeline.history(
                conversation, at: anchor, limit: page.pageSize, includeDeleted: page.includeDeleted)
            return OpenedPage(page: history, marked: marked?.tsKey, isThread: false)
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

    @Argument(help: "The conversation (#name, name, a unique start of a name, id), or a permalink / CONVERSATION/TS.")
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
        try page.show(in: archive, conversation: conversation) { timeline in
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
            let target = try archive.conversation(named: name, allowingPrefix: true)
            let thread = try timeline.thread(
                target, threadTS: threadTS, limit: page.pageSize, includeDeleted: page.includeDeleted)
            return OpenedPage(page: thread, marked: nil, isThread: true)
        }
    }
}

extension PageOptions {
    /// Reads the page `--cursor` names, or else the one `first` opens, and prints it (and the cache counters).
    /// The page size without a cursor: `--limit`, else 50.
    var pageSize: Int { limit ?? 50 }

    /// Reads the page `--cursor` names (with the cursor's page size and deleted-message choice unless flags say
    /// otherwise), or else the one `first` opens, and prints it (and the cache counters). A conversation named
    /// beside a cursor must be the cursor's.
    func show(
        in archive: Archive, conversation: String?, first: (Timeline) throws -> OpenedPage
    ) throws {
        let timeline = Timeline(archive: archive)
        let result: OpenedPage
        if let cursor {
            let parsed = try TimelineCursor(parsing: cursor)
            if let conversation {
                let named = try archive.conversation(named: TimelinePoint.parse(conversation, timeZone: timeZone)?
                    .conversationID ?? conversation)
                guard named.id == parsed.conversationID else {
                    let owner = (try? archive.conversation(named: parsed.conversationID))?.displayName ?? parsed.conversationID
                    throw CommandError(
                        description: "--cursor continues \(owner), not \(named.displayName): drop the conversation "
                            + "argument or the cursor.", status: ExitStatus.usage)
                }
            }
            let page = try timeline.page(
                parsed, limit: limit ?? parsed.limit ?? 50, includeDeleted: includeDeleted || parsed.includeDeleted)
            result = OpenedPage(page: page, marked: nil, isThread: parsed.threadTS != nil)
        } else {
            result = try first(timeline)
        }
        try PagePrinter(archive: archive, options: self).print(result)
        if stats { PagePrinter.printStats(timeline.stats()) }
    }
}

/// A page as a command opened it: the message it was asked for (marked in the output), and whether it is a thread.
struct OpenedPage {
    var page: TimelinePage
    var marked: Int64?
    var isThread: Bool
}

/// Prints timeline pages as text or JSON lines.
struct PagePrinter {
    var archive: Archive
    var options: PageOptions

    func print(_ opened: OpenedPage) throws {
        let page = opened.page
        if options.json {
            let details = try archive.store.details(of: page.messages.map(\.rowID))
            for m in page.messages {
                var line = MessageJSON(message: m, details: details[m.rowID] ?? MessageDetails())
                if m.tsKey == opened.marked { line.isTarget = true }
                Output.json(line)
            }
            Output.json(CursorsJSON(previous: page.previous?.description, next: page.next?.description))
            return
        }
        let name = page.conversation.displayName
        let title = opened.isThread ? "thread in \(name)" : name
        Output.line(Output.bold(title) + (page.conversation.topic.map { "  " + Output.dim($0) } ?? ""))
        if page.messages.isEmpty { Output.line(Output.dim("(no messages)")) }
        let details = options.compact ? [:] : try archive.store.details(of: page.messages.map(\.rowID))
        let renderer = try renderer(for: page.messages)
        for m in page.messages {
            // With a marked message every line gets a two-character gutter, the target an arrow in it.
            let gutter = opened.marked == nil ? "" : m.tsKey == opened.marked ? "▶ " : "  "
            let time = Output.localTime(m.seconds, timeZone: options.timeZone)
            let user = m.user ?? "unknown"
            var notes = m.editedTS != nil ? " (edited)" : ""
            if m.isDeleted { notes += " (deleted)" }
            if m.replyCount > 0 { notes += "  [\(m.replyCount) \(m.replyCount == 1 ? "reply" : "replies")]" }
            let head = Output.bold(gutter) + Output.dim(time) + "  " + Output.bold(user) + "  "
            if options.compact {
                Output.line(head + Output.oneLine(m.plainText, width: 300) + Output.dim(notes))
                continue
            }
            let headWidth = MessageRenderer.columns(gutter + time + "  " + user + "  ")
            // A hanging indent under the text; past half the width the text starts on the next line instead.
            let fits = headWidth <= (renderer.width ?? Int.max) / 2
            let indent = fits ? headWidth : 4
            var body = renderer.hyperlinks
                ? Output.hyperlinked(renderer.rendered(m.text, indent: indent))
                : renderer.lines(of: m.text, indent: indent)
            body += Self.extras(details[m.rowID] ?? MessageDetails())
            if body.isEmpty { body = [""] }
            body[body.count - 1] += Output.dim(notes)
            let pad = String(repeating: " ", count: indent)
            if fits {
                Output.line(head + body[0])
                for line in body.dropFirst() { Output.line(pad + line) }
            } else {
                Output.line(head)
                for line in body { Output.line(pad + line) }
            }
        }
        Output.line(Output.dim("previous: \(page.previous?.description ?? "none (oldest)")"))
        Output.line(Output.dim("next:     \(page.next?.description ?? "none (newest)")"))
    }

    /// Reactions (`👍 3  🎉 1`) and files (`📎 report.pdf (120.0 KB)`) as lines under a message.
    static func extras(_ details: MessageDetails) -> [String] {
        var lines: [String] = []
        if !details.reactions.isEmpty {
            lines.append(
                details.reactions.map { "\(MessageRenderer.emoji($0.name) ?? ":\($0.name):") \($0.count)" }
                    .joined(separator: "  "))
        }
        for file in details.files {
            let label = file.name ?? file.title ?? file.id ?? "file"
            lines.append("📎 " + label + (file.size.map { " (\(Output.bytes($0)))" } ?? ""))
        }
        return lines
    }

    /// A renderer that knows the names of the users and conversations the page's messages mention.
    func renderer(for messages: [Message]) throws -> MessageRenderer {
        var renderer = MessageRenderer(width: Output.terminalWidth())
        renderer.hyperlinks = Output.hyperlinks
        guard !options.compact else { return renderer }
        var users = Set<String>()
        var conversations = Set<String>()
        for m in messages where m.text.contains("<") {
            for piece in m.text.components(separatedBy: "<").dropFirst() {
                let target = piece.prefix { $0 != ">" && $0 != "|" }
                if target.hasPrefix("@") { users.insert(String(target.dropFirst())) }
                if target.hasPrefix("#"), !piece.prefix(while: { $0 != ">" }).contains("|") {
                    conversations.insert(String(target.dropFirst()))
                }
            }
        }
        renderer.userNames = try archive.store.archivedUsers(ids: users).mapValues(\.user.bestName)
        for id in conversations.prefix(100) {
            // An id the archive does not know stays an id.
            if let found = try? archive.conversation(named: id) { renderer.conversationNames[id] = found.name }
        }
        return renderer
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
