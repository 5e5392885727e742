import ArgumentParser
import Foundation
import SlackIndex

struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Count what the archive holds, or what one conversation holds.",
        discussion: """
            Examples:
              slackindex stats
              slackindex stats '#general' --json
              slackindex stats --gaps
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "A conversation (#name, name or id).")
    var conversation: String?

    @Flag(help: "Print one JSON object.")
    var json = false

    @Flag(help: "List stretches of history that imported sync pages point to but no imported page covers.")
    var gaps = false

    func run() throws {
        let archive = try global.openArchive(.readOnly)
        if gaps {
            let found = try archive.syncGaps()
            if json { return Output.json(["gaps": found]) }
            if found.isEmpty { Output.line("No gaps: every imported page sequence connects.") }
            for gap in found {
                Output.line(
                    "\(gap.conversation) (\(gap.conversationID)): missing from ts \(gap.newestTS) back to "
                        + (gap.olderTS.map { "ts \($0) (exclusive)" } ?? "the start of the history"))
            }
            if !found.isEmpty { throw ExitCode(ExitStatus.partial) }
            return
        }
        let target = try conversation.map { try archive.conversation(named: $0) }
        let stats = try archive.stats(conversation: target)
        if json {
            Output.json(stats)
            return
        }
        if let name = stats.conversation { Output.line(Output.bold(name) + "  (\(stats.conversationID ?? ""))") }
        Output.line("messages       \(Output.count(stats.messages))  (\(Output.count(stats.deletedMessages)) deleted)")
        Output.line("threads        \(Output.count(stats.threads)) with \(Output.count(stats.replies)) replies")
        if target == nil {
            let kinds = ConversationKind.allCases.map { "\($0.rawValue) \(stats.conversationsByKind[$0.rawValue] ?? 0)" }
            Output.line("conversations  \(stats.conversations)  (\(kinds.joined(separator: ", ")))")
            Output.line("users          \(stats.users)  (+\(stats.placeholderUsers) seen only in messages)")
        } else if let posters = stats.posters {
            Output.line("posters        \(posters)")
        }
        if let first = stats.firstSeconds, let last = stats.lastSeconds {
            Output.line("first / last   \(Output.localTime(first)) / \(Output.localTime(last))")
        }
        Output.line("database       \(Output.bytes(stats.databaseBytes))  \(archive.path)")
    }
}
