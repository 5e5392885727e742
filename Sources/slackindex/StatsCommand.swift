import ArgumentParser
import Foundation
import SlackIndex

struct StatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Count what the archive holds, or what one conversation or workspace holds.",
        discussion: """
            An archive of several workspaces lists each with its conversations and messages (--json: \
            "workspaces", always); --workspace counts one of them: its conversations' messages, its conversations, its \
            team's users.

            Examples:
              slackindex stats
              slackindex stats '#general' --json
              slackindex stats --workspace globex
              slackindex stats --gaps
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var workspace: WorkspaceOption

    @Argument(help: "A conversation (#name, name or id).")
    var conversation: String?

    @Flag(help: "Print one JSON object.")
    var json = false

    @Flag(help: "List stretches of history that imported sync pages point to but no imported page covers.")
    var gaps = false

    func validate() throws {
        if workspace.workspace != nil && conversation != nil {
            throw ValidationError("Give a conversation or --workspace, not both: a conversation is in one workspace.")
        }
    }

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
        let filter = try workspace.filter(in: archive)
        var stats = try filter.map { try archive.store.stats(workspace: $0.workspace) }
            ?? archive.stats(conversation: target)
        stats.workspaces = try WorkspaceCount.all(in: archive.store)
        if json { return Output.json(stats) }
        printText(stats, wholeArchive: filter == nil && target == nil, path: archive.path)
    }

    /// The counts as lines of text; the whole archive's with a line per workspace when it holds several.
    private func printText(_ stats: ArchiveStats, wholeArchive: Bool, path: String) {
        if let name = stats.conversation { Output.line(Output.bold(name) + "  (\(stats.conversationID ?? ""))") }
        if let name = stats.workspace { Output.line(Output.bold(name) + "  (\(stats.workspaceID ?? ""))") }
        Output.line("messages       \(Output.count(stats.messages))  (\(Output.count(stats.deletedMessages)) deleted)")
        Output.line("threads        \(Output.count(stats.threads)) with \(Output.count(stats.replies)) replies")
        if stats.conversation == nil {
            let kinds = ConversationKind.allCases.map { "\($0.rawValue) \(stats.conversationsByKind[$0.rawValue] ?? 0)" }
            Output.line("conversations  \(stats.conversations)  (\(kinds.joined(separator: ", ")))")
            Output.line("users          \(stats.users)  (+\(stats.placeholderUsers) seen only in messages)")
        } else if let posters = stats.posters {
            Output.line("posters        \(posters)")
        }
        if let first = stats.firstSeconds, let last = stats.lastSeconds {
            Output.line("first / last   \(Output.localTime(first)) / \(Output.localTime(last))")
        }
        if wholeArchive, stats.workspaces.count > 1 {
            for (index, w) in stats.workspaces.enumerated() {
                Output.line(
                    (index == 0 ? "workspaces     " : "               ") + "\(w.workspace.shownName) "
                        + "(\(w.workspace.teamID)): \(Output.count(w.conversations)) conversations, "
                        + "\(Output.count(w.messages)) messages")
            }
        }
        Output.line("database       \(Output.bytes(stats.databaseBytes))  \(path)")
    }
}
