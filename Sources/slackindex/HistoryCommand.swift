import ArgumentParser
import Foundation
import SlackIndex

struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show a page of a conversation's history (top-level messages and thread broadcasts).",
        discussion: """
            Pages are read oldest to newest, ending at the newest message unless --before is given.

            Examples:
              slackindex history '#general'
              slackindex history general --before 2024-05-01 --limit 50
              slackindex history C0123ABCD --before 1714000000.000100 --json
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The conversation: #name, name or id.")
    var conversation: String

    @Option(help: "How many messages.")
    var limit = 20

    @Option(help: ArgumentHelp("Only messages before this ts or date (YYYY-MM-DD, local time).", valueName: "ts|date"))
    var before: String?

    @Flag(help: "One JSON object per message line.")
    var json = false

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be at least 1.") }
        if let before, TimeArgument.key(before, timeZone: .current) == nil {
            throw ValidationError("--before takes a Slack ts (1714000000.000100) or a date (YYYY-MM-DD).")
        }
    }

    func run() throws {
        let archive = try global.openArchive()
        let target = try archive.conversation(named: conversation)
        let position = before.flatMap { TimeArgument.key($0, timeZone: .current) }.map { TimelinePosition(tsKey: $0, rowID: Int64.min) }
        let messages = try archive.historyPage(conversation: target, direction: .before, from: position, limit: limit)
        if json {
            for m in messages { Output.json(MessageJSON(message: m)) }
            return
        }
        Output.line(Output.bold(target.displayName) + (target.topic.map { "  " + Output.dim($0) } ?? ""))
        for m in messages {
            let text = m.text.isEmpty ? m.plainText : m.plainText
            let thread = m.replyCount > 0 ? Output.dim("  [\(m.replyCount) replies]") : ""
            Output.line(
                "\(Output.dim(Output.localTime(m.seconds)))  \(Output.bold(m.user ?? "unknown"))  "
                    + Output.oneLine(text, width: 300) + thread)
        }
    }
}

/// Parses a ts or a local date into a sort key.
enum TimeArgument {
    static func key(_ text: String, timeZone: TimeZone = .current) -> Int64? {
        if let key = SlackTimestamp.parseKey(text) { return key }
        let parts = text.split(separator: "-")
        guard parts.count == 3, let y = Int(parts[0]), let mo = Int(parts[1]), let d = Int(parts[2]) else {
            return nil
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        guard let date = calendar.date(from: DateComponents(year: y, month: mo, day: d)) else { return nil }
        return Int64(date.timeIntervalSince1970) * 1_000_000
    }
}
